package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/whitebox-lstm/whitebox/corpus"
	"github.com/whitebox-lstm/whitebox/heatmap"
	"github.com/whitebox-lstm/whitebox/internal/regfile"
	"github.com/whitebox-lstm/whitebox/reproduce"
)

// dataFiles collects -data flags; each file is Table 4's (string,label
// lines) or Table 5's (one string per line), told apart by its commas.
type dataFiles []string

func (d *dataFiles) String() string { return strings.Join(*d, ",") }
func (d *dataFiles) Set(v string) error {
	if v == "" { // here: String joins the files, so emptyFlag would miss an empty one among others
		return errors.New("empty; give a data file")
	}
	*d = append(*d, v)
	return nil
}

// reproduceCmd runs "whitebox reproduce". Its exit status: 0 success; 1 a
// failure while computing or writing the tables; 2 a usage error, found
// before anything runs (a bad flag or flag value, an unknown table or
// format, a -data file that cannot be read, is not data or is data of a
// table that is not run); 130 interrupted.
func reproduceCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("whitebox reproduce", flag.ContinueOnError)
	fs.SetOutput(stderr)
	table := fs.Int("table", 0, "reproduce only this table: 2, 3, 4 or 5 (default all)")
	format := fs.String("format", "text", "output: "+strings.Join(reproduce.Formats(), ", ")+" (html is the full report)")
	out := fs.String("out", "", "write every table in every format and report.html to this directory")
	seed := fs.Uint64("seed", reproduce.DefaultSeed, "seed of the generated data sets and of the Random baseline (any value, 0 included)")
	var data dataFiles
	fs.Var(&data, "data", "use this data file: Table 4's CSV (string,label) or Table 5's strings, one per line; may be repeated, and the strings of every file of a table are used, in order. The paper's are in "+reproduce.PaperRepository+": "+reproduce.Table4File+" and "+reproduce.Table5File)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: whitebox reproduce [-table N] [-format F] [-out DIR] [-data FILE]... [-seed S]

Recomputes the paper's Tables 2-5 and prints them beside the published values.

Exit status: 0 success, 1 a failure while computing or writing the tables,
2 a usage error (found before anything runs: a bad flag or flag value, an
unknown table or format, a -data file that cannot be read or whose kind of
data no table given to -table uses), 130 interrupted.

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "whitebox reproduce: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	tables := reproduce.AllTables()
	if set["table"] {
		if !slices.Contains(reproduce.AllTables(), *table) {
			return usageErr("-table %d: there is no such table (tables: 2, 3, 4, 5; leave -table out for all)", *table)
		}
		tables = []int{*table}
	}
	if !slices.Contains(reproduce.Formats(), *format) {
		return usageErr("unknown -format %q (formats: %s)", *format, strings.Join(reproduce.Formats(), ", "))
	}
	cfg := reproduce.Config{FSAFootnote: *out != ""}
	if set["seed"] {
		cfg.Seed = seed
	}
	for _, name := range data {
		if err := readData(name, tables, &cfg); err != nil {
			return usageErr("%v", err)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bar := corpus.NewProgress(stderr)
	cfg.Progress = bar.Set
	res, err := reproduce.Run(ctx, tables, cfg)
	bar.Finish()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "whitebox reproduce: interrupted")
			return exitInterrupted
		}
		fmt.Fprintf(stderr, "whitebox reproduce: %v\n", err)
		return 1
	}
	if *out != "" {
		files, err := writeAll(res, tables, *out)
		if err != nil {
			fmt.Fprintf(stderr, "whitebox reproduce: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %d files to %s; open %s\n", len(files), *out, filepath.Join(*out, "report.html"))
		return 0
	}
	if err := res.Write(stdout, *format, *format == "text" && colorTerminal(stdout)); err != nil {
		fmt.Fprintf(stderr, "whitebox reproduce: %v\n", err)
		return 1
	}
	if *format == "text" {
		fmt.Fprintln(stdout, "Every table in every format, and a report with the paper's values and notes on each difference: whitebox reproduce -out DIR (DIR/report.html).")
	}
	return 0
}

// readData reads the -data file name into cfg, after the strings of the
// files of its kind read before. A file with a comma is Table 4's, one
// without Table 5's; a file of a table that is not in tables is an error
// naming the file and its kind, as is a file with no strings.
func readData(name string, tables []int, cfg *reproduce.Config) error {
	if err := regfile.Flag("-data", name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w; %s", err, paperDataHint(name))
		}
		return err
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("-data: %w", err)
	}
	kind, other := 5, 4
	if bytes.ContainsRune(b, ',') {
		kind, other = 4, 5
	}
	if !slices.Contains(tables, kind) {
		hint := ""
		if slices.Contains(tables, other) {
			hint = fmt.Sprintf(" (Table %d's data is %s)", other, map[int]string{4: "string,label lines", 5: "one string per line, no commas"}[other])
		}
		return fmt.Errorf("-data %s is Table %d's data (%s), but -table %d does not use it%s", name, kind,
			map[int]string{4: "it has string,label lines", 5: "it has no commas: one string per line"}[kind], tables[0], hint)
	}
	if kind == 4 {
		rows, err := reproduce.ReadTable4(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("-data %s (Table 4 data): %w", name, err)
		}
		if len(rows) == 0 {
			return fmt.Errorf("-data %s (Table 4 data): no strings", name)
		}
		cfg.Table4Data = append(cfg.Table4Data, rows...)
		return nil
	}
	rows, err := reproduce.ReadTable5(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("-data %s (Table 5 data): %w", name, err)
	}
	if len(rows) == 0 {
		return fmt.Errorf("-data %s (Table 5 data): no strings", name)
	}
	cfg.Table5Data = append(cfg.Table5Data, rows...)
	return nil
}

// paperDataHint says where the authors' data are published, for a -data
// file that is not there: the table the file name is for, or both files.
func paperDataHint(name string) string {
	clone := "git clone " + reproduce.PaperRepository
	dir := path.Base(reproduce.PaperRepository)
	for _, d := range []struct {
		table int
		test  string
		file  string
	}{{4, "the LRP saturation test", reproduce.Table4File}, {5, "the ablation test", reproduce.Table5File}} {
		if filepath.Base(name) == path.Base(d.file) {
			return fmt.Sprintf("%s is Table %d's data (%s), published by the paper's authors with their code: get it with %s and give -data %s",
				path.Base(d.file), d.table, d.test, clone, path.Join(dir, d.file))
		}
	}
	return fmt.Sprintf("-data takes the paper's data, published by its authors with their code (%s: %s for Table 4, %s for Table 5), or a file of the same form",
		clone, path.Join(dir, reproduce.Table4File), path.Join(dir, reproduce.Table5File))
}

var extensions = map[string]string{"text": "txt", "json": "json", "markdown": "md", "html": "html", "latex": "tex"}

// writeAll writes tableN.EXT for every table and format, and report.html.
func writeAll(res *reproduce.Results, tables []int, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	write := func(name string, r *reproduce.Results, format string) error {
		var b bytes.Buffer
		if err := r.Write(&b, format, false); err != nil {
			return err
		}
		path := filepath.Join(dir, name)
		files = append(files, path)
		return os.WriteFile(path, b.Bytes(), 0o644)
	}
	for _, t := range tables {
		for _, f := range reproduce.Formats() {
			if err := write(fmt.Sprintf("table%d.%s", t, extensions[f]), res.Only(t), f); err != nil {
				return nil, err
			}
		}
	}
	return files, write("report.html", res, "html")
}

// colorTerminal reports whether w is a terminal that takes colours.
func colorTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && heatmap.IsTerminal(f)
}

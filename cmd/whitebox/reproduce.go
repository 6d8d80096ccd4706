package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/whitebox-lstm/whitebox/heatmap"
	"github.com/whitebox-lstm/whitebox/reproduce"
)

// dataFiles collects -data flags; each file is Table 4's (string,label
// lines) or Table 5's (one string per line), told apart by its commas.
type dataFiles []string

func (d *dataFiles) String() string     { return strings.Join(*d, ",") }
func (d *dataFiles) Set(v string) error { *d = append(*d, v); return nil }

func reproduceCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("whitebox reproduce", flag.ContinueOnError)
	fs.SetOutput(stderr)
	table := fs.Int("table", 0, "reproduce only this table (2, 3, 4 or 5; default all)")
	format := fs.String("format", "text", "output: "+strings.Join(reproduce.Formats, ", ")+" (html is the full report)")
	out := fs.String("out", "", "write every table in every format and report.html to this directory")
	seed := fs.Uint64("seed", reproduce.DefaultSeed, "seed of the generated data sets and of the Random baseline")
	var data dataFiles
	fs.Var(&data, "data", "use this data file: Table 4's CSV (string,label) or Table 5's strings, one per line; may be repeated")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: whitebox reproduce [-table N] [-format F] [-out DIR] [-data FILE] [-seed S]

Recomputes the paper's Tables 2-5 and prints them beside the published values.

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "whitebox reproduce: unexpected arguments %q\n", fs.Args())
		return 2
	}
	tables := reproduce.AllTables
	if *table != 0 {
		tables = []int{*table}
	}
	cfg := reproduce.Config{Seed: *seed, FSAFootnote: *out != ""}
	for _, name := range data {
		if err := readData(name, &cfg); err != nil {
			fmt.Fprintf(stderr, "whitebox reproduce: %v\n", err)
			return 2
		}
	}
	ok := false
	for _, f := range reproduce.Formats {
		ok = ok || f == *format
	}
	if !ok {
		fmt.Fprintf(stderr, "whitebox reproduce: unknown -format %q (formats: %s)\n", *format, strings.Join(reproduce.Formats, ", "))
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	bar := newProgressBar(stderr)
	cfg.Progress = bar.set
	res, err := reproduce.Run(ctx, tables, cfg)
	bar.finish()
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

func readData(name string, cfg *reproduce.Config) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if bytes.ContainsRune(b, ',') {
		if cfg.Table4Data, err = reproduce.ReadTable4(bytes.NewReader(b)); err != nil {
			return fmt.Errorf("%s (Table 4 data): %w", name, err)
		}
		if len(cfg.Table4Data) == 0 {
			return fmt.Errorf("%s: no strings", name)
		}
		return nil
	}
	if cfg.Table5Data, err = reproduce.ReadTable5(bytes.NewReader(b)); err != nil {
		return fmt.Errorf("%s (Table 5 data): %w", name, err)
	}
	if len(cfg.Table5Data) == 0 {
		return fmt.Errorf("%s: no strings", name)
	}
	return nil
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
		for _, f := range reproduce.Formats {
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

// Command benchreport runs the benchmark suite, stores the raw output under
// bench/results/ and regenerates the generated sections of BENCHMARKS.md
// from the stored runs.
//
//	go run ./bench/cmd/benchreport                 # the suite and ./kernel, -count 6
//	go run ./bench/cmd/benchreport -short          # the -short subset
//	go run ./bench/cmd/benchreport -baseline       # PyTorch/NumPy side by side
//	go run ./bench/cmd/benchreport -render         # BENCHMARKS.md only
//
// A run is stored as bench/results/<date>_<commit>_<cpu level>.txt (the
// baseline as …_baseline.txt) in the Go benchmark format, headed by
// benchfmt configuration lines (commit, go version, GOAMD64, CPU, caches,
// kernel implementation), so that benchstat reads it directly.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

type options struct {
	count     int
	bench     string
	short     bool
	benchtime string
	pkgs      string
	results   string
	md        string
	render    bool
	baseline  bool
	bcount    int
	skipLarge bool
	quick     bool
	python    string
}

func main() {
	var o options
	flag.IntVar(&o.count, "count", 6, "runs of each benchmark (benchstat needs ≥ 6 for confidence intervals)")
	flag.StringVar(&o.bench, "bench", ".", "go test -bench pattern")
	flag.BoolVar(&o.short, "short", false, "go test -short: skip the largest cases")
	flag.StringVar(&o.benchtime, "benchtime", "", "go test -benchtime (default go test's 1s)")
	flag.StringVar(&o.pkgs, "pkgs", "./bench,./kernel", "comma-separated packages to benchmark (kernels run with -cpu 1)")
	flag.StringVar(&o.results, "results", "bench/results", "where runs are stored")
	flag.StringVar(&o.md, "md", "BENCHMARKS.md", "the report to regenerate")
	flag.BoolVar(&o.render, "render", false, "only regenerate the report from the stored runs")
	flag.BoolVar(&o.baseline, "baseline", false, "run bench/baseline/baseline.py and the same workloads here, side by side")
	flag.IntVar(&o.bcount, "baseline-count", 3, "-baseline: runs of each case on each side (fewer for cases over a minute)")
	flag.BoolVar(&o.skipLarge, "skip-large", false, "-baseline: leave out IG T=4096 10000 steps and sp-fsa occlusion (about a minute each in PyTorch)")
	flag.BoolVar(&o.quick, "quick", false, "-baseline: T=256 cases only (a test run)")
	flag.StringVar(&o.python, "python", "/usr/bin/python3", "-baseline: the Python with torch and numpy")
	flag.Parse()
	if err := mainErr(o); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func mainErr(o options) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	results := filepath.Join(root, o.results)
	if !o.render {
		if err := os.MkdirAll(results, 0o755); err != nil {
			return err
		}
		start := time.Now()
		hdr := machineHeader(root, start)
		var path string
		if o.baseline {
			path, err = runBaseline(o, root, results, hdr)
		} else {
			path, err = runSuite(o, root, results, hdr)
		}
		if path != "" {
			fmt.Fprintf(os.Stderr, "benchreport: stored %s (%s)\n", path, time.Since(start).Round(time.Second))
		}
		if err != nil {
			return err
		}
	}
	return writeReport(filepath.Join(root, o.md), results)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// resultPath names a run by date, commit and CPU level, never overwriting
// an earlier run.
func resultPath(dir string, hdr *header, suffix string) string {
	date := hdr.vals["date"][:10]
	stem := fmt.Sprintf("%s_%s_%s%s", date, hdr.vals["commit"], level(), suffix)
	p := filepath.Join(dir, stem+".txt")
	for i := 2; ; i++ {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return p
		}
		p = filepath.Join(dir, fmt.Sprintf("%s-%d.txt", stem, i))
	}
}

// runSuite runs go test -bench on every package into one stored file.
func runSuite(o options, root, dir string, hdr *header) (string, error) {
	var cmds [][]string
	for _, pkg := range strings.Split(o.pkgs, ",") {
		pkg = strings.TrimSpace(pkg)
		if pkg == "" {
			continue
		}
		// -v so that skipped cases are logged with their reasons; no
		// timeout, since a -count 6 run takes longer than go test's 10m.
		args := []string{"go", "test", "-v", "-run", "^$", "-bench", o.bench, "-count", fmt.Sprint(o.count), "-timeout", "0"}
		if o.short {
			args = append(args, "-short")
		}
		switch {
		case o.benchtime != "":
			args = append(args, "-benchtime", o.benchtime)
		case pkg == "./kernel":
			// ≈ 60 cases of microseconds each: 0.3 s still gives 10⁵
			// iterations and keeps the full run within 30 minutes.
			args = append(args, "-benchtime", "0.3s")
		}
		if pkg == "./kernel" {
			args = append(args, "-cpu", "1") // kernels are single-threaded; no -N suffix
		}
		cmds = append(cmds, append(args, pkg))
	}
	var quoted []string
	for _, c := range cmds {
		quoted = append(quoted, strings.Join(c, " "))
	}
	hdr.set("command", strings.Join(quoted, "; "))
	var buf bytes.Buffer
	buf.WriteString(hdr.String())
	for _, c := range cmds {
		fmt.Fprintf(os.Stderr, "benchreport: %s\n", strings.Join(c, " "))
		if err := stream(root, c, &buf); err != nil {
			return "", err
		}
	}
	path := resultPath(dir, hdr, "")
	return path, os.WriteFile(path, clean(buf.Bytes()), 0o644)
}

// stream runs a command, copying its output to w and its progress to stderr.
func stream(dir string, args []string, w io.Writer) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Stdout = io.MultiWriter(w, os.Stderr)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// clean drops go test -v's bare benchmark-name lines.
func clean(data []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if !chatter.Match(bytes.TrimRight(line, "\r\n")) {
			out.Write(line)
		}
	}
	return out.Bytes()
}

// Generated sections of BENCHMARKS.md sit between these markers.
func markers(name string) (begin, end string) {
	return "<!-- begin benchreport:" + name + " -->\n", "<!-- end benchreport:" + name + " -->"
}

// writeReport regenerates every generated section of the report from the
// stored runs.
func writeReport(md, dir string) error {
	suite, base, err := loadResults(dir)
	if err != nil {
		return err
	}
	src, err := os.ReadFile(md)
	if err != nil {
		return err
	}
	sections := map[string]string{}
	if n := len(suite); n > 0 {
		cur := suite[n-1]
		sections["machine"] = renderMachine(cur)
		sections["results"] = renderSuite(cur)
		sections["previous"] = renderDelta(previous(suite), cur)
		sections["impl"] = renderImpl(cur)
	}
	var cur *resultFile
	if len(suite) > 0 {
		cur = suite[len(suite)-1]
	}
	var last *resultFile
	if len(base) > 0 {
		last = base[len(base)-1]
	}
	sections["baseline"] = renderBaseline(last, cur)
	out, err := replaceSections(string(src), sections)
	if err != nil {
		return fmt.Errorf("%s: %w", md, err)
	}
	return os.WriteFile(md, []byte(out), 0o644)
}

// replaceSections replaces the text between each section's markers; every
// marker pair must be present once.
func replaceSections(src string, sections map[string]string) (string, error) {
	for name, body := range sections {
		begin, end := markers(name)
		i := strings.Index(src, begin)
		j := strings.Index(src, end)
		if i < 0 || j < i {
			return "", fmt.Errorf("missing markers %q … %q", strings.TrimSpace(begin), end)
		}
		src = src[:i+len(begin)] + "\n" + strings.TrimRight(body, "\n") + "\n\n" + src[j:]
	}
	return src, nil
}

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// key identifies a benchmark within a results file: its name without the
// GOMAXPROCS suffix, the GOMAXPROCS it ran with (1 when there is no
// suffix, as go test prints it) and the engine ("go" unless the file's
// configuration says otherwise, as the PyTorch baseline's block does).
type key struct {
	name   string
	procs  int
	engine string
}

// series holds the samples of one benchmark, one value per unit and run.
type series struct {
	key   key
	pkg   string   // the package it ran in (its pkg: line)
	units []string // in first-seen order
	vals  map[string][]float64
}

// skip is a benchmark the suite skipped, with the reason it gave.
type skip struct {
	name, reason string
}

// resultFile is one stored run.
type resultFile struct {
	path   string
	config map[string]string // the first value of every file configuration key
	order  []key
	byKey  map[key]*series
	skips  []skip
}

var procsSuffix = regexp.MustCompile(`-(\d+)$`)

// splitProcs splits "BenchmarkX/a=1-2" into "BenchmarkX/a=1" and 2.
func splitProcs(name string) (string, int) {
	if m := procsSuffix.FindStringSubmatchIndex(name); m != nil {
		p, _ := strconv.Atoi(name[m[2]:m[3]])
		return name[:m[0]], p
	}
	return name, 1
}

// parseResults reads a results file in the Go benchmark format.
func parseResults(path string, data []byte) (*resultFile, error) {
	f := &resultFile{path: path, config: map[string]string{}, byKey: map[key]*series{}}
	r := benchfmt.NewReader(bytes.NewReader(data), path)
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			// A line that starts like a result but is not one, as benchstat
			// does: warn and go on.
			fmt.Fprintf(os.Stderr, "benchreport: %v\n", rec)
		case *benchfmt.Result:
			for _, c := range rec.Config {
				if _, ok := f.config[c.Key]; c.File && !ok {
					f.config[c.Key] = string(c.Value)
				}
			}
			// benchfmt drops the "Benchmark" prefix; names here keep it,
			// as go test and baseline.py print them.
			name, procs := splitProcs("Benchmark" + rec.Name.String())
			engine := rec.GetConfig("engine")
			if engine == "" {
				engine = "go"
			}
			k := key{name, procs, engine}
			s := f.byKey[k]
			if s == nil {
				s = &series{key: k, pkg: rec.GetConfig("pkg"), vals: map[string][]float64{}}
				f.byKey[k] = s
				f.order = append(f.order, k)
			}
			for _, v := range rec.Values {
				if _, ok := s.vals[v.Unit]; !ok {
					s.units = append(s.units, v.Unit)
				}
				s.vals[v.Unit] = append(s.vals[v.Unit], v.Value)
			}
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	f.skips = parseSkips(data)
	parseHeader(data, f.config)
	return f, nil
}

// parseHeader adds the run's "# key: value" header lines (header) to
// config; a configuration line of the same key (older runs wrote them so)
// comes first.
func parseHeader(data []byte, config map[string]string) {
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, headerPrefix), ": ")
		if !ok || !strings.HasPrefix(line, headerPrefix) || strings.ContainsAny(k, " \t") || k == "" {
			continue
		}
		if _, seen := config[k]; !seen {
			config[k] = strings.TrimSpace(v)
		}
	}
}

// parseSkips collects the benchmarks skipped in a go test -v run: the
// reason is logged ("    bench_test.go:61: reason") before "--- SKIP: name".
func parseSkips(data []byte) []skip {
	var out []skip
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	reason := ""
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if name, ok := strings.CutPrefix(trimmed, "--- SKIP: "); ok {
			name, _ = splitProcs(strings.TrimSpace(name))
			if !seen[name] {
				seen[name] = true
				out = append(out, skip{name, reason})
			}
			reason = ""
			continue
		}
		if strings.HasPrefix(line, "    ") {
			if _, rest, ok := strings.Cut(trimmed, ".go:"); ok {
				if _, r, ok := strings.Cut(rest, ": "); ok {
					reason = r
				}
			}
		}
	}
	return out
}

// chatter matches the lines go test -v adds that look like benchmark
// results but are not (a benchmark's bare name as it starts); they are
// dropped before a run is stored, so that benchstat reads the file without
// warnings.
var chatter = regexp.MustCompile(`^Benchmark\S*$`)

// loadResults reads every stored run in dir, oldest first (by the date in
// its header, then by name).
func loadResults(dir string) (suite, baseline []*resultFile, err error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, nil, err
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, err
		}
		f, err := parseResults(p, data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		if strings.HasSuffix(p, "_baseline.txt") {
			baseline = append(baseline, f)
		} else {
			suite = append(suite, f)
		}
	}
	byDate := func(fs []*resultFile) {
		sort.SliceStable(fs, func(i, j int) bool {
			if a, b := fs[i].config["date"], fs[j].config["date"]; a != b {
				return a < b
			}
			return fs[i].path < fs[j].path
		})
	}
	byDate(suite)
	byDate(baseline)
	return suite, baseline, nil
}

// previous returns the newest run before the last one on the same CPU
// (brand and level), or nil.
func previous(suite []*resultFile) *resultFile {
	if len(suite) < 2 {
		return nil
	}
	last := suite[len(suite)-1]
	for i := len(suite) - 2; i >= 0; i-- {
		f := suite[i]
		if f.config["cpuid-brand"] == last.config["cpuid-brand"] && f.config["x64-level"] == last.config["x64-level"] {
			return f
		}
	}
	return nil
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// fakeRun builds a results file: a header, then for every benchmark n samples
// of time/op around sec (± 1%), with allocs.
func fakeRun(header string, n int, cases map[string]float64, order []string) string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("goos: linux\ngoarch: amd64\npkg: github.com/whitebox-lstm/whitebox/bench\ncpu: Test CPU\n")
	for i := range n {
		for _, name := range order {
			sec := cases[name] * (1 + 0.01*float64(i%3-1))
			fmt.Fprintf(&b, "%s\t%d\t%.0f ns/op\t%.4g tokens/s\t0 B/op\t0 allocs/op\n", name, 10, sec*1e9, 256/sec)
		}
	}
	return b.String()
}

func mustParse(t *testing.T, name, data string) *resultFile {
	t.Helper()
	f, err := parseResults(name, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParseResults(t *testing.T) {
	data := "date: 2026-11-22T01:00:00Z\ncommit: abc1234\n" +
		"BenchmarkIG\nBenchmarkIG/net=sp-counter/T=256\n" + // go test -v chatter
		"BenchmarkIG/net=sp-counter/T=256/steps=50-2\t100\t1000000 ns/op\t12800000 token-steps/s\t0 B/op\t0 allocs/op\n" +
		"BenchmarkIG/net=sp-counter/T=256/steps=50-2\t100\t1100000 ns/op\t11636363 token-steps/s\t0 B/op\t0 allocs/op\n" +
		"    bench_test.go:61: work 1e+12 > limit 1.6e+10: issue 4 lifts the limit\n" +
		"--- SKIP: BenchmarkIG/net=sp-counter/T=4096/steps=10000\n" +
		"PASS\nok  \tgithub.com/whitebox-lstm/whitebox/bench\t12.3s\n" +
		"engine: pytorch\n" +
		"BenchmarkIG/net=sp-counter/T=256/steps=50\t1\t21000000 ns/op\n"
	f := mustParse(t, "x.txt", string(clean([]byte(data))))
	if f.config["commit"] != "abc1234" {
		t.Errorf("commit = %q", f.config["commit"])
	}
	k := key{"BenchmarkIG/net=sp-counter/T=256/steps=50", 2, "go"}
	s := f.byKey[k]
	if s == nil {
		t.Fatalf("no series %v; have %v", k, f.order)
	}
	if got := s.vals["sec/op"]; len(got) != 2 || got[0] != 1e-3 {
		t.Errorf("sec/op = %v, want [0.001 0.0011]", got)
	}
	if got := s.units; strings.Join(got, ",") != "sec/op,token-steps/s,B/op,allocs/op" {
		t.Errorf("units = %v", got)
	}
	if py := f.byKey[key{"BenchmarkIG/net=sp-counter/T=256/steps=50", 1, "pytorch"}]; py == nil || py.vals["sec/op"][0] != 0.021 {
		t.Errorf("pytorch series = %+v", py)
	}
	if len(f.skips) != 1 || f.skips[0].name != "BenchmarkIG/net=sp-counter/T=4096/steps=10000" || !strings.Contains(f.skips[0].reason, "issue 4") {
		t.Errorf("skips = %+v", f.skips)
	}
	if len(f.order) != 2 {
		t.Errorf("order = %v, want 2 series", f.order)
	}
}

func TestSplitProcs(t *testing.T) {
	for _, c := range []struct {
		in    string
		name  string
		procs int
	}{
		{"BenchmarkIG/net=a/T=16/steps=50-2", "BenchmarkIG/net=a/T=16/steps=50", 2},
		{"BenchmarkIG/net=a/T=16", "BenchmarkIG/net=a/T=16", 1},
		{"BenchmarkLRP/net=dense-h64/T=16-8", "BenchmarkLRP/net=dense-h64/T=16", 8},
	} {
		if n, p := splitProcs(c.in); n != c.name || p != c.procs {
			t.Errorf("splitProcs(%q) = %q, %d; want %q, %d", c.in, n, p, c.name, c.procs)
		}
	}
}

func TestRenderSuiteAndDelta(t *testing.T) {
	order := []string{"BenchmarkForward/net=counting/T=16-2", "BenchmarkIG/net=counting/T=16/steps=50-2"}
	old := mustParse(t, "old.txt", fakeRun("commit: old\n", 6, map[string]float64{order[0]: 1e-5, order[1]: 2e-3}, order))
	cur := mustParse(t, "new.txt", fakeRun("commit: new\n", 6, map[string]float64{order[0]: 1e-5, order[1]: 1e-3}, order))

	suite := renderSuite(cur)
	for _, want := range []string{"#### Forward (package bench, GOMAXPROCS=2)", "#### IG", "| net=counting/T=16/steps=50 | 1.000ms ± 1% |", "tokens/s"} {
		if !strings.Contains(suite, want) {
			t.Errorf("suite table lacks %q:\n%s", want, suite)
		}
	}
	delta := renderDelta(old, cur)
	// Equal samples: no difference (~); halved: −50%, p = 0.002 with 6 + 6.
	if !strings.Contains(delta, "| Forward/net=counting/T=16-2 | 10.00µs ± 1% | 10.00µs ± 1% | ~ |") {
		t.Errorf("unchanged case not marked ~:\n%s", delta)
	}
	if !strings.Contains(delta, "-50.00% | p=0.002 n=6 |") {
		t.Errorf("halved case not -50%% at p=0.002:\n%s", delta)
	}
	if !strings.Contains(delta, "geomean of the ratios of medians: -29.29%") {
		t.Errorf("geomean wrong:\n%s", delta)
	}
	if got := renderDelta(nil, cur); !strings.Contains(got, "No earlier") {
		t.Errorf("renderDelta(nil) = %q", got)
	}
}

func TestRenderImpl(t *testing.T) {
	order := []string{"BenchmarkAxpy/impl=generic/n=64", "BenchmarkAxpy/impl=avx512/n=64"}
	f := mustParse(t, "k.txt", fakeRun("", 6, map[string]float64{order[0]: 4e-8, order[1]: 1e-8}, order))
	got := renderImpl(f)
	if !strings.Contains(got, "| case | generic | avx512 |") || !strings.Contains(got, "| Axpy/n=64 | 40.00ns ± 0% | 10.00ns ± 0% (4.00×) |") {
		t.Errorf("impl table:\n%s", got)
	}
	none := mustParse(t, "n.txt", fakeRun("", 1, map[string]float64{"BenchmarkExp": 1e-8}, []string{"BenchmarkExp"}))
	if !strings.Contains(renderImpl(none), "No kernel benchmarks") {
		t.Errorf("renderImpl without impl= keys: %q", renderImpl(none))
	}
}

func TestRenderBaselineBars(t *testing.T) {
	data := "commit: abc\nengine: pytorch\ntorch: 1.13\nig-chunk: 250\n" +
		igSmall + "\t1\t230000000 ns/op\n" + igSmall + "\t1\t230000000 ns/op\n" +
		dgemm + "\t1\t20000000 ns/op\t100 GFLOP/s\n" +
		igDense + "\t1\t670000000 ns/op\n" +
		"engine: go\ntorch:\n" +
		igSmall + "\t10\t10000000 ns/op\n" + igSmall + "-2\t10\t10000000 ns/op\n" +
		igDense + "\t1\t1000000000 ns/op\t20 GFLOP/s\n" +
		peakRSS + "\t1\t104857600 B\n"
	f := mustParse(t, "b.txt", data)
	got := renderBaseline(f, nil)
	for _, want := range []string{
		"| IG/net=sp-counter/T=256/steps=1000 | 230.0ms ± ∞ | 10.00ms ± ∞ | 23.00× | 10.00ms ± ∞ |",
		"| IG 1000 steps, T = 256, sp-counter, 1 thread vs PyTorch | ≥ 20× | 23.00× | yes |",
		"| same, our 2 threads vs our 1 thread | ≥ 1.8× | 1.00× | no |",
		"| same, peak RSS of the process | ≤ 300 MiB | 100 MiB | yes |",
		"| dense H = 256, D = 128, IG 50 steps, T = 256, 1 thread vs PyTorch | ≥ 1.5× | 0.67× | no |",
		"| same, fraction of the measured 1-core DGEMM rate | ≥ 60% | 20.0% (20.00 of 100.0 GFLOP/s) | no |",
		"| Occlusion, T = 4096, sp-counter vs PyTorch (batched) | ≥ 20× | not measured | — |",
		"torch.mm, 1 thread) runs at 100.0 GFLOP/s",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("baseline section lacks %q:\n%s", want, got)
		}
	}
}

func TestReplaceSections(t *testing.T) {
	b, e := markers("results")
	src := "# Title\n\nprose\n" + b + "old\n" + e + "\nmore prose\n"
	got, err := replaceSections(src, map[string]string{"results": "new table\n"})
	if err != nil {
		t.Fatal(err)
	}
	want := "# Title\n\nprose\n" + b + "\nnew table\n\n" + e + "\nmore prose\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	again, _ := replaceSections(got, map[string]string{"results": "new table\n"})
	if again != got {
		t.Errorf("not idempotent:\n%s", again)
	}
	if _, err := replaceSections("no markers", map[string]string{"results": "x"}); err == nil {
		t.Error("missing markers: no error")
	}
}

func TestPattern(t *testing.T) {
	if got := pattern("BenchmarkIG/net=sp-counter/T=256/steps=1000"); got != "^BenchmarkIG$/^net=sp-counter$/^T=256$/^steps=1000$" {
		t.Errorf("pattern = %q", got)
	}
}

func TestPrevious(t *testing.T) {
	mk := func(date, brand string) *resultFile {
		return &resultFile{config: map[string]string{"date": date, "cpuid-brand": brand, "x64-level": "4"}}
	}
	a, b, c := mk("1", "X"), mk("2", "Y"), mk("3", "X")
	if got := previous([]*resultFile{a, b, c}); got != a {
		t.Errorf("previous = %+v, want the older run on the same CPU", got)
	}
	if got := previous([]*resultFile{b, c}); got != nil {
		t.Errorf("previous across CPUs = %+v, want nil", got)
	}
}

// The run's description is a comment to benchfmt, read back by
// parseResults, and every stored run's configuration is what go test
// itself prints (and the baseline's engine keys): benchstat compares a
// stored run with a fresh one, in one table, with no -ignore list.
func TestHeaderIsNotConfiguration(t *testing.T) {
	h := &header{}
	h.set("commit", "abc1234")
	h.set("date", "2026-11-28T00:00:00Z")
	data := h.String() + "goos: linux\nBenchmarkX-2\t10\t100 ns/op\n"
	if !strings.HasPrefix(data, "# commit: abc1234\n# date: ") {
		t.Fatalf("header:\n%s", data)
	}
	f := mustParse(t, "run.txt", data)
	if f.config["commit"] != "abc1234" || f.config["date"] != "2026-11-28T00:00:00Z" {
		t.Errorf("config %v: the header was not read back", f.config)
	}
	allowed := map[string]bool{"goos": true, "goarch": true, "pkg": true, "cpu": true,
		"engine": true, "torch": true, "numpy": true, "python": true, "threads": true, "ig-chunk": true, "occlusion-batch": true}
	stored, err := filepath.Glob("../../results/*.txt")
	if err != nil || len(stored) == 0 {
		t.Fatalf("no stored runs: %v", err)
	}
	for _, path := range stored {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r := benchfmt.NewReader(bytes.NewReader(b), path)
		for r.Scan() {
			if res, ok := r.Result().(*benchfmt.Result); ok {
				for _, c := range res.Config {
					if c.File && !allowed[c.Key] {
						t.Fatalf("%s: configuration key %q would split benchstat's tables between runs; write it as a header comment", path, c.Key)
					}
				}
			}
		}
	}
}

package main

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Names of the cases issue 4's bars are judged on.
const (
	igSmall  = "BenchmarkIG/net=sp-counter/T=256/steps=1000"
	igLarge  = "BenchmarkIG/net=sp-counter/T=4096/steps=10000"
	occLarge = "BenchmarkOcclusion/net=sp-counter/T=4096"
	igDense  = "BenchmarkIG/net=dense-h256/T=256/steps=50"
	dgemm    = "BenchmarkDGEMM/n=1024"
	// The model-import issue's cases: IG against PyTorch with Captum's algorithm.
	igImportedH256 = "BenchmarkImportedIG/model=bench_h256/T=200/steps=50"
	igImportedBi2  = "BenchmarkImportedIG/model=bench_bi2_h64/T=200/steps=50"
	peakRSS        = "BenchmarkPeakRSS/ig/net=sp-counter/T=4096/steps=10000"
	pytorch        = "pytorch"
	rssLimitMB     = 300
)

func (f *resultFile) values(name string, procs int, engine, unit string) []float64 {
	if s, ok := f.byKey[key{name, procs, engine}]; ok {
		return s.vals[unit]
	}
	return nil
}

// ratio is the median time of PyTorch over ours (1 thread): how many times
// faster we are; ok is false when either was not measured.
func ratio(f *resultFile, name string) (float64, bool) {
	py, go1 := f.values(name, 1, pytorch, "sec/op"), f.values(name, 1, "go", "sec/op")
	if len(py) == 0 || len(go1) == 0 {
		return 0, false
	}
	return median(py) / median(go1), true
}

// renderBaseline lays out the PyTorch/NumPy run and ours from one baseline
// file, and the standing against issue 4's bars (allocations from the
// suite's run cur).
func renderBaseline(f, cur *resultFile) string {
	if f == nil {
		return "No baseline run stored yet: `go run ./bench/cmd/benchreport -baseline`.\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "From `%s` (commit `%s`, %s; PyTorch %s, NumPy %s, IG chunk %s steps at T = 4096, occlusion batch %s).\n\n",
		filepath.ToSlash(filepath.Join("bench/results", filepath.Base(f.path))), f.config["commit"], f.config["date"],
		f.config["torch"], f.config["numpy"], f.config["ig-chunk"], f.config["occlusion-batch"])
	t := &table{head: []string{"case", "PyTorch / NumPy, 1 thread", "ours, GOMAXPROCS=1", "ours faster by", "ours, GOMAXPROCS=2"}}
	for _, k := range f.order {
		if k.engine != pytorch || strings.HasPrefix(k.name, "BenchmarkDGEMM") || strings.HasPrefix(k.name, "BenchmarkLeggauss") {
			continue
		}
		py := f.values(k.name, 1, pytorch, "sec/op")
		go1 := f.values(k.name, 1, "go", "sec/op")
		go2 := f.values(k.name, 2, "go", "sec/op")
		r := "not measured"
		if x, ok := ratio(f, k.name); ok {
			r = fmt.Sprintf("%.2f×", x)
		}
		cells := []string{strings.TrimPrefix(k.name, "Benchmark"), cell(py, "sec/op"), orNot(cell(go1, "sec/op")), r, cell(go2, "sec/op")}
		t.rows = append(t.rows, cells)
	}
	b.WriteString(t.String())
	b.WriteString("\n")
	if v := f.values(dgemm, 1, pytorch, "GFLOP/s"); len(v) > 0 {
		fmt.Fprintf(&b, "Machine: one 1024×1024 float64 matrix product (torch.mm, 1 thread) runs at %s GFLOP/s.\n", fmtValue(median(v), "GFLOP/s"))
	}
	for _, k := range f.order {
		if k.engine == pytorch && strings.HasPrefix(k.name, "BenchmarkLeggauss") {
			_, rest := base(k.name)
			fmt.Fprintf(&b, "numpy's leggauss for %s took %s (computed once and cached, outside the timed calls).\n", rest, fmtSeconds(median(f.values(k.name, 1, pytorch, "sec/op"))))
		}
	}
	b.WriteString("\n")
	b.WriteString(renderBars(f, cur))
	return b.String()
}

func orNot(s string) string {
	if s == "" {
		return "not measured"
	}
	return s
}

// renderBars checks issue 4's bars against the measurements.
func renderBars(f, cur *resultFile) string {
	t := &table{head: []string{"bar (issue 4)", "target", "measured", "met"}}
	add := func(bar, target string, measured float64, ok bool, format func(float64) string, met func(float64) bool) {
		m, yes := "not measured", "—"
		if ok {
			m = format(measured)
			yes = "no"
			if met(measured) {
				yes = "yes"
			}
		}
		t.rows = append(t.rows, []string{bar, target, m, yes})
	}
	times := func(x float64) string { return fmt.Sprintf("%.2f×", x) }
	atLeast := func(min float64) func(float64) bool { return func(x float64) bool { return x >= min } }

	r, ok := ratio(f, igSmall)
	add("IG 1000 steps, T = 256, sp-counter, 1 thread vs PyTorch", "≥ 20×", r, ok, times, atLeast(20))
	go1, go2 := f.values(igSmall, 1, "go", "sec/op"), f.values(igSmall, 2, "go", "sec/op")
	add("same, our 2 threads vs our 1 thread", "≥ 1.8×", safeRatio(go1, go2), len(go1) > 0 && len(go2) > 0, times, atLeast(1.8))
	r, ok = ratio(f, igLarge)
	add("IG 10 000 steps, T = 4096, sp-counter vs PyTorch (chunked)", "≥ 20×", r, ok, times, atLeast(20))
	rss := f.values(peakRSS, 1, "go", "B")
	add("same, peak RSS of the process", fmt.Sprintf("≤ %d MiB", rssLimitMB), maxOf(rss), len(rss) > 0,
		func(x float64) string { return fmt.Sprintf("%.0f MiB", x/(1<<20)) }, func(x float64) bool { return x <= rssLimitMB<<20 })
	r, ok = ratio(f, occLarge)
	add("Occlusion, T = 4096, sp-counter vs PyTorch (batched)", "≥ 20×", r, ok, times, atLeast(20))
	r, ok = ratio(f, igDense)
	add("dense H = 256, D = 128, IG 50 steps, T = 256, 1 thread vs PyTorch", "≥ 1.5×", r, ok, times, atLeast(1.5))
	gf, peak := f.values(igDense, 1, "go", "GFLOP/s"), f.values(dgemm, 1, pytorch, "GFLOP/s")
	add("same, fraction of the measured 1-core DGEMM rate", "≥ 60%", safeRatio(gf, peak), len(gf) > 0 && len(peak) > 0,
		func(x float64) string {
			return fmt.Sprintf("%.1f%% (%s of %s GFLOP/s)", 100*x, fmtValue(median(gf), ""), fmtValue(median(peak), ""))
		}, atLeast(0.6))
	run := f.values(igDense, 1, "go", "run-GFLOP/s")
	add("same, counting only the products the engine runs (it shares the input products among the α steps)", "≥ 60%", safeRatio(run, peak), len(run) > 0 && len(peak) > 0,
		func(x float64) string {
			return fmt.Sprintf("%.1f%% (%s of %s GFLOP/s)", 100*x, fmtValue(median(run), ""), fmtValue(median(peak), ""))
		}, atLeast(0.6))
	r, ok = ratio(f, igImportedH256)
	add("imported 1-layer H = 256, E = 100, IG 50 steps, T = 200, 1 thread vs PyTorch + Captum's algorithm", "≥ 2×", r, ok, times, atLeast(2))
	r, ok = ratio(f, igImportedBi2)
	add("imported 2-layer bidirectional H = 64, E = 16, same", "≥ 2×", r, ok, times, atLeast(2))
	if cur != nil {
		n, total, worst := 0, 0, 0.0
		for _, k := range cur.order {
			if a := cur.byKey[k].vals["allocs/op"]; len(a) > 0 && k.engine == "go" {
				total++
				if m := maxOf(a); m > 0 {
					n++
					worst = max(worst, m)
				}
			}
		}
		add("0 allocs/op in steady state (suite run, every case)", "0 cases allocate", float64(n), total > 0,
			func(x float64) string {
				return fmt.Sprintf("%.0f of %d cases allocate (at most %.0f allocs/op)", x, total, worst)
			},
			func(x float64) bool { return x == 0 })
	}
	return t.String()
}

// safeRatio is median(a)/median(b), 0 when either is missing.
func safeRatio(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	return median(a) / median(b)
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

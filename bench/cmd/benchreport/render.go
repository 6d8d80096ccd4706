package main

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

const confidence = 0.95

func sample(v []float64) *benchmath.Sample {
	return benchmath.NewSample(v, &benchmath.DefaultThresholds)
}

// summary is benchstat's summary of a sample: the median and the 95%
// confidence interval of the median, with no assumption on the distribution.
func summary(v []float64) benchmath.Summary {
	return benchmath.AssumeNothing.Summary(sample(v), confidence)
}

func median(v []float64) float64 { return summary(v).Center }

// fmtValue formats v in unit with 4 significant digits and an SI or IEC
// prefix: "135.5ms", "1.188M tokens/s", "1.906 MiB".
func fmtValue(v float64, unit string) string {
	switch {
	case v == 0:
		return "0"
	case strings.HasPrefix(unit, "sec/"):
		return fmtSeconds(v)
	}
	switch unit {
	case "B/op", "B":
		return benchunit.Scale(v, benchunit.Binary) + "B"
	case "allocs/op":
		return fmt.Sprintf("%.0f", v)
	}
	return benchunit.Scale(v, benchunit.Decimal)
}

func fmtSeconds(s float64) string {
	for _, u := range []struct {
		f    float64
		name string
	}{{1, "s"}, {1e-3, "ms"}, {1e-6, "µs"}} {
		if s >= u.f {
			return sig4(s/u.f) + u.name
		}
	}
	return sig4(s/1e-9) + "ns"
}

func sig4(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	case v >= 10:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// cell renders the median of v with its confidence interval, benchstat
// style: "135.5ms ± 2%" (± ∞ below 6 samples, which is why runs use
// -count 6 or more).
func cell(v []float64, unit string) string {
	if len(v) == 0 {
		return ""
	}
	s := summary(v)
	out := fmtValue(s.Center, unit)
	if unit == "allocs/op" || unit == "B/op" {
		return out
	}
	return out + " ± " + s.PctRangeString()
}

// unitOrder lists time first, then the custom metrics, then memory.
func unitOrder(units []string) []string {
	rank := func(u string) int {
		switch u {
		case "sec/op":
			return 0
		case "B/op":
			return 2
		case "allocs/op":
			return 3
		}
		return 1
	}
	out := slices.Clone(units)
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	return out
}

func unitHeader(u string) string {
	if rest, ok := strings.CutPrefix(u, "sec/"); ok {
		return "time/" + rest
	}
	return u
}

// base splits "BenchmarkIG/net=x/T=1" into "BenchmarkIG" and "net=x/T=1".
func base(name string) (string, string) {
	b, rest, _ := strings.Cut(name, "/")
	return b, rest
}

type table struct {
	head []string
	rows [][]string
}

func (t *table) String() string {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + strings.ReplaceAll(c, "|", `\|`) + " |")
		}
		b.WriteString("\n")
	}
	line(t.head)
	sep := make([]string, len(t.head))
	for i := range sep {
		sep[i] = "---"
	}
	line(sep)
	for _, r := range t.rows {
		line(r)
	}
	return b.String()
}

// renderMachine lists the header of a run.
func renderMachine(f *resultFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "From `%s`:\n\n", filepath.ToSlash(filepath.Join("bench/results", filepath.Base(f.path))))
	keys := []string{"date", "commit", "go", "goamd64", "cpuid-brand", "x64-level", "l1d", "l2", "l3", "cores", "kernel-impl", "command"}
	for _, k := range keys {
		if v, ok := f.config[k]; ok {
			fmt.Fprintf(&b, "- %s: `%s`\n", k, v)
		}
	}
	return b.String()
}

// renderSuite renders one table per benchmark function (engine go only).
func renderSuite(f *resultFile) string {
	var b strings.Builder
	groups, byGroup := groupBy(f, func(k key) (string, bool) {
		g, _ := base(k.name)
		return g, k.engine == "go"
	})
	for _, g := range groups {
		ss := byGroup[g]
		var units []string
		for _, s := range ss {
			for _, u := range s.units {
				if !slices.Contains(units, u) {
					units = append(units, u)
				}
			}
		}
		units = unitOrder(units)
		t := &table{head: []string{"case"}}
		for _, u := range units {
			t.head = append(t.head, unitHeader(u))
		}
		procs := ss[0].key.procs
		for _, s := range ss {
			if s.key.procs != procs {
				procs = 0 // mixed: say it on each row
			}
		}
		for _, s := range ss {
			_, rest := base(s.key.name)
			if procs == 0 && s.key.procs != 1 {
				rest += fmt.Sprintf(" (GOMAXPROCS=%d)", s.key.procs)
			}
			row := []string{rest}
			for _, u := range units {
				row = append(row, cell(s.vals[u], u))
			}
			t.rows = append(t.rows, row)
		}
		where := "package " + filepath.Base(ss[0].pkg)
		if procs > 0 {
			where += fmt.Sprintf(", GOMAXPROCS=%d", procs)
		}
		fmt.Fprintf(&b, "#### %s (%s)\n\n%s\n", strings.TrimPrefix(g, "Benchmark"), where, t)
	}
	if len(f.skips) > 0 {
		t := &table{head: []string{"skipped case", "reason"}}
		for _, s := range f.skips {
			t.rows = append(t.rows, []string{strings.TrimPrefix(s.name, "Benchmark"), s.reason})
		}
		fmt.Fprintf(&b, "#### Skipped (%d cases)\n\n%s\n", len(f.skips), t)
	}
	return b.String()
}

// groupBy groups a file's series by a key function, keeping first-seen
// order; keep == false drops a series.
func groupBy(f *resultFile, fn func(key) (string, bool)) ([]string, map[string][]*series) {
	var order []string
	m := map[string][]*series{}
	for _, k := range f.order {
		g, keep := fn(k)
		if !keep {
			continue
		}
		if _, ok := m[g]; !ok {
			order = append(order, g)
		}
		m[g] = append(m[g], f.byKey[k])
	}
	return order, m
}

// renderDelta compares the time/op of every benchmark in both runs:
// benchstat's delta (~ when the U-test cannot tell them apart at α = 0.05)
// and p-value, and the geometric mean of the ratios of medians.
func renderDelta(old, cur *resultFile) string {
	if old == nil {
		return "No earlier stored run on this CPU to compare with.\n"
	}
	t := &table{head: []string{"case", "old time/op", "new time/op", "delta", "p"}}
	logSum, n := 0.0, 0
	for _, k := range cur.order {
		o, ok := old.byKey[k]
		c := cur.byKey[k]
		if !ok || len(o.vals["sec/op"]) == 0 || len(c.vals["sec/op"]) == 0 {
			continue
		}
		ov, cv := o.vals["sec/op"], c.vals["sec/op"]
		cmp := benchmath.AssumeNothing.Compare(sample(ov), sample(cv))
		om, cm := median(ov), median(cv)
		name := strings.TrimPrefix(k.name, "Benchmark")
		if k.procs != 1 {
			name += fmt.Sprintf("-%d", k.procs)
		}
		t.rows = append(t.rows, []string{name, cell(ov, "sec/op"), cell(cv, "sec/op"), cmp.FormatDelta(om, cm), cmp.String()})
		if om > 0 && cm > 0 {
			logSum += math.Log(cm / om)
			n++
		}
	}
	if n == 0 {
		return fmt.Sprintf("The previous run (`%s`) has no benchmark in common with this one.\n", filepath.Base(old.path))
	}
	return fmt.Sprintf("Against `%s` (commit `%s`), time/op; geomean of the ratios of medians: %+.2f%%.\n\n%s",
		filepath.Base(old.path), old.config["commit"], (math.Exp(logSum/float64(n))-1)*100, t)
}

// renderImpl lays out the benchmarks with an impl= key side by side, one
// column per implementation, with the speed-up over generic.
func renderImpl(f *resultFile) string {
	type row struct {
		name  string
		procs int
	}
	var rows []row
	var impls []string
	vals := map[row]map[string][]float64{}
	for _, k := range f.order {
		if k.engine != "go" {
			continue
		}
		parts := strings.Split(k.name, "/")
		impl := ""
		rest := parts[:0:0]
		for _, p := range parts {
			if v, ok := strings.CutPrefix(p, "impl="); ok {
				impl = v
				continue
			}
			rest = append(rest, p)
		}
		if impl == "" {
			continue
		}
		r := row{strings.Join(rest, "/"), k.procs}
		if _, ok := vals[r]; !ok {
			vals[r] = map[string][]float64{}
			rows = append(rows, r)
		}
		if !slices.Contains(impls, impl) {
			impls = append(impls, impl)
		}
		vals[r][impl] = f.byKey[k].vals["sec/op"]
	}
	if len(rows) == 0 {
		return "No kernel benchmarks with an `impl=` key in this run (the SIMD kernels have not landed, or `./kernel` was not run).\n"
	}
	// generic first: the others are compared with it.
	slices.SortStableFunc(impls, func(a, b string) int {
		if a == "generic" {
			return -1
		}
		if b == "generic" {
			return 1
		}
		return 0
	})
	t := &table{head: append([]string{"case"}, impls...)}
	for _, r := range rows {
		name := strings.TrimPrefix(r.name, "Benchmark")
		if r.procs != 1 {
			name += fmt.Sprintf("-%d", r.procs)
		}
		cells := []string{name}
		g := vals[r]["generic"]
		for _, im := range impls {
			v := vals[r][im]
			c := cell(v, "sec/op")
			if im != "generic" && len(v) > 0 && len(g) > 0 {
				c += fmt.Sprintf(" (%.2f×)", median(g)/median(v))
			}
			cells = append(cells, c)
		}
		t.rows = append(t.rows, cells)
	}
	return "time/op by implementation, from one run; (N×) is the speed-up over generic.\n\n" + t.String()
}

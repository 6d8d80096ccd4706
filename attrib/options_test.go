package attrib

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// The zero Options explain the predicted class with the defaults: the same
// result as DefaultOptions, for every method.
func TestZeroOptions(t *testing.T) {
	net := mustNet(t, "sp-counter", whitebox.Config{})
	sym, _ := net.Task.Encode("accb")
	x := cell.OneHot(sym)
	for _, m := range Methods() {
		zero, err := Attribute(t.Context(), net.Model, m, x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		def, err := Attribute(t.Context(), net.Model, m, x, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if zero.Class != ClassIndex(zero.Prediction) || zero.Class != ClassIndex(1) {
			t.Fatalf("%v: zero Options explain class %v, prediction %d", m, zero.Class, zero.Prediction)
		}
		for i := range zero.Scores {
			if zero.Scores[i] != def.Scores[i] {
				t.Fatalf("%v: zero Options %v, DefaultOptions %v", m, zero.Scores, def.Scores)
			}
		}
		if m == IntegratedGradients && zero.IGSteps != DefaultSteps {
			t.Fatalf("IG used %d steps", zero.IGSteps)
		}
	}
	res, err := Attribute(t.Context(), net.Model, Saliency, x, Options{Class: ClassIndex(0)})
	if err != nil || res.Class != ClassIndex(0) {
		t.Fatalf("ClassIndex(0): class %v, %v", res.Class, err)
	}
}

// Every bad value is an error naming it; none panics or is replaced.
func TestBadOptions(t *testing.T) {
	net := mustNet(t, "sp-counter", whitebox.Config{})
	x := cell.OneHot([]int{0, 1})
	for _, c := range []struct {
		m    Method
		opt  Options
		want string
	}{
		{Saliency, Options{Class: ClassIndex(-1)}, "class -1"},
		{Saliency, Options{Class: ClassIndex(2)}, "class 2 is out of range"},
		{IntegratedGradients, Options{Class: ClassIndex(7)}, "class 7 is out of range"},
		{IntegratedGradients, Options{Steps: -2}, "IG steps -2"},
		{IntegratedGradients, Options{Steps: MaxSteps + 1}, "IG steps"},
		{IntegratedGradients, Options{Tolerance: -1}, "tolerance -1"},
		{IntegratedGradients, Options{Tolerance: math.NaN()}, "tolerance NaN"},
		{IntegratedGradients, Options{Tolerance: 2}, "tolerance 2"},
		{IntegratedGradients, Options{Steps: AutoSteps, MaxAutoSteps: 4}, "MaxAutoSteps 4"},
		{LRP, Options{Epsilon: new(float64(-1))}, "epsilon -1"},
		{LRP, Options{Epsilon: new(float64(math.Inf(1)))}, "epsilon +Inf"},
		{LRP, Options{Epsilon: new(float64(math.NaN()))}, "epsilon NaN"},
		{LRP, Options{LRPBias: 0.5}, "bias factor 0.5"},
		{LRP, Options{LRPBias: math.NaN()}, "bias factor NaN"},
		{Occlusion, Options{Budget: -1}, "Budget -1"},
		{Occlusion, Options{Workers: -3}, "Workers -3"},
		{Method(9), Options{}, "unknown method 9"},
		{Method(-1), Options{}, "unknown method -1"},
	} {
		_, err := Attribute(t.Context(), net.Model, c.m, x, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %+v: %v, want an error containing %q", c.m, c.opt, err, c.want)
		}
	}
	if _, err := Attribute(t.Context(), nil, Saliency, x, Options{}); err == nil {
		t.Error("nil model accepted")
	}
	var nilNet *cell.Model
	if _, err := Attribute(t.Context(), nilNet, Saliency, x, Options{}); err == nil {
		t.Error("nil *cell.Model accepted")
	}
	if err := mustExplainer(t, net.Model).Attribute(t.Context(), Saliency, x, Options{}, nil); err == nil {
		t.Error("nil Result accepted")
	}
}

// ε = 0 can be asked for (Epsilon: new(0.0)). A zero denominator is then an
// error (sp-fsa has zero pre-activations), else the scores are finite and
// differ from the default ε's (a random dense network).
func TestEpsilonZero(t *testing.T) {
	net := mustNet(t, "sp-fsa", whitebox.Config{})
	sym, _ := net.Task.Encode("aacb")
	if _, err := Attribute(t.Context(), net.Model, LRP, cell.OneHot(sym), Options{Epsilon: new(0.0)}); err == nil || !strings.Contains(err.Error(), "zero") {
		t.Fatalf("ε = 0 on sp-fsa: %v", err)
	}
	var wx, wh, b, wy, by []float64
	for _, v := range []*[]float64{&wx, &wh, &b, &wy, &by} {
		n := map[*[]float64]int{&wx: 24, &wh: 36, &b: 12, &wy: 6, &by: 2}[v]
		for i := range n {
			*v = append(*v, math.Sin(float64(3*i+n)))
		}
	}
	dense := oneLayer(t, 3, 2, 2, wx, wh, b, wy, by)
	x := cell.Dense([]float64{0.3, -1, 2, 0.5, -0.7, 1.1}, 3)
	zero, err := Attribute(t.Context(), dense, LRP, x, Options{Epsilon: new(0.0)})
	if err != nil {
		t.Fatal(err)
	}
	def, _ := Attribute(t.Context(), dense, LRP, x, Options{})
	same := true
	for i := range zero.Scores {
		if math.IsNaN(zero.Scores[i]) || math.IsInf(zero.Scores[i], 0) {
			t.Fatalf("ε = 0: %v", zero.Scores)
		}
		same = same && zero.Scores[i] == def.Scores[i]
	}
	if same {
		t.Fatalf("ε = 0 gave the default ε's scores %v", def.Scores)
	}
}

// AutoSteps finds the smallest doubling rule within the tolerance; a fixed
// rule that misses it is flagged.
func TestAutoSteps(t *testing.T) {
	net := mustNet(t, "sp-counter", whitebox.Config{})
	sym, _ := net.Task.Encode(strings.Repeat("ab", 100))
	x := cell.OneHot(sym)
	fixed, err := Attribute(t.Context(), net.Model, IntegratedGradients, x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !fixed.GapExceeded || !strings.Contains(fixed.Warning(), "completeness gap") {
		t.Fatalf("50 steps on 200 symbols: gap %v not flagged", fixed.Delta)
	}
	var last, total int
	auto, err := Attribute(t.Context(), net.Model, IntegratedGradients, x, Options{Steps: AutoSteps, Tolerance: 1e-3,
		Progress: func(done, tot int) {
			if done < last {
				t.Errorf("progress went back from %d to %d", last, done)
			}
			last, total = done, tot
		}})
	if err != nil {
		t.Fatal(err)
	}
	diff := sum(auto.Scores) - auto.Delta
	if auto.GapExceeded || math.Abs(auto.Delta) > 1e-3*math.Abs(diff) || auto.Warning() != "" {
		t.Fatalf("auto: %d steps, gap %v of %v", auto.IGSteps, auto.Delta, diff)
	}
	if last != total || total < auto.IGSteps {
		t.Fatalf("progress ended at %d/%d", last, total)
	}
	// The rule before it misses the tolerance, and the result is that
	// rule's: the same bits as asking for it directly.
	half, _ := Attribute(t.Context(), net.Model, IntegratedGradients, x, Options{Steps: auto.IGSteps / 2, Tolerance: 1e-3})
	if !half.GapExceeded {
		t.Fatalf("%d steps already met the tolerance", auto.IGSteps/2)
	}
	direct, _ := Attribute(t.Context(), net.Model, IntegratedGradients, x, Options{Steps: auto.IGSteps})
	for i := range direct.Scores {
		if direct.Scores[i] != auto.Scores[i] {
			t.Fatal("AutoSteps' result differs from its rule asked directly")
		}
	}
	capped, _ := Attribute(t.Context(), net.Model, IntegratedGradients, x, Options{Steps: AutoSteps, Tolerance: 1e-12, MaxAutoSteps: 16})
	if capped.IGSteps != 16 || !capped.GapExceeded || !strings.Contains(capped.Warning(), "cap") {
		t.Fatalf("capped: %d steps, %q", capped.IGSteps, capped.Warning())
	}
}

// An Explainer used by two goroutines at once fails fast instead of
// deadlocking or mixing results.
func TestExplainerConcurrentUse(t *testing.T) {
	net := mustNet(t, "sp-counter", whitebox.Config{})
	sym, _ := net.Task.Encode(strings.Repeat("abcd", 64))
	e := mustExplainer(t, net.Model)
	var wg sync.WaitGroup
	var mu sync.Mutex
	busy := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var res Result
			err := e.Attribute(context.Background(), IntegratedGradients, cell.OneHot(sym), Options{Steps: 2000}, &res)
			if err != nil && strings.Contains(err.Error(), "two goroutines") {
				mu.Lock()
				busy++
				mu.Unlock()
			} else if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if busy == 0 {
		t.Log("no overlap happened (the calls were too fast to meet)")
	}
}

// BenchmarkAutoSteps: the cost of AutoSteps (8, 16, … nodes until the gap
// is within 1e-3) against the fixed rule it ends with, which reaches the
// same gap in one run: the doubling costs at most about twice as much.
func BenchmarkAutoSteps(b *testing.B) {
	net, err := whitebox.New("sp-counter", whitebox.Config{})
	if err != nil {
		b.Fatal(err)
	}
	sym, _ := net.Task.Encode(strings.Repeat("abcd", 64))
	x := cell.OneHot(sym)
	e := mustExplainer(b, net.Model)
	var res Result
	if err := e.Attribute(b.Context(), IntegratedGradients, x, Options{Steps: AutoSteps}, &res); err != nil {
		b.Fatal(err)
	}
	fixed := res.IGSteps
	for _, c := range []struct {
		name  string
		steps int
	}{{"auto", AutoSteps}, {"fixed-same-gap", fixed}} {
		b.Run(c.name, func(b *testing.B) {
			opt := Options{Steps: c.steps}
			b.ReportAllocs()
			for b.Loop() {
				if err := e.Attribute(b.Context(), IntegratedGradients, x, opt, &res); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.IGSteps), "steps")
		})
	}
}

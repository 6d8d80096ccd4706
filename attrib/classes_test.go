package attrib

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// sameResult reports how got differs from want, bit for bit, or "".
func sameResult(got, want *Result) string {
	switch {
	case got.Method != want.Method, got.Class != want.Class, got.Prediction != want.Prediction, got.Len != want.Len:
		return fmt.Sprintf("header %v/%v/%d/%d, want %v/%v/%d/%d", got.Method, got.Class, got.Prediction, got.Len, want.Method, want.Class, want.Prediction, want.Len)
	case !sameBits(got.Logits, want.Logits):
		return "logits"
	case !sameBits(got.Features, want.Features) || (got.Features == nil) != (want.Features == nil):
		return "features"
	case !sameBits(got.Scores, want.Scores):
		return "scores"
	case math.Float64bits(got.Delta) != math.Float64bits(want.Delta):
		return fmt.Sprintf("delta %v, want %v", got.Delta, want.Delta)
	case !sameBits([]float64{got.Relevance.Output, got.Relevance.Bias, got.Relevance.Initial},
		[]float64{want.Relevance.Output, want.Relevance.Bias, want.Relevance.Initial}):
		return fmt.Sprintf("relevance %+v, want %+v", got.Relevance, want.Relevance)
	case got.IGSteps != want.IGSteps, got.GapExceeded != want.GapExceeded, got.Tolerance != want.Tolerance, got.autoCapped != want.autoCapped:
		return fmt.Sprintf("IG steps/gap %d/%v/%v, want %d/%v/%v", got.IGSteps, got.GapExceeded, got.Tolerance, want.IGSteps, want.GapExceeded, want.Tolerance)
	case got.Warning() != want.Warning():
		return "warning"
	}
	return ""
}

// randomStackedModel is a model with random weights, the given
// shape, head and classifier (a hidden layer of 5 units with act).
func randomStackedModel(t testing.TB, rng *rand.Rand, in, h, layers int, bi bool, c int, head cell.Head, act cell.Activation) *cell.Model {
	t.Helper()
	dirs := 1
	if bi {
		dirs = 2
	}
	u := func(n int, s float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = (2*rng.Float64() - 1) * s
		}
		return v
	}
	p := cell.Params{Input: in, Hidden: h, Layers: layers, Bidirectional: bi, Classes: c, Head: head, Act: act}
	for k := range layers {
		li := in
		if k > 0 {
			li = h * dirs
		}
		for range dirs {
			p.Cells = append(p.Cells, cell.CellParams{Wih: u(4*h*li, 1.5/math.Sqrt(float64(h))), Whh: u(4*h*h, 1.5/math.Sqrt(float64(h))), B: u(4*h, 0.5)})
		}
	}
	p.Wy, p.By = u(c*h*dirs, 1), u(c, 0.3)
	if act != cell.ActNone {
		p.Units, p.W1, p.B1, p.Wy = 5, u(5*h*dirs, 1), u(5, 0.5), u(c*5, 1)
	}
	s, err := cell.NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// allClassesCase is a model and an input for TestAttributeAllBits.
type allClassesCase struct {
	name  string
	model Model
	x     cell.Input
}

func allClassesCases(t *testing.T) []allClassesCase {
	rng := rand.New(rand.NewPCG(71, 72))
	var cases []allClassesCase
	for _, name := range whitebox.Names() {
		net := mustNet(t, name, whitebox.Config{})
		str, err := net.Task.Generate(rng, 9, 14)
		if err != nil {
			t.Fatal(err)
		}
		sym, err := net.Task.Encode(str)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, allClassesCase{name, net.Model, cell.OneHot(sym)})
	}
	dense := func(steps, d int) cell.Input {
		v := make([]float64, steps*d)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return cell.Dense(v, steps)
	}
	cases = append(cases, allClassesCase{"dense/H=40", randomNetwork(t, rng, 40, 5, 3), dense(23, 5)})
	for _, s := range []struct {
		layers int
		bi     bool
		head   cell.Head
		act    cell.Activation
	}{{1, false, cell.HeadHN, cell.ActNone}, {2, true, cell.HeadMean, cell.ActTanh}, {1, true, cell.HeadMax, cell.ActReLU}, {2, false, cell.HeadLast, cell.ActNone}, {1, true, cell.HeadHNBF, cell.ActNone}} {
		m := randomStackedModel(t, rng, 4, 6, s.layers, s.bi, 4, s.head, s.act)
		cases = append(cases, allClassesCase{fmt.Sprintf("stacked/L=%d bi=%v %v+%v", s.layers, s.bi, s.head, s.act), m, dense(19, 4)})
	}
	return cases
}

// TestAttributeAllBits: AttributeAll's result of every class is the bits
// of Attribute with that class, for every method with a multi-class path,
// on white-box networks (one-hot), a dense Network and models of
// every head, with 1, 2 and 3 workers, the default budget and the
// smallest that fits (checkpointed IG plans with one lane), fixed and
// automatic IG rules, a Baseline on models (and on every model for
// DeepLIFT, whose reference it is); the same MultiResult reused.
func TestAttributeAllBits(t *testing.T) {
	methods := []Method{Occlusion, Saliency, GradientXInput, IntegratedGradients, LRP, DeepLIFT}
	for _, tc := range allClassesCases(t) {
		c := tc.model.Classes()
		single, all := mustExplainer(t, tc.model), mustExplainer(t, tc.model)
		var multi MultiResult
		s, _ := tc.model.(*cell.Model)
		stacked := s != nil && s.LRPRule() == cell.LRPArras // a trained model's: a Baseline, LRP's bias factor
		for _, m := range methods {
			opts := []Options{{}, {Steps: 17, Workers: 2}, {Steps: 33, Workers: 3}, {Steps: AutoSteps, Tolerance: 1e-4, Workers: 2}}
			if testing.Short() {
				opts = []Options{{Steps: 17, Workers: 2}, {Steps: AutoSteps, Workers: 2}}
			}
			if m == IntegratedGradients || m == Occlusion {
				opts = append(opts, Options{Steps: 40, Workers: 2, Budget: smallestBudgetAll(t, all, m, tc.x, Options{Steps: 40, Workers: 2})})
				if stacked {
					base := make([]float64, tc.model.Input())
					for i := range base {
						base[i] = 0.1 * float64(i+1)
					}
					opts = append(opts, Options{Steps: 20, Baseline: base})
				}
			}
			if m == DeepLIFT {
				base := make([]float64, tc.model.Input())
				for i := range base {
					base[i] = 0.3 - 0.2*float64(i%4)
				}
				// The last budget fits one class's traces but not every
				// class's multipliers at once: one call per class.
				opts = []Options{{}, {Baseline: base}, {Budget: all.deepLIFTBytes(tc.x.Len())}}
			}
			if m == LRP && stacked {
				opts = append(opts, Options{LRPBias: 1, Epsilon: new(float64(0.01))})
			}
			for _, opt := range opts {
				where := fmt.Sprintf("%s %v steps=%d workers=%d budget=%d baseline=%v", tc.name, m, opt.Steps, opt.Workers, opt.Budget, opt.Baseline != nil)
				if err := all.AttributeAll(context.Background(), m, tc.x, opt, &multi); err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				if len(multi.Results) != c {
					t.Fatalf("%s: %d results, want %d", where, len(multi.Results), c)
				}
				for k := range c {
					one := opt
					one.Class = ClassIndex(k)
					var want Result
					if err := single.Attribute(t.Context(), m, tc.x, one, &want); err != nil {
						t.Fatalf("%s class %d: %v", where, k, err)
					}
					if diff := sameResult(&multi.Results[k], &want); diff != "" {
						t.Errorf("%s class %d: %s differ from the single-class call", where, k, diff)
					}
				}
			}
		}
	}
}

// smallestBudgetAll is the smallest power of two AttributeAll accepts for
// method m on x.
func smallestBudgetAll(t *testing.T, e *Explainer, m Method, x cell.Input, opt Options) int64 {
	t.Helper()
	var res MultiResult
	for b := int64(1); b < 1<<40; b *= 2 {
		opt.Budget = b
		err := e.AttributeAll(context.Background(), m, x, opt, &res)
		if err == nil {
			return b
		}
		if !strings.Contains(err.Error(), "too small") && !strings.Contains(err.Error(), "more than the budget") {
			t.Fatal(err)
		}
	}
	t.Fatal("no budget fits")
	return 0
}

// TestAttributeAllAllocations: a reused Explainer and MultiResult allocate
// nothing in the steady state, on a white-box network and a trained-shape model.
func TestAttributeAllAllocations(t *testing.T) {
	net := mustNet(t, "sp-counter", whitebox.Config{})
	sym, _ := net.Task.Encode("abcdabcdacbd")
	rng := rand.New(rand.NewPCG(73, 74))
	s := randomStackedModel(t, rng, 4, 6, 2, true, 3, cell.HeadMean, cell.ActNone)
	v := make([]float64, 9*4)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	for _, tc := range []struct {
		model Model
		x     cell.Input
	}{{net.Model, cell.OneHot(sym)}, {s, cell.Dense(v, 9)}} {
		e := mustExplainer(t, tc.model)
		var res MultiResult
		for _, m := range append(Methods()[:len(Methods()):len(Methods())], DeepLIFT) {
			for _, opt := range []Options{{}, {Steps: AutoSteps}} {
				f := func() {
					if err := e.AttributeAll(context.Background(), m, tc.x, opt, &res); err != nil {
						t.Fatal(err)
					}
				}
				f()
				if a := testing.AllocsPerRun(5, f); a != 0 {
					t.Errorf("%T %v steps=%d: %v allocs per run, want 0", tc.model, m, opt.Steps, a)
				}
			}
		}
	}
}

// TestAttributeAllErrors: a class in the options, a nil MultiResult and a
// nil model are refused; DeepLIFT and CD give each class its single-class
// call's error or result.
func TestAttributeAllErrors(t *testing.T) {
	net := mustNet(t, "counting", whitebox.Config{})
	sym, _ := net.Task.Encode("aab")
	x := cell.OneHot(sym)
	e := mustExplainer(t, net.Model)
	var res MultiResult
	if err := e.AttributeAll(context.Background(), Saliency, x, Options{Class: ClassIndex(0)}, &res); err == nil || !strings.Contains(err.Error(), "Options.Class") {
		t.Errorf("a class in the options: %v", err)
	}
	if err := e.AttributeAll(context.Background(), Saliency, x, Options{}, nil); err == nil {
		t.Error("a nil MultiResult: no error")
	}
	if _, err := NewExplainer(nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("a nil model: %v", err)
	}
	if err := e.AttributeAll(context.Background(), LRP, x, Options{Budget: 8}, &res); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("a trace over the budget: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, m := range Methods() {
		if err := e.AttributeAll(ctx, m, x, Options{}, &res); err == nil {
			t.Errorf("%v: a cancelled context: no error", m)
		}
	}
	for _, m := range []Method{DeepLIFT, ContextualDecomposition} {
		errAll := e.AttributeAll(context.Background(), m, x, Options{}, &res)
		_, errOne := Attribute(t.Context(), net.Model, m, x, Options{Class: ClassIndex(0)})
		if (errAll == nil) != (errOne == nil) {
			t.Errorf("%v: AttributeAll error %v, single-class error %v", m, errAll, errOne)
		}
	}
}

// TestAttributeAllCancel: a context cancelled during IG or occlusion of
// every class stops the call with context.Canceled; progress counts one
// total for all the classes; the Explainer works afterwards, with the bits
// of the single-class calls.
func TestAttributeAllCancel(t *testing.T) {
	net := mustNet(t, "sp-counter", whitebox.Config{})
	sym, _ := net.Task.Encode("abcdabcdabcdabcdabcdabcdabcdabcd")
	x := cell.OneHot(sym)
	rng := rand.New(rand.NewPCG(75, 76))
	s := randomStackedModel(t, rng, 4, 6, 1, true, 3, cell.HeadHN, cell.ActNone)
	v := make([]float64, 40*4)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	for _, tc := range []struct {
		model Model
		x     cell.Input
	}{{net.Model, x}, {s, cell.Dense(v, 40)}} {
		e := mustExplainer(t, tc.model)
		var res MultiResult
		for _, m := range []Method{IntegratedGradients, Occlusion} {
			ctx, cancel := context.WithCancel(context.Background())
			opt := Options{Steps: 500, Workers: 2}
			total := 500
			if m == Occlusion {
				total = tc.x.Len()
			}
			calls := 0
			opt.Progress = func(done, n int) {
				calls++
				if n != total {
					t.Errorf("%T %v: progress total %d, want %d", tc.model, m, n, total)
				}
				cancel()
			}
			err := e.AttributeAll(ctx, m, tc.x, opt, &res)
			if m == IntegratedGradients && !errors.Is(err, context.Canceled) {
				t.Errorf("%T %v: error %v, want context.Canceled", tc.model, m, err)
			}
			if calls == 0 {
				t.Errorf("%T %v: no progress reported", tc.model, m)
			}
			opt.Progress = nil
			if err := e.AttributeAll(context.Background(), m, tc.x, opt, &res); err != nil {
				t.Fatalf("%T %v after cancellation: %v", tc.model, m, err)
			}
			for k := range tc.model.Classes() {
				one := opt
				one.Class = ClassIndex(k)
				var want Result
				if err := e.Attribute(t.Context(), m, tc.x, one, &want); err != nil {
					t.Fatal(err)
				}
				if diff := sameResult(&res.Results[k], &want); diff != "" {
					t.Errorf("%T %v class %d after cancellation: %s", tc.model, m, k, diff)
				}
			}
			cancel()
		}
	}
}

// TestAttributeAllBadInput: an empty or malformed input gets the error of
// the single-class call, for every method and both engines.
func TestAttributeAllBadInput(t *testing.T) {
	net := mustNet(t, "sp-counter", whitebox.Config{})
	rng := rand.New(rand.NewPCG(77, 78))
	s := randomStackedModel(t, rng, 4, 6, 1, true, 3, cell.HeadHN, cell.ActNone)
	for _, tc := range []struct {
		model Model
		x     cell.Input
	}{{net.Model, cell.OneHot(nil)}, {s, cell.Dense(nil, 0)}, {net.Model, cell.OneHot([]int{0, 99})}, {s, cell.Dense([]float64{1, 2, 3}, 1)}} {
		for _, m := range AllMethods() {
			var res MultiResult
			errAll := mustExplainer(t, tc.model).AttributeAll(context.Background(), m, tc.x, Options{}, &res)
			_, errOne := Attribute(t.Context(), tc.model, m, tc.x, Options{Class: ClassIndex(0)})
			if errAll == nil || errOne == nil || errAll.Error() != errOne.Error() {
				t.Errorf("%T %v: AttributeAll error %v, single-class error %v", tc.model, m, errAll, errOne)
			}
		}
	}
}

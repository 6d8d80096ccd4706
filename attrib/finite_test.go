package attrib

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// overflowModel is a one-layer LSTM (E = 2, H = 2, C = 2) whose gates
// saturate, so that its outputs are about 0.8, and whose classifier's
// weights are wy (class 0) and −wy (class 1): at wy = 1.7e308 the logits
// are +Inf and −Inf, from finite weights. wih is every weight_ih.
func overflowModel(t *testing.T, wih, wy float64) *cell.Model {
	t.Helper()
	fill := func(n int, v float64) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = v
		}
		return s
	}
	wi := fill(16, wih)
	for i := 1; i < len(wi); i += 2 {
		wi[i] = math.Abs(wih) // row q is [wih, |wih|]: with wih < 0, +Inf and −Inf on a huge input
	}
	s, err := cell.NewModel(cell.Params{Input: 2, Hidden: 2, Layers: 1, Classes: 2,
		Cells: []cell.CellParams{{Wih: wi, Whh: fill(16, 0.1), B: fill(8, 2)}},
		Wy:    []float64{wy, wy, -wy, -wy}, By: []float64{0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A logit that overflows ends the call with a *NonFiniteError naming the
// class and the classifier (its input was finite), for every method, one
// class or all, with a baseline or not, on a model and on a
// one-layer model with the rule hao; never a result of ±Inf and NaN (issue 39, case 2).
func TestNonFiniteLogits(t *testing.T) {
	s := overflowModel(t, 0.5, 1.7e308)
	x := cell.Dense([]float64{1, 0.5, 0.3, 1, 0.2, 0.7}, 3)
	net := oneLayer(t, 2, 2, 2, make([]float64, 16), make([]float64, 16),
		[]float64{3, 3, 3, 3, 3, 3, 3, 3}, []float64{1.7e308, 1.7e308, -1.7e308, -1.7e308}, []float64{0, 0})
	check := func(what string, err error) {
		t.Helper()
		var nf *NonFiniteError
		if !errors.As(err, &nf) {
			t.Errorf("%s: %v, want a *NonFiniteError", what, err)
			return
		}
		if nf.What != "logit" || nf.Class != 0 || !math.IsInf(nf.Value, 1) || !nf.HeadFinite || nf.Position != -1 ||
			!strings.Contains(err.Error(), "the logit of class 0 is +Inf: the classifier overflows float64 (its input, the LSTM's output after the head, is finite)") {
			t.Errorf("%s: %+v: %v", what, nf, err)
		}
	}
	for _, m := range AllMethods() {
		check("stacked "+m.String(), attr(s, m, x, Options{}))
		check("stacked all "+m.String(), attrAll(s, m, x, Options{}))
		check("network "+m.String(), attr(net, m, cell.OneHot([]int{0, 1, 1}), Options{}))
		check("network all "+m.String(), attrAll(net, m, cell.OneHot([]int{0, 1, 1}), Options{}))
		if m == IntegratedGradients || m == Occlusion || m == DeepLIFT {
			check("baseline "+m.String(), attr(s, m, x, Options{Baseline: []float64{0.1, 0.2}}))
			check("baseline all "+m.String(), attrAll(s, m, x, Options{Baseline: []float64{0.1, 0.2}}))
		}
		if m == IntegratedGradients {
			check("auto steps", attr(s, m, x, Options{Steps: AutoSteps}))
			check("auto steps all", attrAll(s, m, x, Options{Steps: AutoSteps}))
		}
		if m == ContextualDecomposition {
			check("span", attr(s, m, x, Options{Span: &Span{Start: 0, Stop: 1}}))
		}
	}
	// The class's name, given, is the message's.
	err := attr(s, Saliency, x, Options{})
	var nf *NonFiniteError
	if errors.As(err, &nf) {
		nf.ClassName = "True"
		if !strings.Contains(nf.Error(), `the logit of class "True" is +Inf`) {
			t.Errorf("with its name: %v", nf)
		}
	}
}

// Logits that are finite and scores that are not: a classifier's weights
// of 1e307 and layer-0 weights of 1e10 on inputs of 1e-10 make a
// gradient of about 1e315. The error names the method and the position.
func TestNonFiniteScores(t *testing.T) {
	s := overflowModel(t, 1e10, 1e307)
	x := cell.Dense([]float64{1e-10, 1e-10, 2e-11, 3e-11}, 2)
	for _, m := range []Method{Saliency, GradientXInput} {
		for _, all := range []bool{false, true} {
			err := attr(s, m, x, Options{})
			if all {
				err = attrAll(s, m, x, Options{})
			}
			var nf *NonFiniteError
			if !errors.As(err, &nf) || nf.What != "score" || nf.Method != m || nf.Position < 0 ||
				!strings.Contains(err.Error(), "attrib: the scores of "+m.String()+" for class 0 are not finite: ") {
				t.Errorf("%v (all %v): %v", m, all, err)
			}
		}
	}
}

// Scores, the span score and the delta are checked after the logits, each
// naming the method, the class and, for a score, its position.
func TestNonFiniteResult(t *testing.T) {
	for _, c := range []struct {
		res  Result
		want string
	}{
		{Result{Method: Occlusion, Class: ClassIndex(1), Scores: []float64{0, math.NaN(), math.Inf(1)}}, "attrib: the scores of occlusion for class 1 are not finite: NaN at position 1"},
		{Result{Method: ContextualDecomposition, Scores: []float64{1}, SpanScore: math.Inf(-1)}, "attrib: the span score of cd for class 0 is -Inf, not finite"},
		{Result{Method: IntegratedGradients, Scores: []float64{1}, Delta: math.NaN()}, "attrib: the delta of ig for class 0 is NaN, not finite"},
	} {
		var err error
		(&Explainer{}).checkFinite(&err, c.res.Method, cell.Input{}, &c.res)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	// A finite result, and an earlier error, are left alone.
	var err error
	(&Explainer{}).checkFinite(&err, Saliency, cell.Input{}, &Result{Scores: []float64{1, -2}, Logits: []float64{3}})
	if err != nil {
		t.Errorf("finite: %v", err)
	}
	first := errors.New("first")
	err = first
	(&Explainer{}).checkFinite(&err, Saliency, cell.Input{}, &Result{Scores: []float64{math.NaN()}})
	if err != first {
		t.Errorf("an earlier error became %v", err)
	}
	// A logit whose classifier's input was not finite already (hard to
	// reach: the gates saturate, and the LSTM's outputs stay in [−1, 1]).
	nf := &NonFiniteError{Method: LRP, What: "logit", Class: 2, Position: -1, Value: math.NaN()}
	if want := "attrib: the logit of class 2 is NaN: the LSTM's output after the head, the classifier's input, is not finite already (the LSTM or its input overflows float64); no lrp scores can be computed"; nf.Error() != want {
		t.Errorf("%q, want %q", nf.Error(), want)
	}
}

func attr(m Model, method Method, x cell.Input, opt Options) error {
	_, err := Attribute(context.Background(), m, method, x, opt)
	return err
}

func attrAll(m Model, method Method, x cell.Input, opt Options) error {
	e, err := NewExplainer(m)
	if err != nil {
		return err
	}
	defer e.Release()
	return e.AttributeAll(context.Background(), method, x, opt, new(MultiResult))
}

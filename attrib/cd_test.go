package attrib_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// cdCase is the part of a cell/testdata/cd fixture (the authors' CD())
// these tests read.
type cdCase struct {
	Name    string
	Strings []string
	IDs     [][]int
	Cases   []struct {
		Steps  int
		Tokens [][]float64 // [t][class]
		Spans  []struct {
			Start, Stop int
			Rel         []float64
		}
	}
}

func readCDFixture(t *testing.T, name string) cdCase {
	t.Helper()
	b, err := os.ReadFile("../cell/testdata/cd/cd_" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var fx cdCase
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	return fx
}

// checkCD runs CD through the Explainer on x for every class and every
// span of the fixture's case and compares with the authors' numbers.
func checkCD(t *testing.T, e *attrib.Explainer, name string, x cell.Input, fxCase int, fx cdCase, classes int) {
	t.Helper()
	c := fx.Cases[fxCase]
	var res attrib.Result
	for k := range classes {
		for _, sp := range c.Spans {
			opt := attrib.Options{Class: attrib.ClassIndex(k), Span: &attrib.Span{Start: sp.Start, Stop: sp.Stop}}
			if err := e.Attribute(t.Context(), attrib.ContextualDecomposition, x, opt, &res); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if res.Features != nil || res.Class != attrib.ClassIndex(k) || len(res.Scores) != c.Steps {
				t.Fatalf("%s: result %+v", name, res)
			}
			for tt, got := range res.Scores {
				if want := c.Tokens[tt][k]; math.Abs(got-want) > 1e-8*max(math.Abs(want), 1e-6) {
					t.Errorf("%s token %d class %d: %v, the authors' CD %v", name, tt, k, got, want)
				}
			}
			if want := sp.Rel[k]; math.Abs(res.SpanScore-want) > 1e-8*max(math.Abs(want), 1e-6) {
				t.Errorf("%s span %d:%d class %d: %v, the authors' CD %v", name, sp.Start, sp.Stop, k, res.SpanScore, want)
			}
		}
	}
}

// TestCDWhiteBox runs CD on the white-box networks (their one-hot input,
// one-layer models of the engine) and matches the authors' CD() on the
// exported weights.
func TestCDWhiteBox(t *testing.T) {
	for _, name := range []string{"sp-counter", "counting"} {
		net, err := whitebox.New(name, whitebox.Config{})
		if err != nil {
			t.Fatal(err)
		}
		fx := readCDFixture(t, name)
		e := mustExplainer(t, net.Model)
		for i, s := range fx.Strings {
			sym, err := net.Task.Encode(s)
			if err != nil {
				t.Fatal(err)
			}
			checkCD(t, e, name+" "+s, cell.OneHot(sym), i, fx, net.Model.Classes())
		}
	}
}

// TestCDImported runs CD on an imported model (a *model.Model) and matches
// the authors' CD() on its embedded input.
func TestCDImported(t *testing.T) {
	m, err := model.Load("../model/testdata/uni1.safetensors", model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fx := readCDFixture(t, "uni1")
	e := mustExplainer(t, m)
	for i, ids := range fx.IDs {
		x, err := m.Embed(ids)
		if err != nil {
			t.Fatal(err)
		}
		checkCD(t, e, "uni1", x, i, fx, m.Classes())
	}
}

// TestCDWhiteBoxDecomposes checks the decomposition identity on the
// white-box networks: for every span, W_y·β_T + W_y·γ_T + b_y are the
// Network's own logits (1e-9), and the token scores of Attribute are the
// bits of the one-token spans. It also checks that the predicted class is
// the default and that the result does not depend on a reused Explainer.
func TestCDWhiteBoxDecomposes(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ net, input string }{{"sp-counter", "abcdabcdcba"}, {"sp-fsa", "dcbadcba"}, {"counting", "abbaab"}, {"bracket", "[([][()"}} {
		net, err := whitebox.New(c.net, whitebox.Config{})
		if err != nil {
			t.Fatal(err)
		}
		sym, err := net.Task.Encode(c.input)
		if err != nil {
			t.Fatal(err)
		}
		x := cell.OneHot(sym)
		n := net.Model
		y, err := mustRunner(t, n).Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		r, err := cell.NewCDRunner(n)
		if err != nil {
			t.Fatal(err)
		}
		dense, _ := x.AppendDense(nil, n.Input())
		xd := cell.Dense(dense, len(sym))
		by := n.Params().By
		rel, irrel := make([]float64, n.Classes()), make([]float64, n.Classes())
		res, err := attrib.Attribute(t.Context(), n, attrib.ContextualDecomposition, x, attrib.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Class != attrib.ClassIndex(cell.Predict(y)) || res.Logits[res.Class.Int()] != y[res.Class.Int()] {
			t.Errorf("%s: class %v, logits %v; the network's %v", c.net, res.Class, res.Logits, y)
		}
		for start := range sym {
			for stop := start; stop < len(sym); stop++ {
				if err := r.Span(ctx, xd, start, stop, rel, irrel); err != nil {
					t.Fatal(err)
				}
				for k := range rel {
					if got := rel[k] + irrel[k] + by[k]; math.Abs(got-y[k]) > 1e-9*max(1, math.Abs(y[k])) {
						t.Errorf("%s %s span %d:%d class %d: β+γ+b = %v, the logit %v", c.net, c.input, start, stop, k, got, y[k])
					}
				}
				if start == stop && math.Float64bits(rel[res.Class.Int()]) != math.Float64bits(res.Scores[start]) {
					t.Errorf("%s token %d: Attribute %v, Span %v", c.net, start, res.Scores[start], rel[res.Class.Int()])
				}
			}
		}
	}
}

// TestCDRefusals: what CD does not take, each with an error that says why.
func TestCDRefusals(t *testing.T) {
	net, err := whitebox.New("sp-counter", whitebox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	x := cell.OneHot([]int{0, 2, 2, 1})
	cd := attrib.ContextualDecomposition
	for _, c := range []struct {
		m    attrib.Model
		meth attrib.Method
		x    cell.Input
		opt  attrib.Options
		want string
	}{
		{net.Model, cd, x, attrib.Options{Span: &attrib.Span{Start: 2, Stop: 4}}, "span 2:4 is not within the input's 4 tokens"},
		{net.Model, cd, x, attrib.Options{Span: &attrib.Span{Start: 2, Stop: 1}}, "span 2:1"},
		{net.Model, cd, x, attrib.Options{Span: &attrib.Span{Start: -1, Stop: 1}}, "span -1:1"},
		{net.Model, attrib.IntegratedGradients, x, attrib.Options{Span: &attrib.Span{Stop: 1}}, "a Span is for contextual decomposition"},
		{net.Model, cd, x, attrib.Options{Class: attrib.ClassIndex(2)}, "class 2 is out of range"},
		{net.Model, cd, cell.OneHot([]int{0, 7}), attrib.Options{}, "symbol 7"},
		{net.Model, cd, cell.OneHot(nil), attrib.Options{}, "empty input"},
	} {
		_, err := attrib.Attribute(t.Context(), c.m, c.meth, c.x, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: %v; want an error with %q", c.meth, c.opt.Span, err, c.want)
		}
	}
	for _, c := range []struct {
		file string
		opt  model.Options
		want string
	}{
		{"heads/hnbf_bi1.safetensors", model.Options{}, "bidirectional"},
		{"uni3nobias.safetensors", model.Options{}, "3 layers"},
		{"heads/max_uni1.safetensors", model.Options{Head: new(cell.HeadMax)}, "head max"},
		{"heads/mean_uni2.safetensors", model.Options{Head: new(cell.HeadMean)}, "2 layers"},
		{"heads/last_uni1_fc12relu.safetensors", model.Options{Head: new(cell.HeadLast), Act: cell.ActReLU}, "hidden layer (relu)"},
	} {
		file, want := c.file, c.want
		m, err := model.Load("../model/testdata/"+file, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		x, err := m.Embed([]int{1, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		_, err = attrib.Attribute(t.Context(), m, cd, x, attrib.Options{})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "contextual decomposition is for one-layer") {
			t.Errorf("%s: %v; want a refusal naming %q", file, err, want)
		}
	}
	m, err := model.Load("../model/testdata/uni1.safetensors", model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := m.Embed([]int{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := attrib.Attribute(t.Context(), m, cd, emb, attrib.Options{Baseline: make([]float64, m.Input())}); err == nil || !strings.Contains(err.Error(), "not cd") {
		t.Errorf("CD with a Baseline: %v", err)
	}
	// One-hot input runs as its rows made dense.
	oh := cell.OneHot([]int{1, 2})
	rows, _ := oh.AppendDense(nil, m.Input())
	a, errA := attrib.Attribute(t.Context(), m, cd, oh, attrib.Options{})
	b, errB := attrib.Attribute(t.Context(), m, cd, cell.Dense(rows, 2), attrib.Options{})
	if errA != nil || errB != nil || fmt.Sprint(a.Scores) != fmt.Sprint(b.Scores) {
		t.Errorf("CD of one-hot input on a Stacked model: %v, %v; %v vs its dense rows' %v", errA, errB, a, b)
	}
	if _, err := attrib.Attribute(t.Context(), m, cd, emb, attrib.Options{Budget: 64}); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("CD within 64 bytes: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var res attrib.Result
	if err := mustExplainer(t, m).Attribute(ctx, cd, emb, attrib.Options{}, &res); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("CD with a cancelled context: %v", err)
	}
}

// BenchmarkCD: every token's score of a 100-token input to a one-layer
// model with H = 256 (T(T+1)/2 = 5050 decomposition steps).
func BenchmarkCD(b *testing.B) {
	m, err := model.Load("../model/testdata/bench_h256.safetensors", model.Options{})
	if err != nil {
		b.Skip(err)
	}
	ids := make([]int, 100)
	for i := range ids {
		ids[i] = i * 7 % m.Vocab
	}
	x, err := m.Embed(ids)
	if err != nil {
		b.Fatal(err)
	}
	e := mustExplainer(b, m)
	var res attrib.Result
	for b.Loop() {
		if err := e.Attribute(b.Context(), attrib.ContextualDecomposition, x, attrib.Options{}, &res); err != nil {
			b.Fatal(err)
		}
	}
}

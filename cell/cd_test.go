package cell

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// cdFixture is one file of testdata/cd (written by gen_cd.py from the
// authors' CD()).
type cdFixture struct {
	Name                   string
	Input, Hidden, Classes int
	Wih, Whh, B, Wy, By    []float64
	Strings                []string
	Cases                  []struct {
		X      []float64
		Steps  int
		Logits []float64
		Tokens [][]float64 // [t][class]
		Spans  []struct {
			Start, Stop int
			Rel, Irrel  []float64
		}
	}
}

func loadCDFixtures(t *testing.T) []cdFixture {
	t.Helper()
	files, err := filepath.Glob("testdata/cd/cd_*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CD fixtures: %v", err)
	}
	var out []cdFixture
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fx cdFixture
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, fx)
	}
	return out
}

func (fx cdFixture) stacked(t *testing.T) *Model {
	t.Helper()
	s, err := NewModel(Params{Input: fx.Input, Hidden: fx.Hidden, Layers: 1, Classes: fx.Classes,
		Cells: []CellParams{{Wih: fx.Wih, Whh: fx.Whh, B: fx.B}}, Wy: fx.Wy, By: fx.By})
	if err != nil {
		t.Fatalf("%s: %v", fx.Name, err)
	}
	return s
}

// cdRelErr is |got − want| relative to |want| (absolute below 1e-6, where
// a relative error says nothing).
func cdRelErr(got, want float64) float64 {
	return math.Abs(got-want) / max(math.Abs(want), 1e-6)
}

// TestCDReference matches the authors' CD() (float64 PyTorch) on random
// models with and without biases and on exported white-box networks:
// every token's score for every class and a few spans, both parts, to
// 1e-8 relative.
func TestCDReference(t *testing.T) {
	ctx := context.Background()
	worst, n, where := 0.0, 0, ""
	note := func(e float64, got, want float64, name string) {
		if e > worst {
			worst, where = e, fmt.Sprintf("%s: %v against %v", name, got, want)
		}
		n++
	}
	for _, fx := range loadCDFixtures(t) {
		s := fx.stacked(t)
		r, err := NewCDRunner(s)
		if err != nil {
			t.Fatal(err)
		}
		for ci, c := range fx.Cases {
			x := Dense(c.X, c.Steps)
			scores := make([]float64, c.Steps)
			for k := range fx.Classes {
				if err := r.Tokens(ctx, x, k, scores); err != nil {
					t.Fatalf("%s case %d: %v", fx.Name, ci, err)
				}
				for tt, got := range scores {
					want := c.Tokens[tt][k]
					e := cdRelErr(got, want)
					note(e, got, want, fx.Name)
					if e > 1e-8 {
						t.Errorf("%s case %d token %d class %d: %v, the authors' CD %v", fx.Name, ci, tt, k, got, want)
					}
				}
			}
			rel, irrel := make([]float64, fx.Classes), make([]float64, fx.Classes)
			for _, sp := range c.Spans {
				if err := r.Span(ctx, x, sp.Start, sp.Stop, rel, irrel); err != nil {
					t.Fatal(err)
				}
				for k := range rel {
					for _, p := range [][2]float64{{rel[k], sp.Rel[k]}, {irrel[k], sp.Irrel[k]}} {
						e := cdRelErr(p[0], p[1])
						note(e, p[0], p[1], fx.Name)
						if e > 1e-8 {
							t.Errorf("%s case %d span %d:%d class %d: %v, the authors' CD %v", fx.Name, ci, sp.Start, sp.Stop, k, p[0], p[1])
						}
					}
				}
			}
		}
	}
	t.Logf("%d values, largest relative difference from the authors' CD() %.3g (%s)", n, worst, where)
}

// TestCDDecomposes checks that the two parts add up to the logits of the
// forward pass (W_y·β_T + W_y·γ_T + b_y = ŷ) for every span, that the
// whole input of a model without LSTM biases is all relevant, and that a
// token's score from Tokens is the bits of its one-token Span.
func TestCDDecomposes(t *testing.T) {
	ctx := context.Background()
	for _, fx := range loadCDFixtures(t) {
		s := fx.stacked(t)
		r, _ := NewCDRunner(s)
		fr, _ := NewRunner(s)
		for _, c := range fx.Cases {
			x := Dense(c.X, c.Steps)
			y, err := fr.Forward(x)
			if err != nil {
				t.Fatal(err)
			}
			y = append([]float64(nil), y...)
			rel, irrel := make([]float64, fx.Classes), make([]float64, fx.Classes)
			tokens := make([]float64, c.Steps)
			for k := range fx.Classes {
				if err := r.Tokens(ctx, x, k, tokens); err != nil {
					t.Fatal(err)
				}
				for start := range c.Steps {
					for stop := start; stop < c.Steps; stop++ {
						if c.Steps > 20 && stop != start && stop != c.Steps-1 {
							continue // long inputs: the one-token spans and those to the end
						}
						if err := r.Span(ctx, x, start, stop, rel, irrel); err != nil {
							t.Fatal(err)
						}
						// Without LSTM biases (b = 0: σ(0)·tanh(0) = 0) the span of
						// every position leaves γ exactly zero; with them, the last
						// step's bias·bias term goes to γ (t < stop fails).
						if fx.B == nil && start == 0 && stop == c.Steps-1 && irrel[k] != 0 {
							t.Errorf("%s T=%d: the whole input's irrelevant part is %v, not 0", fx.Name, c.Steps, irrel[k])
						}
						got := rel[k] + irrel[k] + s.by[k]
						if math.Abs(got-y[k]) > 1e-9*max(1, math.Abs(y[k])) {
							t.Errorf("%s T=%d span %d:%d class %d: β+γ gives %v, the forward pass %v", fx.Name, c.Steps, start, stop, k, got, y[k])
						}
						if start == stop && math.Float64bits(rel[k]) != math.Float64bits(tokens[start]) {
							t.Errorf("%s token %d class %d: Tokens %v, Span %v", fx.Name, start, k, tokens[start], rel[k])
						}
					}
				}
			}
		}
	}
}

// TestCDBits pins the bits of a few scores: every kernel path (purego,
// AVX2, AVX-512, NEON under qemu) must give them.
func TestCDBits(t *testing.T) {
	var fx cdFixture
	for _, f := range loadCDFixtures(t) {
		if f.Name == "h8e6c4_large" {
			fx = f
		}
	}
	s := fx.stacked(t)
	r, _ := NewCDRunner(s)
	c := fx.Cases[2]
	scores := make([]float64, c.Steps)
	if err := r.Tokens(context.Background(), Dense(c.X, c.Steps), 3, scores); err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(scores))
	for i, v := range scores {
		got[i] = strconvG(v)
	}
	want := cdGoldenBits
	if strings.Join(got, " ") != want {
		t.Errorf("CD scores changed bits:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestCDRefuses checks the models and arguments contextual decomposition
// is not defined for.
func TestCDRefuses(t *testing.T) {
	h, e, c := 2, 3, 2
	cellOf := func(in int) CellParams {
		return CellParams{Wih: make([]float64, 4*h*in), Whh: make([]float64, 4*h*h)}
	}
	for name, p := range map[string]Params{
		"2 layers": {Input: e, Hidden: h, Layers: 2, Classes: c, Cells: []CellParams{cellOf(e), cellOf(h)}, Wy: make([]float64, c*h)},
		"bidirectional": {Input: e, Hidden: h, Layers: 1, Bidirectional: true, Classes: c,
			Cells: []CellParams{cellOf(e), cellOf(e)}, Wy: make([]float64, 2*c*h)},
		"mean": {Input: e, Hidden: h, Layers: 1, Classes: c, Cells: []CellParams{cellOf(e)}, Wy: make([]float64, c*h), Head: HeadMean},
		"max":  {Input: e, Hidden: h, Layers: 1, Classes: c, Cells: []CellParams{cellOf(e)}, Wy: make([]float64, c*h), Head: HeadMax},
		"hidden layer": {Input: e, Hidden: h, Layers: 1, Classes: c, Cells: []CellParams{cellOf(e)}, Act: ActReLU,
			Units: 3, W1: make([]float64, 3*h), Wy: make([]float64, c*3)},
	} {
		s, err := NewModel(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := NewCDRunner(s); err == nil || !strings.Contains(err.Error(), "contextual decomposition is for one-layer") {
			t.Errorf("%s: NewCDRunner: %v", name, err)
		}
	}
	if _, err := NewCDRunner(nil); err == nil {
		t.Error("NewCDRunner(nil) succeeded")
	}
	s, err := NewModel(Params{Input: e, Hidden: h, Layers: 1, Classes: c, Cells: []CellParams{cellOf(e)}, Wy: make([]float64, c*h), Head: HeadLast})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewCDRunner(s)
	if err != nil {
		t.Fatalf("head last: %v", err)
	}
	ctx := context.Background()
	x := Dense(make([]float64, 4*e), 4)
	rel, irrel := make([]float64, c), make([]float64, c)
	for _, sp := range [][2]int{{-1, 2}, {2, 1}, {0, 4}, {4, 4}} {
		if err := r.Span(ctx, x, sp[0], sp[1], rel, irrel); err == nil || !strings.Contains(err.Error(), "span") {
			t.Errorf("span %v: %v", sp, err)
		}
	}
	if err := r.Span(ctx, x, 0, 1, rel[:1], irrel); err == nil {
		t.Error("Span took 1 output for 2 classes")
	}
	if err := r.Span(ctx, OneHot([]int{0, 1}), 0, 1, rel, irrel); err == nil || !strings.Contains(err.Error(), "dense") {
		t.Errorf("one-hot input: %v", err)
	}
	if err := r.Span(ctx, Dense([]float64{1, 2, math.NaN()}, 1), 0, 0, rel, irrel); err == nil {
		t.Error("NaN input accepted")
	}
	if err := r.Tokens(ctx, x, 2, make([]float64, 4)); err == nil {
		t.Error("class 2 of 2 accepted")
	}
	if err := r.Tokens(ctx, x, 0, make([]float64, 3)); err == nil {
		t.Error("3 scores for 4 steps accepted")
	}
	if err := r.Tokens(ctx, Dense(nil, 0), 0, nil); err == nil {
		t.Error("empty input accepted")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := r.Tokens(done, x, 0, make([]float64, 4)); err == nil {
		t.Error("a cancelled context did not stop Tokens")
	}
}

func strconvG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// cdGoldenBits are the class-3 token scores of cd_h8e6c4_large's third
// input, as computed on amd64 (AVX-512) when the test was written.
const cdGoldenBits = "0.007367550148410659 0.016004190506621975 0.00850886679653066 0.00040814570156971395 0.009730493231000586 0.1134254383811994 -0.1817584323307223 -0.23032693369565316 -0.2142352723460597 -0.20846889056787807 0.05294116331134584 0.005593630803785191"

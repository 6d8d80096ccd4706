package cell

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The sparse products (sparse.go) give the bits of the dense ones:
// IG, IG of every class and occlusion of sparse models, with batches of
// several lane counts, whole traces and checkpoints, against the same
// model with its sparse terms dropped.
func TestModelSparseSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, c := range []struct {
		e, h, layers int
		bi           bool
	}{{6, 9, 1, false}, {5, 8, 2, true}, {7, 12, 2, false}} {
		s := sparsify(randomStacked(t, rng, c.e, c.h, c.layers, c.bi, 3, 2, true), rng)
		dense := withoutTerms(s)
		if s.cells[0].terms.whh == nil || s.cells[len(s.cells)-1].terms.wihT == nil {
			t.Fatal("the sparsified model has no sparse terms")
		}
		steps := 120
		oneHot := make([]float64, steps*c.e)
		for i := range steps {
			oneHot[i*c.e+rng.IntN(c.e)] = 1
		}
		inputs := []Input{Dense(oneHot, steps), randomStackedInput(rng, steps, c.e)}
		alphas, weights := randomRule(rng, 50)
		for xi, x := range inputs {
			for _, opt := range []RunOptions{{Lanes: 8, Workers: 1}, {Lanes: 16}, {Lanes: 3}, {Lanes: 2, Workers: 1}, {}, {Budget: 1 << 18, Workers: 1}} {
				name := fmt.Sprintf("%+v/x%d/%+v", c, xi, opt)
				got, want := stackedResults(t, s, x, alphas, weights, opt), stackedResults(t, dense, x, alphas, weights, opt)
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("%s: value %d is %v with sparse terms, %v without", name, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// sparsify zeroes about 85% of s's LSTM weights (as NewModel stores
// them) and packs the model again.
func sparsify(s *Model, rng *rand.Rand) *Model {
	p := s.Params()
	for _, c := range p.Cells {
		for _, w := range [][]float64{c.Wih, c.Whh} {
			for i := range w {
				if rng.Float64() < 0.85 {
					w[i] = 0
				}
			}
		}
	}
	sp, err := NewModel(p)
	if err != nil {
		panic(err)
	}
	return sp
}

// withoutTerms returns s with the dense products only.
func withoutTerms(s *Model) *Model {
	d := *s
	d.cells = slices.Clone(s.cells)
	for i := range d.cells {
		d.cells[i].terms = cellTerms{}
	}
	return &d
}

// stackedResults runs IG (class 0 and every class) and occlusion of x on s
// and returns all their values.
func stackedResults(t *testing.T, s *Model, x Input, alphas, weights []float64, opt RunOptions) []float64 {
	t.Helper()
	r, err := NewRunner(s)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, c := x.Len()*s.Input(), s.Classes()
	grad, y, y0, occ := make([]float64, n), make([]float64, c), make([]float64, c), make([]float64, x.Len())
	choose := func([]float64) (int, error) { return 0, nil }
	ctx := context.Background()
	if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, grad, y, y0, opt); err != nil {
		t.Fatal(err)
	}
	grads := make([][]float64, c)
	for k := range grads {
		grads[k] = make([]float64, n)
	}
	if err := r.IntegratedGradientsAll(ctx, x, alphas, weights, grads, y, y0, opt); err != nil {
		t.Fatal(err)
	}
	if err := r.Occlusion(ctx, x, 0, occ, opt); err != nil {
		t.Fatal(err)
	}
	out := slices.Concat(grad, y, y0, occ)
	for _, g := range grads {
		out = append(out, g...)
	}
	return out
}

package cell

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestModelTablesSameBits checks layer 0's tables on one-hot input
// (tables.go) against the same model without them: IG (one class
// and every class) and occlusion, with whole traces and checkpoints,
// several lane counts and workers, on models whose first layer has gate
// rows without recurrent weights: dense otherwise, sparse (backprop then
// skips the gradients of gates without any weight), and with a layer
// above.
func TestModelTablesSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 21))
	for _, c := range []struct {
		e, h, layers int
		sparse       bool
	}{{5, 9, 1, false}, {6, 8, 1, true}, {4, 7, 2, true}, {3, 10, 2, false}} {
		if testing.Short() && c.h != 8 { // one sparse model under qemu (CI's arm64 run)
			continue
		}
		s := randomStacked(t, rng, c.e, c.h, c.layers, false, 3, 2, true)
		if c.sparse {
			s = sparsify(s, rng)
		}
		p := s.Params()
		whh := p.Cells[0].Whh
		for r := range 4 * c.h { // about half the rows of layer 0 without recurrent weights
			if rng.IntN(2) == 0 || r%c.h == 0 {
				clear(whh[r*c.h : (r+1)*c.h])
			}
		}
		if c.sparse { // and some without any weight
			clear(p.Cells[0].Wih[:c.e])
			clear(whh[:c.h])
		}
		s, err := NewModel(p)
		if err != nil {
			t.Fatal(err)
		}
		if s.tabs == nil {
			t.Fatalf("%+v: no tables", c)
		}
		noTables := *s
		noTables.tabs = nil
		steps := 90
		syms := make([]int, steps)
		for i := range syms {
			syms[i] = rng.IntN(c.e+1) - 1 // −1: no symbol
		}
		alphas, weights := randomRule(rng, 50)
		for xi, x := range []Input{OneHot(syms), ScaledOneHot(syms, 1.3)} {
			for _, opt := range []RunOptions{{Lanes: 8, Workers: 1}, {Lanes: 16}, {Lanes: 3}, {}, {Budget: 1 << 17, Workers: 1}, {Budget: 1 << 18}} {
				name := fmt.Sprintf("%+v/x%d/%+v", c, xi, opt)
				got, want := stackedResults(t, s, x, alphas, weights, opt), stackedResults(t, &noTables, x, alphas, weights, opt)
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("%s: value %d is %v with tables, %v without", name, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// The batched methods refuse a budget too small for the input with a
// *BudgetError that names the budget the call was given, one-hot input's
// dense rows included.
func TestBudgetErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 22))
	s := randomStacked(t, rng, 4, 6, 1, false, 3, 2, true)
	r, err := NewRunner(s)
	if err != nil {
		t.Fatal(err)
	}
	steps := 300
	syms := make([]int, steps)
	for i := range syms {
		syms[i] = rng.IntN(4)
	}
	dense, _ := OneHot(syms).AppendDense(nil, 4)
	alphas, weights := randomRule(rng, 20)
	ctx := context.Background()
	grad, y, y0, occ := make([]float64, steps*4), make([]float64, 3), make([]float64, 3), make([]float64, steps)
	choose := func([]float64) (int, error) { return 0, nil }
	rows := int64(8 * steps * 4)
	for _, c := range []struct {
		x      Input
		budget int64
	}{{Dense(dense, steps), 2000}, {OneHot(syms), rows / 2}, {OneHot(syms), rows + 2000}} {
		opt := RunOptions{Budget: c.budget, Workers: 1}
		for name, err := range map[string]error{
			"IG":        r.IntegratedGradients(ctx, c.x, choose, alphas, weights, grad, y, y0, opt),
			"occlusion": r.Occlusion(ctx, c.x, 0, occ, opt),
		} {
			var be *BudgetError
			if !errors.As(err, &be) || be.Budget != c.budget || be.Need <= c.budget {
				t.Errorf("%s, one-hot %v, budget %d: error %v, want a BudgetError naming the budget", name, c.x.IsOneHot(), c.budget, err)
			}
		}
	}
	n := mustNew(t, randomParams(rng, 5, 4, 3, true))
	x := OneHot([]int{0, 1, 1, 0})
	err = n.IntegratedGradients(ctx, x, choose, alphas, weights, make([]float64, 4*4), y, y0, RunOptions{Budget: 100})
	var be *BudgetError
	if !errors.As(err, &be) || be.Budget != 100 {
		t.Errorf("one-layer IG, budget 100: error %v, want a BudgetError naming it", err)
	}
}

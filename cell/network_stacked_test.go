package cell

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAsStacked checks that a Network and its Stacked form compute the
// same logits and gradients, on one-hot and dense input.
func TestAsStacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, oneHot := range []bool{true, false} {
		n := mustNew(t, randomParams(rng, 5, 4, 3, true))
		s, err := n.AsStacked()
		if err != nil {
			t.Fatal(err)
		}
		steps := 9
		x := Dense(randomDense(rng, steps, 4), steps)
		if oneHot {
			syms := randomSymbols(rng, steps, 4)
			syms[3] = -1
			x = ScaledOneHot(syms, 0.75)
		}
		ws := NewWorkspace(n)
		want, err := n.Forward(ws, x)
		if err != nil {
			t.Fatal(err)
		}
		gWant := make([]float64, steps*4)
		if _, err := n.Gradient(ws, x, 1, gWant); err != nil {
			t.Fatal(err)
		}
		dense, err := x.AppendDense(nil, 4)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewStackedRunner(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Forward(Dense(dense, steps))
		if err != nil {
			t.Fatal(err)
		}
		for k := range want {
			if math.Abs(got[k]-want[k]) > 1e-12*max(1, math.Abs(want[k])) {
				t.Errorf("oneHot=%v logit %d: Stacked %v, Network %v", oneHot, k, got[k], want[k])
			}
		}
		gGot := make([]float64, steps*4)
		if _, err := r.Gradient(Dense(dense, steps), 1, gGot); err != nil {
			t.Fatal(err)
		}
		for k := range gWant {
			if math.Abs(gGot[k]-gWant[k]) > 1e-12*max(1, math.Abs(gWant[k])) {
				t.Errorf("oneHot=%v gradient %d: Stacked %v, Network %v", oneHot, k, gGot[k], gWant[k])
			}
		}
	}
	if _, err := OneHot([]int{0, 9}).AppendDense(nil, 4); err == nil {
		t.Error("AppendDense accepted symbol 9 of 4")
	}
}

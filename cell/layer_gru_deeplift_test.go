package cell

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGRUDeepLIFTSummation checks DeepLIFT on GRU models of every head,
// one and two layers and directions, the three classifiers, with and
// without biases, against the zero reference and a nonzero one, for every
// class: the scores sum to ŷ_c(x) − ŷ_c(x₀), the logits are Forward's, and
// DeepLIFTAll has the bits of the one-class calls.
func TestGRUDeepLIFTSummation(t *testing.T) {
	rng := rand.New(rand.NewPCG(201, 202))
	const e, h, classes, steps = 3, 4, 3, 7
	worst := 0.0
	for ci, c := range gruCases() {
		s := randomGRU(t, rng, e, h, classes, c, 2, ci%4 != 3)
		r, _ := NewRunner(s)
		x := randomStackedInput(rng, steps, e)
		want, _ := r.Forward(x)
		want = append([]float64(nil), want...)
		for _, row := range [][]float64{nil, {0.3, -0.7, 1.1}} {
			ref := deepLIFTRef(row, steps, e)
			outs := make([][]float64, classes)
			for class := range classes {
				outs[class] = make([]float64, steps*e)
			}
			if _, _, err := r.DeepLIFTAll(context.Background(), x, ref, outs); err != nil {
				t.Fatalf("%v: %v", c, err)
			}
			for class := range classes {
				contrib := make([]float64, steps*e)
				y, y0, err := r.DeepLIFT(x, ref, class, contrib)
				if err != nil {
					t.Fatalf("%v: %v", c, err)
				}
				total := 0.0
				for _, v := range contrib {
					total += v
				}
				delta := y[class] - y0[class]
				rel := math.Abs(total-delta) / max(math.Abs(delta), 1e-3)
				worst = max(worst, rel)
				if rel > 1e-9 {
					t.Errorf("%v ref=%v class %d: Σ scores %v, ŷ(x) − ŷ(x₀) = %v (relative %.3g)", c, row, class, total, delta, rel)
				}
				if y[class] != want[class] {
					t.Errorf("%v: DeepLIFT's logit %v, Forward's %v", c, y[class], want[class])
				}
				assertSameBits(t, c.String()+" DeepLIFTAll", outs[class], contrib)
			}
		}
		r.Close()
	}
	t.Logf("worst summation-to-delta residual (relative): %.3g", worst)
}

// TestGRUDeepLIFTNearGradient: as the reference approaches x, every
// Rescale multiplier and product split tends to the derivative, so the
// multipliers tend to ∂ŷ_c/∂x.
func TestGRUDeepLIFTNearGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(203, 204))
	for _, c := range []headCase{{2, true, HeadMean, ActTanh}, {1, false, HeadHN, ActReLU}, {2, true, HeadLast, ActNone}, {2, false, HeadHNBF, ActNone}} {
		s := randomGRU(t, rng, 3, 4, 2, c, 2, true)
		r, _ := NewRunner(s)
		const steps = 5
		x := randomStackedInput(rng, steps, 3)
		grad := make([]float64, steps*3)
		if _, err := r.Gradient(x, 1, grad); err != nil {
			t.Fatal(err)
		}
		dx := make([]float64, steps*3)
		for i := range dx {
			dx[i] = 1e-5 * rng.NormFloat64()
		}
		ref := make([]float64, steps*3)
		for i := range ref {
			ref[i] = x.dense[i] - dx[i]
		}
		contrib := make([]float64, steps*3)
		if _, _, err := r.DeepLIFT(x, Dense(ref, steps), 1, contrib); err != nil {
			t.Fatal(err)
		}
		for i := range contrib {
			m := contrib[i] / dx[i]
			if math.Abs(m-grad[i]) > 1e-4*max(1, math.Abs(grad[i])) {
				t.Errorf("%v feature %d: multiplier %v, gradient %v", c, i, m, grad[i])
			}
		}
		r.Close()
	}
}

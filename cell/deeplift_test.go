package cell

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// deepLIFTRef returns a reference input of steps rows: zero, or the row
// ref at every position.
func deepLIFTRef(row []float64, steps, e int) Input {
	x := make([]float64, steps*e)
	if row != nil {
		for t := range steps {
			copy(x[t*e:(t+1)*e], row)
		}
	}
	return Dense(x, steps)
}

// TestModelDeepLIFTSummation checks summation-to-delta, Σ scores =
// ŷ_c(x) − ŷ_c(x₀), on random models of every head, one and two
// directions and layers, the three classifiers, with the zero reference
// and a nonzero one, for every class.
func TestModelDeepLIFTSummation(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 1))
	const e, h, classes, steps = 3, 4, 3, 7
	worst := 0.0
	for _, c := range headCases() {
		s := randomHeadStacked(t, rng, e, h, classes, c)
		r, _ := NewRunner(s)
		x := randomStackedInput(rng, steps, e)
		for _, row := range [][]float64{nil, {0.3, -0.7, 1.1}} {
			ref := deepLIFTRef(row, steps, e)
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
				want, _ := r.Forward(x)
				if y[class] != want[class] {
					t.Errorf("%v: DeepLIFT's logit %v, Forward's %v", c, y[class], want[class])
				}
			}
		}
		r.Close()
	}
	t.Logf("worst summation-to-delta residual (relative): %.3g", worst)
}

// TestModelDeepLIFTMaxSplit checks the max head's rule on a model whose
// maximising steps differ between the input and the reference: the
// scores still sum to delta, and the multiplier of a unit's maximum is
// split between the two steps.
func TestModelDeepLIFTMaxSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	s := randomHeadStacked(t, rng, 2, 3, 2, headCase{1, false, HeadMax, ActNone})
	r, _ := NewRunner(s)
	defer r.Close()
	const steps = 6
	split := false
	for trial := range 50 {
		x := randomStackedInput(rng, steps, 2)
		ref := randomStackedInput(rng, steps, 2)
		contrib := make([]float64, steps*2)
		y, y0, err := r.DeepLIFT(x, ref, trial%2, contrib)
		if err != nil {
			t.Fatal(err)
		}
		for u, a := range r.dl.x.argmax[:3] {
			if a != r.dl.ref.argmax[u] {
				split = true
			}
		}
		total := 0.0
		for _, v := range contrib {
			total += v
		}
		if d := y[trial%2] - y0[trial%2]; math.Abs(total-d) > 1e-9*max(math.Abs(d), 1e-3) {
			t.Errorf("trial %d: Σ scores %v, delta %v", trial, total, d)
		}
	}
	if !split {
		t.Error("no trial had different maximising steps: the split went untested")
	}
}

// TestModelDeepLIFTNearGradient checks DeepLIFT against the gradient:
// as the reference approaches x, every Rescale multiplier and product
// split tends to the derivative, so the multipliers tend to ∂ŷ_c/∂x.
func TestModelDeepLIFTNearGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []headCase{{2, true, HeadMean, ActTanh}, {1, false, HeadHN, ActReLU}, {2, true, HeadLast, ActNone}} {
		s := randomHeadStacked(t, rng, 3, 4, 2, c)
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

// TestModelDeepLIFTRefused checks the errors and the context.
func TestModelDeepLIFTRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	s := randomStacked(t, rng, 2, 3, 1, false, 2, 1, true)
	r, _ := NewRunner(s)
	defer r.Close()
	x := randomStackedInput(rng, 4, 2)
	out := make([]float64, 8)
	if _, _, err := r.DeepLIFT(x, deepLIFTRef(nil, 3, 2), 0, out); err == nil || !strings.Contains(err.Error(), "reference has 3 steps") {
		t.Errorf("short reference: %v", err)
	}
	if _, _, err := r.DeepLIFT(x, Dense([]float64{0, 0, 0, 0, 0, math.NaN(), 0, 0}, 4), 0, out); err == nil {
		t.Error("a NaN reference was accepted")
	}
	if _, _, err := r.DeepLIFT(x, deepLIFTRef(nil, 4, 2), 2, out); err == nil {
		t.Error("class 2 of 2 was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	long := randomStackedInput(rng, 600, 2)
	if _, _, err := r.DeepLIFTContext(ctx, long, deepLIFTRef(nil, 600, 2), 0, make([]float64, 1200)); err == nil {
		t.Error("a canceled context was ignored")
	}
	outs := [][]float64{make([]float64, 1200), make([]float64, 1200)}
	if _, _, err := r.DeepLIFTAll(ctx, long, deepLIFTRef(nil, 600, 2), outs); !errors.Is(err, context.Canceled) {
		t.Errorf("DeepLIFTAll, a canceled context: %v, want context.Canceled", err)
	}
	// The runner works afterwards, with the bits of the single-class call.
	if _, _, err := r.DeepLIFTAll(context.Background(), long, deepLIFTRef(nil, 600, 2), outs); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 1200)
	if _, _, err := r.DeepLIFT(long, deepLIFTRef(nil, 600, 2), 1, want); err != nil {
		t.Fatal(err)
	}
	assertSameBits(t, "DeepLIFTAll after a cancelled call, class 1", outs[1], want)
}

package cell

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// attnOn gives p (a mean-head model's parameters) the attention head of c.
func attnOn(t testing.TB, rng *rand.Rand, p Params, h int, c attnCase) *Model {
	t.Helper()
	d := h * len(p.Cells) / c.layers
	u := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = (2*rng.Float64() - 1) * scale
		}
		return v
	}
	a := &Attention{Units: c.units, W1: u(max(c.units, 1)*d, 2)}
	if c.bias {
		a.B1 = u(max(c.units, 1), 1)
	}
	if c.units > 0 {
		a.W2 = u(c.units, 2)
		if c.bias {
			a.B2 = u(1, 1)
		}
	}
	p.Head, p.Attention = HeadAttention, a
	s, err := NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// DeepLIFT through the attention head, LSTM and GRU layers, one and two
// layers and directions, one- and two-layer scores: the scores sum to
// ŷ_c(x) − ŷ_c(x₀) (zero reference and a constant row), DeepLIFTAll's
// class c has DeepLIFT's bits, and as x₀ approaches x the multipliers
// approach the gradient.
func TestModelAttentionDeepLIFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(301, 302))
	const e, h, classes = 3, 4, 3
	worst := 0.0
	for _, gru := range []bool{false, true} {
		for _, c := range attnCases() {
			var s *Model
			if gru {
				p := randomGRU(t, rng, e, h, classes, headCase{c.layers, c.bi, HeadMean, c.act}, 2, c.bias).Params()
				s = attnOn(t, rng, p, h, c)
			} else {
				s = randomAttnStacked(t, rng, e, h, classes, c)
			}
			r, _ := NewRunner(s)
			for _, steps := range []int{1, 6} {
				x := randomStackedInput(rng, steps, e)
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
						if rel > 1e-11 {
							t.Errorf("gru=%v %v T=%d ref=%v class %d: Σ scores %v, ŷ(x) − ŷ(x₀) = %v (relative %.3g)", gru, c, steps, row, class, total, delta, rel)
						}
						assertSameBits(t, c.String()+" DeepLIFTAll", outs[class], contrib)
					}
				}
				// near the input: the gradient
				grad := make([]float64, steps*e)
				if _, err := r.Gradient(x, 1, grad); err != nil {
					t.Fatal(err)
				}
				dx, x0 := make([]float64, steps*e), make([]float64, steps*e)
				for i := range dx {
					dx[i] = 1e-5 * rng.NormFloat64()
					x0[i] = x.dense[i] - dx[i]
				}
				contrib := make([]float64, steps*e)
				if _, _, err := r.DeepLIFT(x, Dense(x0, steps), 1, contrib); err != nil {
					t.Fatal(err)
				}
				for i := range contrib {
					if m := contrib[i] / dx[i]; math.Abs(m-grad[i]) > 1e-4*max(1, math.Abs(grad[i])) {
						t.Errorf("gru=%v %v feature %d: multiplier %v, gradient %v", gru, c, i, m, grad[i])
					}
				}
			}
			r.Close()
		}
	}
	t.Logf("worst summation-to-delta residual (relative): %.3g", worst)
}

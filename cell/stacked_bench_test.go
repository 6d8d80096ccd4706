package cell

import (
	"context"
	"math/rand/v2"
	"testing"
)

// BenchmarkStackedIG: IG with 50 Gauss–Legendre-like steps on a length-200
// input, the two imported-model shapes of the benchmark suite, and on a
// length-1000 input (checkpointed lanes: one batch on one core, the
// workers' split plan on more, stacked_split.go; run -cpu 1 and -cpu 2 as
// a process each, golang/go#49980).
func BenchmarkStackedIG(b *testing.B) {
	for _, c := range []struct {
		name          string
		e, h, layers  int
		bi            bool
		steps, tokens int
	}{
		{"h256-e100-T200-steps50", 100, 256, 1, false, 50, 200},
		{"bi2-h64-e16-T200-steps50", 16, 64, 2, true, 50, 200},
		{"h256-e100-T1000-steps50", 100, 256, 1, false, 50, 1000}, // one input on every core (-cpu 1,2)
	} {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			s := randomStacked(b, rng, c.e, c.h, c.layers, c.bi, 5, 2, true)
			x := randomStackedInput(rng, c.tokens, c.e)
			alphas, weights := make([]float64, c.steps), make([]float64, c.steps)
			for k := range alphas {
				alphas[k] = (float64(k) + 0.5) / float64(c.steps)
				weights[k] = 1 / float64(c.steps)
			}
			r, _ := NewStackedRunner(s)
			grad, y, y0 := make([]float64, c.tokens*c.e), make([]float64, 5), make([]float64, 5)
			choose := func([]float64) (int, error) { return 0, nil }
			// One call first: the buffers grow to the input's length once.
			if err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, grad, y, y0, BatchOptions{}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, grad, y, y0, BatchOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			flops := float64(0)
			for k := range c.layers {
				in := c.e
				if k > 0 {
					in = c.h * s.dirs
				}
				flops += float64(s.dirs) * 2 * 4 * float64(c.h) * float64(in+c.h)
			}
			// forward and backward, every step and α.
			flops *= 2 * float64(c.tokens*c.steps)
			b.ReportMetric(flops/1e9/(b.Elapsed().Seconds()/float64(b.N)), "GFLOP/s")
		})
	}
}

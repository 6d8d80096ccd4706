package cell

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMulAdd compares the two batched products on a dense 4H×H
// recurrent matrix: axpys over lanes (kernel.AxpyRows, one per output row)
// and the register-blocked tile. GFLOP/s counts 2 flops per term.
func BenchmarkMulAdd(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, h := range []int{7, 36, 64, 256} {
		for _, lanes := range []int{1, 16, 50, 64} {
			a, src, dst := randomDense(rng, 4*h, h), randomDense(rng, h, lanes), make([]float64, 4*h*lanes)
			aT := transpose(a, 4*h, h)
			for _, impl := range []string{"axpy", "tiled"} {
				bt := &engine{tiled: impl == "tiled"}
				pr := &product{a: a, aT: aT, m: 4 * h, k: h}
				b.Run(fmt.Sprintf("impl=%s/h=%d/lanes=%d", impl, h, lanes), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						bt.mulAdd(dst, pr, 0, 4*h, src, lanes)
					}
					b.ReportMetric(float64(2*4*h*h*lanes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// BenchmarkBatchGradientSum: IG's gradient sum on a dense random network,
// batched vs one lane at a time (Lanes=1) vs the single path.
func BenchmarkBatchGradientSum(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, sz := range [][3]int{{7, 4, 256}, {64, 32, 256}} {
		h, d, steps := sz[0], sz[1], sz[2]
		n := mustNew(b, randomParams(rng, h, d, 2, true))
		x := Dense(randomDense(rng, steps, d), steps)
		alphas, weights := randomRule(rng, 64)
		acc := make([]float64, steps*d)
		for _, lanes := range []int{0, 1} {
			bt := NewBatcher(n)
			b.Run(fmt.Sprintf("h=%d/d=%d/t=%d/lanes=%d", h, d, steps, lanes), func(b *testing.B) {
				bt.GradientSum(context.Background(), x, 0, alphas, weights, acc, BatchOptions{Workers: 1, Lanes: lanes})
				b.ReportAllocs()
				for b.Loop() {
					bt.GradientSum(context.Background(), x, 0, alphas, weights, acc, BatchOptions{Workers: 1, Lanes: lanes})
				}
			})
		}
		ws := NewWorkspace(n)
		b.Run(fmt.Sprintf("h=%d/d=%d/t=%d/lanes=single", h, d, steps), func(b *testing.B) {
			n.GradientSum(ws, x, 0, alphas, weights, acc)
			b.ReportAllocs()
			for b.Loop() {
				n.GradientSum(ws, x, 0, alphas, weights, acc)
			}
		})
	}
}

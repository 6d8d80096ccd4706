package kernel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Kernel benchmarks, one sub-benchmark per implementation, so that
//
//	go test -run '^$' -bench . -benchmem -count 6 ./kernel/ > out.txt
//	benchstat -col /impl out.txt
//
// puts the implementations side by side from one run. n is the number of
// units of a gate step: H for one sequence, H·B for a batch of B in the
// gate-major layout (n=1024 is H=64 with B=16, n=4096 is H=256 with B=16).

func benchImpls(b *testing.B, f func(b *testing.B)) {
	for k, name := range implNames {
		if !supported[k] {
			continue
		}
		b.Run("impl="+name, func(b *testing.B) {
			defer setImpl(name)()
			f(b)
		})
	}
}

var benchUnits = []int{64, 256, 1024, 4096}

func BenchmarkGateStep(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		for _, n := range benchUnits {
			b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 1))
				z, cPrev := randSlice(rng, 4*n, 2), randSlice(rng, n, 1)
				gates := make([]float64, 4*n)
				zg, c, tc, h := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
				b.ReportAllocs()
				b.SetBytes(int64(8 * 14 * n)) // 4+1 values read, 4+4 written, 4 copied in
				for b.Loop() {
					copy(gates, z)
					GateStep(gates, zg, cPrev, c, tc, h)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/unit")
			})
		}
	})
}

func BenchmarkGateBackward(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		for _, n := range benchUnits {
			b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(2, 1))
				gates, tc, cPrev, dh, dc := randSlice(rng, 4*n, 0.5), randSlice(rng, n, 0.5), randSlice(rng, n, 1), randSlice(rng, n, 1), randSlice(rng, n, 1)
				dz, dcPrev := make([]float64, 4*n), make([]float64, n)
				b.ReportAllocs()
				for b.Loop() {
					GateBackward(dz, dcPrev, dh, dc, gates, tc, cPrev)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/unit")
			})
		}
	})
}

func BenchmarkLRPCell(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		for _, n := range benchUnits {
			b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(3, 1))
				gates, zg, c, cPrev, rc := randSlice(rng, 4*n, 0.5), randSlice(rng, n, 2), randSlice(rng, n, 1), randSlice(rng, n, 1), randSlice(rng, n, 1)
				rcPrev, qg := make([]float64, n), make([]float64, n)
				b.ReportAllocs()
				for b.Loop() {
					LRPCell(rcPrev, qg, rc, gates, zg, c, cPrev, 1e-3)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/unit")
			})
		}
	})
}

// BenchmarkAxpyRows is the gate pre-activation product z[0:4H] += W_hᵀ h
// over the packed, transposed weights (H rows of 4H), and the batched
// product of a batch of B sequences in the gate-major layout (rows of 4H·B).
func BenchmarkAxpyRows(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		for _, hb := range [][2]int{{16, 1}, {64, 1}, {256, 1}, {64, 16}} {
			h, batch := hb[0], hb[1]
			b.Run(fmt.Sprintf("h=%d/b=%d", h, batch), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(4, 1))
				n := 4 * h * batch
				rows, coef, dst := randSlice(rng, h*n, 0.1), randSlice(rng, h, 1), make([]float64, n)
				b.ReportAllocs()
				b.SetBytes(int64(8 * h * n))
				for b.Loop() {
					AxpyRows(dst, rows, n, coef)
				}
				b.ReportMetric(2*float64(h*n)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
			})
		}
	})
}

// BenchmarkMulAddRows is the batched engine's product: the 4H×H recurrent
// weights times H rows of lanes (one value per lane), dense, against the
// same product as one AxpyRows per output row (impl=…/kernel=axpyrows).
func BenchmarkMulAddRows(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		for _, hl := range [][2]int{{7, 64}, {64, 32}, {256, 32}, {256, 24}, {256, 64}} {
			h, l := hl[0], hl[1]
			rng := rand.New(rand.NewPCG(6, 1))
			m := 4 * h
			rows, coef, dst := randSlice(rng, h*l, 0.1), randSlice(rng, m*h, 1), make([]float64, m*l)
			for _, kern := range []string{"muladdrows", "axpyrows"} {
				b.Run(fmt.Sprintf("kernel=%s/h=%d/lanes=%d", kern, h, l), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if kern == "muladdrows" {
							MulAddRows(dst, l, rows, l, coef, h, h)
						} else {
							for r := range m {
								AxpyRows(dst[r*l:(r+1)*l], rows, l, coef[r*h:(r+1)*h])
							}
						}
					}
					b.ReportMetric(2*float64(m*h*l)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
				})
			}
		}
	})
}

func BenchmarkLRPLinear(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		for _, h := range []int{64, 256} {
			b.Run(fmt.Sprintf("h=%d", h), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(5, 1))
				// Relevance through W_g (H×D, D = H here) of the 4H×H W_h.
				rows, q, a := randSlice(rng, h*h, 0.1), randSlice(rng, h, 1), randSlice(rng, h, 1)
				dst, acc := make([]float64, h), make([]float64, h)
				b.ReportAllocs()
				for b.Loop() {
					LRPLinear(dst, acc, a, rows, h, q)
				}
				b.ReportMetric(2*float64(h*h)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
			})
		}
	})
}

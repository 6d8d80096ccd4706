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

// BenchmarkGateStepTable: the batched step of the white-box networks, n =
// 448 (sp-counter: H = 7 units × 64 lanes), with all four gates from the
// table (table=15: only tanh(c) is computed) or the input gate computed too
// (table=14), on cell states of a few units (in=mixed: |c| < 2, both tanh
// branches in most vectors) or of long counters (in=saturated: |c| ≥ 20 and
// z_i ≥ 40 in every lane, where the vector bodies skip the work).
func BenchmarkGateStepTable(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		const n = 448
		for _, table := range []int{14, 15} {
			for _, in := range []string{"mixed", "saturated"} {
				b.Run(fmt.Sprintf("n=%d/table=%d/in=%s", n, table, in), func(b *testing.B) {
					rng := rand.New(rand.NewPCG(3, 1))
					z, cPrev, act := randSlice(rng, 4*n, 2), randSlice(rng, n, 1), randSlice(rng, 4*n, 1)
					if in == "saturated" {
						for j := range n {
							z[j] = 40 + float64(j%7)     // σ(z_i) = 1
							cPrev[j] = 30 + float64(j%5) // |c| ≥ 20 with |f|, |i·g| ≤ 1
						}
					}
					gates := make([]float64, 4*n)
					c, tc, h := make([]float64, n), make([]float64, n), make([]float64, n)
					b.ReportAllocs()
					for b.Loop() {
						copy(gates[:n], z[:n])
						GateStepTable(gates, n, act, table, cPrev, c, tc, h)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/unit")
				})
			}
		}
	})
}

// BenchmarkGateStepNoTable: GateStepTable with no table, as a team's step
// on dense weights runs it (n = 12,800: H = 256 × 50 lanes, the gate
// blocks n apart), beside GateStep on the same values.
func BenchmarkGateStepNoTable(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		const n = 12800
		rng := rand.New(rand.NewPCG(5, 1))
		z, cPrev := randSlice(rng, 4*n, 2), randSlice(rng, n, 1)
		gates := make([]float64, 4*n)
		zg, c, tc, h := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		for _, table := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%d/table=%v", n, table), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					copy(gates, z)
					if table {
						GateStepTable(gates, n, nil, 0, cPrev, c, tc, h)
					} else {
						GateStep(gates, zg, cPrev, c, tc, h)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/unit")
			})
		}
	})
}

// BenchmarkGateBackwardTable: the batched backward step, n = 448, all gates
// from the table, every gradient (need=15) or only the cell candidate's
// (need=4: sp-counter's counters, whose other gates have no weights).
func BenchmarkGateBackwardTable(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		const n = 448
		for _, need := range []int{15, 4} {
			b.Run(fmt.Sprintf("n=%d/need=%d", n, need), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(4, 1))
				act, tc, cPrev, dh, dc := randSlice(rng, 4*n, 0.5), randSlice(rng, n, 0.5), randSlice(rng, n, 1), randSlice(rng, n, 1), randSlice(rng, n, 1)
				gates, dz, dcPrev := make([]float64, 4*n), make([]float64, 4*n), make([]float64, n)
				b.ReportAllocs()
				for b.Loop() {
					GateBackwardTable(dz, n, dcPrev, dh, dc, gates, act, 15, need, tc, cPrev)
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
// same product without the scan for ±0 coefficients (kernel=nonzero:
// MulAddRowsNonzero) and as one AxpyRows per output row (kernel=axpyrows).
func BenchmarkMulAddRows(b *testing.B) {
	benchImpls(b, func(b *testing.B) {
		for _, hl := range [][2]int{{7, 64}, {64, 32}, {128, 4}, {128, 8}, {256, 8}, {128, 16}, {128, 18}, {128, 50}, {256, 16}, {256, 20}, {256, 32}, {256, 24}, {256, 25}, {256, 50}, {256, 64}} {
			h, l := hl[0], hl[1]
			rng := rand.New(rand.NewPCG(6, 1))
			m := 4 * h
			rows, coef, dst := randSlice(rng, h*l, 0.1), randSlice(rng, m*h, 1), make([]float64, m*l)
			for _, kern := range []string{"muladdrows", "nonzero", "axpyrows"} {
				b.Run(fmt.Sprintf("kernel=%s/h=%d/lanes=%d", kern, h, l), func(b *testing.B) {
					if kern == "nonzero" && !Nonzero(coef) {
						b.Fatal("a ±0 coefficient")
					}
					b.ReportAllocs()
					for b.Loop() {
						switch kern {
						case "muladdrows":
							MulAddRows(dst, l, rows, l, coef, h, h)
						case "nonzero":
							MulAddRowsNonzero(dst, l, rows, l, coef, h, h)
						default:
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

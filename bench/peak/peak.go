// Package peak measures the float64 floating-point peak of the core it
// runs on: fused multiply-adds a second in a loop of independent
// accumulators, in each vector width the core has (AVX-512, AVX2+FMA,
// NEON; scalar math.FMA elsewhere). The dense benchmarks report their
// rate beside it, as a share of this machine's own limit, never of a
// figure carried from another machine (machines vary: one or two 512-bit
// FMA units, AVX-512 double-pumped on AMD cores).
package peak

import (
	"math"
	"time"
)

// A Kernel is one loop of independent float64 FMAs in one vector width.
type Kernel struct {
	Name  string      // "avx512", "avx2", "neon", "scalar"
	Flops int         // floating-point operations an iteration (2 a lane and FMA)
	run   func(n int) // n iterations
	ok    func() bool // the core has it
}

// Kernels are the loops this core can run, widest first.
func Kernels() []Kernel {
	var ks []Kernel
	for _, k := range kernels {
		if k.ok() {
			ks = append(ks, k)
		}
	}
	return append(ks, Kernel{Name: "scalar", Flops: 2 * scalarAccumulators, run: scalarLoop, ok: func() bool { return true }})
}

// Run runs n iterations of k's loop.
func (k Kernel) Run(n int) {
	if n > 0 {
		k.run(n)
	}
}

// GFLOPS measures k's rate for about d (at least one round of 1<<16
// iterations): floating-point operations a nanosecond.
func (k Kernel) GFLOPS(d time.Duration) float64 {
	n := 1 << 16
	k.Run(n) // warm-up: the core's vector units and clock
	for {
		start := time.Now()
		k.Run(n)
		el := time.Since(start)
		if el >= d || n >= 1<<30 {
			return float64(n) * float64(k.Flops) / float64(el.Nanoseconds())
		}
		n *= 2
	}
}

const scalarAccumulators = 8

// ScalarSink keeps scalarLoop's result alive (exported: an unused
// variable the compiler could drop the loop for).
var ScalarSink float64

func scalarLoop(n int) {
	var a [scalarAccumulators]float64
	x, y := 0.5, 0.5
	for range n {
		a[0] = math.FMA(x, y, a[0])
		a[1] = math.FMA(x, y, a[1])
		a[2] = math.FMA(x, y, a[2])
		a[3] = math.FMA(x, y, a[3])
		a[4] = math.FMA(x, y, a[4])
		a[5] = math.FMA(x, y, a[5])
		a[6] = math.FMA(x, y, a[6])
		a[7] = math.FMA(x, y, a[7])
	}
	ScalarSink = a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7]
}

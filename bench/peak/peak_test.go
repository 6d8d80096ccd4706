package peak

import (
	"testing"
	"time"
)

// Every kernel of this core runs and measures a positive, finite rate.
func TestKernels(t *testing.T) {
	ks := Kernels()
	if ks[len(ks)-1].Name != "scalar" {
		t.Fatalf("the last kernel is %q, not scalar", ks[len(ks)-1].Name)
	}
	for _, k := range ks {
		k.Run(0)
		g := k.GFLOPS(time.Millisecond)
		t.Logf("%s: %.1f GFLOP/s", k.Name, g)
		if !(g > 0 && g < 1e6) {
			t.Errorf("%s: %v GFLOP/s", k.Name, g)
		}
	}
}

// BenchmarkFMAPeak is the float64 FMA peak of one core, per kernel: the
// ceiling the dense benchmarks are reported against.
func BenchmarkFMAPeak(b *testing.B) {
	for _, k := range Kernels() {
		b.Run("kernel="+k.Name, func(b *testing.B) {
			const n = 1 << 16
			for b.Loop() {
				k.Run(n)
			}
			b.ReportMetric(float64(n)*float64(k.Flops)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
		})
	}
}

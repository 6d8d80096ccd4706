package cell

import (
	"math"
	"math/rand/v2"
	"testing"
)

// biasPlusScaled gives the bits of its row-by-row definition, for scales
// of either sign, zero, −0 and past the finite ones, and rows with zeros.
func TestBiasPlusScaled(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	n := 37
	u, b, got := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range u {
		if i%3 != 0 {
			u[i] = rng.NormFloat64()
		}
		if i%4 != 0 {
			b[i] = rng.NormFloat64()
		}
	}
	for _, s := range []float64{1, -0.37, 0, math.Copysign(0, -1), 1e300, math.Inf(1), math.Inf(-1), math.NaN()} {
		biasPlusScaled(got, u, s, b)
		for q := range n {
			want := b[q]
			if u[q] != 0 {
				want = math.FMA(u[q], s, b[q])
			}
			if math.Float64bits(got[q]) != math.Float64bits(want) && !(math.IsNaN(got[q]) && math.IsNaN(want)) {
				t.Fatalf("scale %v, row %d: %v, want %v", s, q, got[q], want)
			}
		}
	}
}

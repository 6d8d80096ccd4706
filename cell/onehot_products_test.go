package cell

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSymbolProducts: the one-hot input products read from W_ih's columns
// (symbolProducts) are inputProducts' bits on the same rows made dense,
// with −0 and zero weights among the columns and negative (padding)
// symbols among the steps; and a one-hot Forward, which reads the columns
// in place, gives the bits of the same input as dense rows.
func TestSymbolProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 8))
	for _, bi := range []bool{false, true} {
		s := randomStacked(t, rng, 7, 5, 1, bi, 3, 1, true)
		for d := range s.dirs { // signed zeros among the weights
			w := s.cells[d].wihT
			for i := range w {
				switch rng.IntN(5) {
				case 0:
					w[i] = math.Copysign(0, -1)
				case 1:
					w[i] = 0
				}
			}
			s.cells[d].wih = transpose(w, s.in, 4*s.h)
		}
		for _, steps := range []int{1, 2, 33, 70} {
			syms := make([]int, steps)
			dense := make([]float64, steps*s.in)
			for i := range syms {
				syms[i] = rng.IntN(s.in+1) - 1 // −1: a zero row
				if syms[i] >= 0 {
					dense[i*s.in+syms[i]] = 1
				}
			}
			n := s.dirs * steps * 4 * s.h
			want, got := make([]float64, n), make([]float64, n)
			s.inputProducts(nil, want, dense, steps, nil)
			for i := range got {
				got[i] = math.NaN()
			}
			s.symbolProducts(got, syms)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("bi %v T %d: product %d: %v (bits %x), inputProducts %v (bits %x)", bi, steps, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
				}
			}
			r, err := NewRunner(s)
			if err != nil {
				t.Fatal(err)
			}
			yd, err := r.Forward(Dense(dense, steps))
			if err != nil {
				t.Fatal(err)
			}
			yd = append([]float64(nil), yd...)
			yo, err := r.Forward(OneHot(syms))
			if err != nil {
				t.Fatal(err)
			}
			for k := range yd {
				if math.Float64bits(yo[k]) != math.Float64bits(yd[k]) {
					t.Fatalf("bi %v T %d: one-hot logit %d %v, dense rows %v", bi, steps, k, yo[k], yd[k])
				}
			}
			r.Close()
		}
	}
}

package cell

import (
	"math"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// Sparse products of the engine. The white-box networks run as
// models (the white-box networks) have weight matrices with few nonzero
// entries; kernel.MulAddRows tests every coefficient of every output row
// for each of them, where one axpy per nonzero term does the same work,
// (matmul.go's sparseTerms). MulAddRows skips exactly the
// terms whose coefficient (the weight) is ±0 and adds the others in order
// of j, one fused multiply-add each, which is what the axpys over the
// nonzero terms in ascending column order do: the same bits.

// cellTerms are the sparse terms of one cell's four matrices, each nil
// when the matrix is too dense (sparseOf).
type cellTerms struct {
	wih, whh, wihT, whhT *sparseTerms
}

// sparseOf returns the terms of the m×k matrix a when at most
// sparseMaxDensity of its entries are nonzero, else nil.
func sparseOf(a []float64, m, k int) *sparseTerms {
	nz := 0
	for _, v := range a[:m*k] {
		if v != 0 {
			nz++
		}
	}
	if float64(nz) > sparseMaxDensity*float64(m*k) {
		return nil
	}
	return newSparseTerms(a, m, k)
}

// mulAddSparse is mulAddLanes over the terms sp of a for the rows [r0, r1):
// dst[r] += a[r][c0+j]·src[j] for the nonzero terms with c0 ≤ c0+j < c0+k,
// in order of j: kernel.Axpy with sparseMinLanes lanes or more, fewer (IG's
// pass of x and its zero copy, two lanes) the same fused multiply-adds in
// a loop, where a call per term would cost more than the term.
func mulAddSparse(dst []float64, sp *sparseTerms, r0, r1, k, c0 int, src []float64, l int) {
	for r := r0; r < r1; r++ {
		d := dst[r*l : (r+1)*l]
		for q := sp.start[r]; q < sp.start[r+1]; q++ {
			j := sp.src[q] - c0
			if uint(j) >= uint(k) {
				continue
			}
			a, x := sp.coef[q], src[j*l:(j+1)*l]
			if l >= sparseMinLanes {
				kernel.Axpy(a, x, d)
				continue
			}
			for i, v := range x[:len(d)] {
				d[i] = math.FMA(a, v, d[i])
			}
		}
	}
}

// sparse reports whether the first layer's recurrent product runs on
// sparse terms (an axpy per nonzero weight).
func (s *Model) sparse() bool { return s.cells[0].terms.whh != nil }

package cell

import (
	"github.com/whitebox-lstm/whitebox/kernel"
)

// sparseMaxDensity is the largest share of nonzero weights for which a
// product runs as one axpy per nonzero term instead of kernel.MulAddRows,
// which tests every coefficient. Measured, IG sp-counter T = 256, 1000
// steps, 1 thread (4 of W_h's 196 entries, 7 of W_x's 112 are nonzero): the
// products went from 24% to 13% of the time, 8.3 → 8.0 ms in all.
const sparseMaxDensity = 0.25

// sparseMinLanes is the fewest lanes for which a sparse product runs as
// axpys over its terms: below a whole AVX-512 vector each axpy is mostly call
// overhead (measured: occlusion sp-fsa T = 16, in batches of 2 lanes, spent
// 29% of its time in such axpys; with this bound 290 → 226 µs).
const sparseMinLanes = 8

// sparseTerms lists the nonzero entries of a matrix row by row: those of row
// r are src[start[r]:start[r+1]] (their columns, ascending) and the same
// range of coef.
type sparseTerms struct {
	start, src []int
	coef       []float64
}

func newSparseTerms(a []float64, m, k int) *sparseTerms {
	t := &sparseTerms{start: make([]int, m+1)}
	for r := range m {
		for j, v := range a[r*k : (r+1)*k] {
			if v != 0 {
				t.src = append(t.src, j)
				t.coef = append(t.coef, v)
			}
		}
		t.start[r+1] = len(t.src)
	}
	return t
}

// l1Words is the part of the L1 data cache a block of src may fill: two
// thirds of it (32 KiB of the 48 KiB where this was measured), in words.
var l1Words = func() int { l1d, _ := kernel.Caches(); return l1d * 2 / 3 / 8 }()

package cell

import (
	"math"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// product is a weight matrix of the batched engine's products: a (m×k,
// row-major), its transpose aT (k×m), and, when few of its entries are
// nonzero, the list of those (terms).
type product struct {
	a, aT []float64
	m, k  int
	terms *sparseTerms // nil: dense enough for kernel.MulAddRows
}

// newProduct returns the product of a and aT, with its terms when at most
// sparseMaxDensity of the entries are nonzero.
func newProduct(a, aT []float64, m, k int) *product {
	return &product{a: a, aT: aT, m: m, k: k, terms: sparseOf(a, m, k)}
}

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

// mulAdd adds the rows [r0, r1) of the product of p's matrix a and the k×l
// matrix src to the m×l matrix dst (rows of l lanes): for r0 ≤ r < r1,
//
//	dst[r*l : (r+1)*l] += Σ_j a[r*k+j] · src[j*l : (j+1)*l]
//
// with one fused multiply-add per term, j in order. Per element this is the
// sequence of operations of the single path's kernel.AxpyRows over the
// transposed matrix, so every lane gets the single path's bits; terms with a
// zero factor may be skipped (see package kernel). With one lane the
// product is one AxpyRows over aT, rows of m values, as on the single path;
// a sparse matrix runs one axpy per nonzero term, which skips exactly the
// zero terms (with at least sparseMinLanes lanes).
func (b *engine) mulAdd(dst []float64, p *product, r0, r1 int, src []float64, l int) {
	m, k := p.m, p.k
	if r0 >= r1 {
		return
	}
	if l == 1 {
		kernel.AxpyRows(dst[r0:r1], p.aT[r0:], m, src[:k])
		return
	}
	if t := p.terms; t != nil && l >= sparseMinLanes {
		mulAddSparse(dst, t, r0, r1, k, 0, src, l)
		return
	}
	dst, a := dst[r0*l:r1*l], p.a[r0*k:]
	m = r1 - r0
	if b.tiled && l >= tileLanes && m >= tileRows {
		mulAddTiled(dst, a, m, k, src, l)
		return
	}
	// Blocks of kb rows of src, small enough to stay in the L1 cache while
	// every output row takes its terms from them. Each element still gets
	// its terms in order of j, block after block.
	// kernel.MulAddRows keeps a tile of output rows in registers while it
	// runs over a block's rows.
	kb := max(8, l1Words/l)
	for j0 := 0; j0 < k; j0 += kb {
		j1 := min(j0+kb, k)
		kernel.MulAddRows(dst, l, src[j0*l:j1*l], l, a[j0:], k, j1-j0)
	}
}

// l1Words is the part of the L1 data cache a block of src may fill: two
// thirds of it (32 KiB of the 48 KiB where this was measured), in words.
var l1Words = func() int { l1d, _ := kernel.Caches(); return l1d * 2 / 3 / 8 }()

// The register-blocked product keeps a tile of tileRows×tileLanes sums in
// registers while it runs over j, instead of loading and storing dst once
// per term as an axpy does.
//
// Measured on this machine (BenchmarkMulAdd: a dense 4H×H matrix times
// H×lanes, GFLOP/s at 2 flops per term, count 1):
//
//	                       H=7/64 lanes  H=36/64  H=64/64  H=256/16  H=256/64
//	pure-Go AxpyRows            3.1        2.9      3.1      3.1       3.1
//	pure-Go 4×2 tile            3.5        4.2      4.9      4.6       4.5
//	AVX-512 AxpyRows           44.8       60.0     60.3     16.2      25.8
//	 + src blocks in L1        40.9       54.6     59.5     15.8      54.8
//
// (Those axpys are now kernel.MulAddRows, which keeps a tile of 6 output
// rows × up to 32 lanes in registers and is bit-identical to them: on the
// same benchmark 51 GFLOP/s at H=7/64 lanes, 77 at H=64/32 and 72–79 at
// H=256/32–64 with AVX-512; see kernel's BenchmarkMulAddRows.)
//
// With the pure-Go kernels (GOAMD64=v1; with v3, 4.5 vs 8.5 at H=256) the
// tile wins for dense weights. With the SIMD kernels the axpys over rows of
// 64 lanes win by an order of magnitude, provided the rows of src they read
// stay in the L1 cache (the last line: blocks of src of 32 KiB, which
// changes no bit since every element still takes its terms in order).
// The white-box networks' weights are mostly zero (sp-counter: 4 of W_h's
// 196 entries), and there the axpys win in every case: AxpyRows skips zero
// coefficients, the tile cannot. Hence the rule in useTiled: the tile only
// for dense, wide networks on the pure-Go kernels.
const (
	tileRows  = 4
	tileLanes = 2
)

// tiledMinHidden and tiledMinDensity decide when the register-blocked
// product replaces the axpys: for wide, dense recurrent weights. The
// white-box networks have sparse weights, and there the axpys win by
// skipping the zero rows (see useTiled).
const (
	tiledMinHidden  = 32
	tiledMinDensity = 0.5
)

// useTiled reports whether n's products should use mulAddTiled: only when
// the kernels are the pure-Go twins.
func useTiled(n *Network) bool {
	if kernel.Impl() != "generic" || n.h < tiledMinHidden {
		return false
	}
	nz := 0
	for _, v := range n.p.Wh {
		if v != 0 {
			nz++
		}
	}
	return float64(nz) >= tiledMinDensity*float64(len(n.p.Wh))
}

// mulAddTiled is mulAdd with register blocking. Terms with a zero factor are
// not skipped, which changes no bit (see package kernel).
func mulAddTiled(dst, a []float64, m, k int, src []float64, l int) {
	src = src[:k*l]
	r := 0
	for ; r+tileRows <= m; r += tileRows {
		a0 := a[r*k : (r+1)*k]
		a1 := a[(r+1)*k : (r+2)*k]
		a2 := a[(r+2)*k : (r+3)*k]
		a3 := a[(r+3)*k : (r+4)*k]
		d0 := dst[r*l : (r+1)*l]
		d1 := dst[(r+1)*l : (r+2)*l]
		d2 := dst[(r+2)*l : (r+3)*l]
		d3 := dst[(r+3)*l : (r+4)*l]
		c := 0
		for ; c+tileLanes <= l; c += tileLanes {
			s00, s01 := d0[c], d0[c+1]
			s10, s11 := d1[c], d1[c+1]
			s20, s21 := d2[c], d2[c+1]
			s30, s31 := d3[c], d3[c+1]
			for j := range k {
				x := src[j*l+c : j*l+c+2]
				x0, x1 := x[0], x[1]
				w0, w1, w2, w3 := a0[j], a1[j], a2[j], a3[j]
				s00 = math.FMA(w0, x0, s00)
				s01 = math.FMA(w0, x1, s01)
				s10 = math.FMA(w1, x0, s10)
				s11 = math.FMA(w1, x1, s11)
				s20 = math.FMA(w2, x0, s20)
				s21 = math.FMA(w2, x1, s21)
				s30 = math.FMA(w3, x0, s30)
				s31 = math.FMA(w3, x1, s31)
			}
			d0[c], d0[c+1] = s00, s01
			d1[c], d1[c+1] = s10, s11
			d2[c], d2[c+1] = s20, s21
			d3[c], d3[c+1] = s30, s31
		}
		for ; c < l; c++ {
			s0, s1, s2, s3 := d0[c], d1[c], d2[c], d3[c]
			for j := range k {
				x := src[j*l+c]
				s0 = math.FMA(a0[j], x, s0)
				s1 = math.FMA(a1[j], x, s1)
				s2 = math.FMA(a2[j], x, s2)
				s3 = math.FMA(a3[j], x, s3)
			}
			d0[c], d1[c], d2[c], d3[c] = s0, s1, s2, s3
		}
	}
	for ; r < m; r++ {
		kernel.AxpyRows(dst[r*l:(r+1)*l], src, l, a[r*k:(r+1)*k])
	}
}

package cell

// Wide input products. A layer above the first reads the layer below's
// outputs, which checkpointed lanes that keep the boundaries hold for the
// whole input (ck.out): the input products W_ih·(in0, in1) of a segment's
// steps do not wait for the recurrence. A step's product on a batch of
// few lanes (8 to 18 on long inputs at the default budget) streams W_ih
// through the cache for a few multiply-adds per weight; the products of
// several steps at a time, their lanes side by side as the columns of one
// product (wideCols of them), reuse each weight that many times. Every
// element of z is still b plus the terms of (in0, in1) in order, one fused
// multiply-add each (kernel.MulAddRows' guarantee, whatever the number of
// columns), then the recurrent terms: the bits of the step's own products.

// wideCols is the columns of a wide product: about as many as a batch of
// 64 lanes, whose products ran at 45 of the core's 47–51 GFLOP/s
// (BENCHMARKS.md, "A core's FMAs on long inputs").
const wideCols = 64

// wideOn lets checkpointed lanes compute input products wide (tests turn
// it off to compare).
var wideOn = true

// widens reports whether cell ci of r's checkpointed lanes computes its
// input products wide for l lanes: a layer above the first whose inputs
// are kept, dense weights, two steps or more a product, and no team (a
// team splits each step's products instead).
func (r *lanes) widens(ci, l int) bool {
	cl := &r.s.cells[ci]
	return wideOn && cl.layer > 0 && r.ck != nil && r.ck.out != nil && r.team == nil &&
		cl.terms.wih == nil && l > 1 && 2*l <= wideCols
}

// wideBytes is the memory of the buffers of wide products of s's
// checkpointed lanes that keep the boundaries: theirs and a pipeline
// helper's.
func (s *Model) wideBytes() int64 {
	return 2 * 8 * int64(4*s.h+s.h*s.dirs) * wideCols
}

// newWideBuffers returns the buffers of wide products: 4H×wideCols for
// the products, (H·dirs)×wideCols for their inputs.
func newWideBuffers(s *Model) (z, in []float64) {
	return make([]float64, 4*s.h*wideCols), make([]float64, s.h*s.dirs*wideCols)
}

// wideBuffers makes r's buffers of wide products on first use.
func (r *lanes) wideBuffers() {
	if r.wideZ == nil {
		r.wideZ, r.wideIn = newWideBuffers(r.s)
	}
}

// wideInputs sets z of every step of segment sg of cell ci to b + W_ih·(in0,
// in1), wideCols/l steps at a time. It reports false if r's stopper ended
// it.
func (r *lanes) wideInputs(ci, sg, l int) bool {
	s, ck := r.s, r.ck
	cl, tr := &s.cells[ci], &r.cells[ci]
	h, g, in := s.h, 4*s.h, s.cells[ci].in
	hl, gl := h*l, g*l
	r.wideBuffers()
	below := ci - s.dirs - cl.dir // the first cell of the layer below
	t0, t1 := ck.segRange(sg)
	js := wideCols / l
	for a := t0; a < t1; a += js {
		b := min(a+js, t1)
		c := (b - a) * l
		if r.stop.spend(g * in * c) {
			return false
		}
		src, zw := r.wideIn[:in*c], r.wideZ[:g*c]
		for k := range in { // row k of the inputs: unit k%h of the cell below+k/h
			out := ck.out[below+k/h]
			u := k % h
			for t := a; t < b; t++ {
				copy(src[k*c+(t-a)*l:k*c+(t-a+1)*l], out[t*hl+u*l:t*hl+(u+1)*l])
			}
		}
		for q, bq := range cl.b[:g] {
			row := zw[q*c : (q+1)*c]
			for i := range row {
				row[i] = bq
			}
		}
		mulAddLanes(zw, cl.wih, cl.wihT, s.nonzero, g, in, in, 0, src, c)
		for t := a; t < b; t++ {
			z := tr.z[(t-t0)*gl : (t-t0+1)*gl]
			for q := range g {
				copy(z[q*l:(q+1)*l], zw[q*c+(t-a)*l:q*c+(t-a+1)*l])
			}
		}
	}
	return true
}

// wideBelow adds W_ihᵀ·dz of every step of segment sg of cell ci to below
// (the gradient of the layer below's outputs over sg), wideCols/l steps at
// a time, where backSegment left each step's dz in z (a step's gates are
// not read after its backward step). Every element of below gets the terms
// of its step in order after what it held, as from the step's own product.
// It reports false if r's stopper ended it.
func (r *lanes) wideBelow(ci, sg int, below []float64, l int) bool {
	s, ck := r.s, r.ck
	cl, tr := &s.cells[ci], &r.cells[ci]
	g, m := 4*s.h, s.cells[ci].in
	gl, ml := g*l, m*l
	r.wideBuffers()
	t0, t1 := ck.segRange(sg)
	n, js := t1-t0, wideCols/l
	for a := 0; a < n; a += js {
		b := min(a+js, n)
		c := (b - a) * l
		if r.stop.spend(g * m * c) {
			return false
		}
		src, dst := r.wideZ[:g*c], r.wideIn[:m*c]
		for j := a; j < b; j++ {
			for q := range g {
				copy(src[q*c+(j-a)*l:q*c+(j-a+1)*l], tr.z[j*gl+q*l:j*gl+(q+1)*l])
			}
			for q := range m {
				copy(dst[q*c+(j-a)*l:q*c+(j-a+1)*l], below[j*ml+q*l:j*ml+(q+1)*l])
			}
		}
		mulAddLanes(dst, cl.wihT, cl.wih, s.nonzero, m, g, g, 0, src, c)
		for j := a; j < b; j++ {
			for q := range m {
				copy(below[j*ml+q*l:j*ml+(q+1)*l], dst[q*c+(j-a)*l:q*c+(j-a+1)*l])
			}
		}
	}
	return true
}

package cell

import (
	"math"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// models run on lanes: the variants of one input that a batch
// carries side by side (IG's α-scaled copies, Occlusion's occluded copies;
// one lane for the single-input methods), in a gate-major layout
// [gate][unit][lane]. A gate step is one kernel.GateStep over H·l values and
// each product one kernel.MulAddRows with the lanes along the rows, so every
// lane gets the operations of a one-lane pass in the same order: the same
// bits whatever the number of lanes.

// cellTrace is the trace of one direction of one layer over T steps of l
// lanes, by time step t (not by processing order).
type cellTrace struct {
	z         []float64 // T×4H×l: the activations i, f, g, o after GateStep
	zg        []float64 // T×H×l: z_g before tanh (LRP only, else H×l scratch)
	c, tc, hs []float64 // T×H×l (hs 2×H×l on lanes.hRing)
	pre       []float64 // T×4H×l: the pre-activations z (DeepLIFT only, else nil)
}

// lanes holds the buffers of one goroutine running a model on up to
// l lanes and T steps.
type lanes struct {
	s         *Model
	stop      *stopper     // ends a single pass early (nil: never)
	ck        *checkpoints // non-nil: the traces hold one segment (checkpoint.go)
	pipe      *pipeline    // non-nil: checkpointed lanes that may pipe on a team (pipeline.go)
	wideZ     []float64    // 4H×wideCols, made on first use: a wide input product (wide_inputs.go)
	wideIn    []float64    // (H·dirs)×wideCols: its inputs
	team      *team        // non-nil: the products run on it (team.go)
	ts        teamStep     // the step a team runs (team_steps.go)
	prefix    *lanes       // non-nil: forward starts at step from, after prefix's states (occlusion_prefix.go)
	from      int
	ring      bool // the trace holds two steps, step t in slot t&1 (ring.go)
	hRing     bool // the trace holds h of two steps, step t in slot t&1 (newWorkerLanes)
	l, steps  int  // capacity
	keepZg    bool
	cells     []cellTrace
	zero      []float64 // H×l zeros
	zeroGates []float64 // 4H zeros: a padding symbol's input product (cols)
	dh, dc    []float64 // H×l
	dcPrev    []float64 // H×l
	dz        []float64 // 4H×l
	gx        []float64 // E×l: one-hot IG's input gradients (inputGrads)
	tb        laneTables
	dOut      [2][]float64
	lin       []float64   // C×l
	scale     []float64   // l: the factor of layer 0's input products per lane
	occluded  []int       // l: the step whose input a lane zeroes, or −1
	h0, c0    []float64   // one lane: the initial states, cell by cell (ForwardFrom); nil: zero
	cols      []int       // one lane, one-hot input: its symbols, whose products are W_ih's columns (forward reads them in place of u); nil: u's
	row, acc  []float64   // max(E, H·dirs): LRP's layer input and scratch
	planes    [][]float64 // per cell, 4H×l: the bias broadcast to the lanes
	planeL    int         // the l the planes are for
	logitsBuf []float64   // C×l

	// IG's whole-trace lanes of a model whose backward needs no c_{t−1}
	// and no h_t may keep c and h of two steps (stateRing; ringC: this
	// pass does).
	ringIG, ringC bool

	// The head's (head_pool.go): v and its gradient (D×l), max's
	// maximising steps, the hidden layer's a, act(a) and ∂/∂a (Units×l),
	// and LRP's one-lane R_v, v and the hidden layer's q (D, D, Units).
	v, dv, a, u, da    []float64
	argmax             []int
	relV, headIn, relU []float64
	att                *attnLanes // the attention head's (head_attention.go), made on first use
}

// TraceBytes is the memory of one traced pass over an input of steps
// steps (Forward, Gradient, LRP): the trace of every layer and direction
// and the input products of the first layer.
func (s *Model) TraceBytes(steps int) int64 {
	return s.laneBytes(1, steps, true) + 8*int64(s.dirs)*int64(steps)*4*int64(s.h)
}

// laneBytes is the memory of lanes for l lanes and T steps (float64s × 8).
func (s *Model) laneBytes(l, steps int, keepZg bool) int64 {
	return s.laneBytesOf(l, steps, keepZg, false)
}

// workerLaneBytes is the memory of newWorkerLanes' lanes.
func (s *Model) workerLaneBytes(l, steps int) int64 {
	return s.laneBytesOf(l, steps, false, s.ringOK())
}

// laneBytesOf is the memory of lanes for l lanes and T steps, with h of
// two steps only if hRing.
func (s *Model) laneBytesOf(l, steps int, keepZg, hRing bool) int64 {
	h, n := int64(s.h), int64(len(s.cells))
	words := n * s.cellWords(steps, keepZg, hRing)
	if s.writesDOut() {
		words += 2 * int64(steps) * h * int64(s.dirs) // dOut, two layers
	}
	words += 8*h + 3*int64(s.c) + 2*h + 2 + s.headWords() + s.attnStepWords(steps)
	return 8 * words * int64(l)
}

// writesDOut reports whether backprop through s passes a gradient of a
// layer's output sequence (lanes.dOut): a layer above, or a head that
// reads every step, writes one.
func (s *Model) writesDOut() bool { return len(s.cells) > s.dirs || s.p.Head.dense() }

// newLanes returns lanes for l lanes and T steps that keep the whole trace
// (with z_g if keepZg).
func newLanes(s *Model, l, steps int, keepZg bool) *lanes {
	return newLanesOf(s, l, steps, keepZg, false)
}

// newWorkerLanes returns the lanes of a batched method's worker: where
// nothing but the head reads h, at the last step (one layer, one
// direction, ring.go's ringOK), h of two steps only (IG on
// H = 256: 7H → 6H float64s a lane and step); backprop reads z, c and tc.
func newWorkerLanes(s *Model, l, steps int) *lanes {
	return newLanesOf(s, l, steps, false, s.ringOK())
}

// hSteps is the steps of h that lanes of T steps keep.
func hSteps(steps int, hRing bool) int {
	if hRing {
		return min(steps, 2)
	}
	return steps
}

func newLanesOf(s *Model, l, steps int, keepZg, hRing bool) *lanes {
	h := s.h
	r := &lanes{s: s, l: l, steps: steps, keepZg: keepZg, hRing: hRing}
	for range s.cells {
		r.cells = append(r.cells, newCellTrace(s, l, steps, keepZg, hRing))
	}
	if s.writesDOut() {
		for i := range r.dOut {
			r.dOut[i] = bigFloats(steps * h * s.dirs * l)
		}
	}
	r.zero = make([]float64, h*l)
	r.zeroGates = make([]float64, 4*h)
	r.planes = make([][]float64, len(s.cells))
	for ci := range r.planes {
		r.planes[ci] = make([]float64, 4*h*l)
	}
	r.dh, r.dc, r.dcPrev = make([]float64, h*l), make([]float64, h*l), make([]float64, h*l)
	r.dz = make([]float64, 4*h*l)
	r.lin = make([]float64, s.c*l)
	r.logitsBuf = make([]float64, s.c*l)
	r.row = make([]float64, max(s.in, h*s.dirs))
	r.acc = make([]float64, max(s.in, h*s.dirs))
	r.scale = make([]float64, l)
	r.occluded = make([]int, l)
	r.newHeadBuffers()
	return r
}

// cellWords is the memory, in words a lane, of newCellTrace's trace of T
// steps.
func (s *Model) cellWords(steps int, keepZg, hRing bool) int64 {
	h := int64(s.h)
	words := int64(steps)*h*6 + int64(hSteps(steps, hRing))*h // z (4H), c and tc; h
	if keepZg {
		return words + int64(steps)*h
	}
	return words + h
}

// newCellTrace returns the trace of one cell for l lanes and T steps.
func newCellTrace(s *Model, l, steps int, keepZg, hRing bool) cellTrace {
	h := s.h
	t := cellTrace{
		z: bigFloats(steps * 4 * h * l), c: bigFloats(steps * h * l),
		tc: bigFloats(steps * h * l), hs: bigFloats(hSteps(steps, hRing) * h * l),
	}
	if keepZg {
		t.zg = bigFloats(steps * h * l)
	} else {
		t.zg = make([]float64, h*l)
	}
	return t
}

// fits reports whether r holds l lanes of T steps.
func (r *lanes) fits(l, steps int, keepZg bool) bool {
	return r != nil && r.ck == nil && l <= r.l && steps <= r.steps && (!keepZg || r.keepZg)
}

// order returns the t of the i-th step a direction processes.
func order(reverse bool, i, steps int) int {
	if reverse {
		return steps - 1 - i
	}
	return i
}

// forward runs l lanes of the dense input x (T×E, unscaled) through the
// model: lane j reads r.scale[j]·x with row r.occluded[j] set to zero. u
// holds layer 0's input products W_ih·x_t of each direction (dirs×T×4H,
// see inputProducts). It leaves the trace in r and the logits, C×l, in
// r.logitsBuf.
//
// Checkpointed lanes (r.ck set, setInput called) ignore u: they compute
// the input products per segment.
func (r *lanes) forward(u []float64, steps, l int) {
	if r.ck != nil {
		r.forwardCk(l)
		return
	}
	s := r.s
	h, g := s.h, 4*s.h
	hl, gl := h*l, g*l
	r.broadcastBiases(l)
	r.fillTables(l)
	r.ringC = r.ringIG && r.tablesOn(0, l)
	from := 0
	if r.prefix != nil {
		from = r.from
	}
	for ci := range s.cells {
		cl := &s.cells[ci]
		tr := &r.cells[ci]
		if from > 0 {
			r.startFrom(ci, from, l)
		}
		work := s.stepWork(ci, l)
		// One lane of layer 0 of an LSTM (Forward, the gradient and LRP
		// passes) runs stepForward's l = 1 work in the loop: on the small
		// white-box networks the call's thirteen slices cost a fifth of
		// the time.
		inline := l == 1 && cl.layer == 0 && s.p.Kind == LayerLSTM && tr.pre == nil && r.team == nil
		for i := from; i < steps; i++ {
			if r.stop.spend(work) {
				return
			}
			t := order(cl.reverse, i, steps)
			st, sc := r.slot(t), r.stateSlot(t) // where step t lies in the trace
			var ut, in0, in1, cPrev, hPrev []float64
			if cl.layer == 0 {
				ut = r.inputProduct(u, cl, t, steps)
			} else {
				below := ci - s.dirs - cl.dir // the forward direction of the layer below
				in0 = r.cells[below].hs[t*hl : (t+1)*hl]
				if s.dirs == 2 {
					in1 = r.cells[below+1].hs[t*hl : (t+1)*hl]
				}
			}
			cPrev = r.zero
			if i > 0 {
				tp := order(cl.reverse, i-1, steps)
				cs, hs := r.stateSlot(tp), r.hSlot(tp)
				cPrev, hPrev = tr.c[cs*hl:(cs+1)*hl], tr.hs[hs*hl:(hs+1)*hl]
			} else if r.h0 != nil { // ForwardFrom: one lane
				cPrev, hPrev = r.c0[ci*h:(ci+1)*h], r.h0[ci*h:(ci+1)*h]
			}
			zg := tr.zg[:hl]
			if r.keepZg {
				zg = tr.zg[t*hl : (t+1)*hl]
			}
			sh := r.hSlot(t)
			if inline {
				z := tr.z[st*g : (st+1)*g]
				biasPlusScaled(z, ut, r.scale[0], cl.b)
				if r.occluded[0] == t {
					copy(z, cl.b)
				}
				if hPrev != nil {
					kernel.AxpyRows(z, cl.whhT, g, hPrev[:h])
				}
				kernel.GateStep(z, zg, cPrev, tr.c[sc*h:(sc+1)*h], tr.tc[st*h:(st+1)*h], tr.hs[sh*h:(sh+1)*h])
				continue
			}
			r.stepForward(ci, t, tr.z[st*gl:(st+1)*gl], ut, in0, in1, hPrev, cPrev, zg, tr.c[sc*hl:(sc+1)*hl], tr.tc[st*hl:(st+1)*hl], tr.hs[sh*hl:(sh+1)*hl], l)
		}
	}
	r.decode(steps, l)
}

// inputProduct returns W_ih·x_t of layer-0 cell cl: u's row, or for
// one-hot lanes (r.cols) the column of the symbol read in place (a
// negative symbol's row is zero). The column's −0 where u holds +0 makes
// no difference: stepForward adds b alone where a product is zero.
func (r *lanes) inputProduct(u []float64, cl *packedCell, t, steps int) []float64 {
	g := 4 * r.s.h
	if r.cols == nil {
		return u[(cl.dir*steps+t)*g : (cl.dir*steps+t+1)*g]
	}
	if sym := r.cols[t]; sym >= 0 {
		return cl.wihT[sym*g : (sym+1)*g]
	}
	return r.zeroGates
}

// stepForward runs time step t of cell ci for l lanes: z = b + the input
// products (layer 0: s_j·ut per lane, b alone where the lane's row t is
// occluded; above: W_ih·(in0, in1), the outputs of the layer below), plus
// W_hh·hPrev unless hPrev is nil (the first step), then the gate step
// from cPrev into zg, c, tc and h.
func (r *lanes) stepForward(ci, t int, z, ut, in0, in1, hPrev, cPrev, zg, c, tc, h []float64, l int) {
	s := r.s
	cl := &s.cells[ci]
	g, hd := 4*s.h, s.h
	if l > 1 { // (one lane has neither tables nor a team)
		if r.tablesOn(ci, l) {
			r.stepForwardTable(t, z, ut, hPrev, cPrev, c, tc, h, l)
			return
		}
		if tm := r.stepTeam(ci, l); tm != nil {
			r.teamForward(tm, ci, t, z, ut, in0, in1, hPrev, cPrev, c, tc, h, l)
			return
		}
	}
	if cl.layer == 0 {
		// z = b + s_j·u_t per lane: fma(u, s_j, b), and b alone where u = 0
		// or the lane's row is occluded. fma(u, 0, b) is b, since b is
		// never −0. One lane does it without a call per row.
		if l == 1 {
			biasPlusScaled(z, ut, r.scale[0], cl.b)
			if r.occluded[0] == t {
				copy(z[:g], cl.b)
			}
		} else {
			r.inputRows(ci, t, z, ut, l, 0, g)
		}
	} else if in0 != nil { // (nil: z holds them, wideInputs)
		copy(z, r.planes[ci][:g*l])
		r.mulAdd(z, cl.wih, cl.wihT, cl.terms.wih, g, hd, cl.in, 0, in0, l)
		if in1 != nil {
			r.mulAdd(z, cl.wih, cl.wihT, cl.terms.wih, g, hd, cl.in, hd, in1, l)
		}
	}
	if hPrev != nil {
		if l == 1 && r.team == nil { // mulAddLanes' one lane, without the calls between
			kernel.AxpyRows(z[:g], cl.whhT, g, hPrev[:hd])
		} else {
			r.mulAdd(z, cl.whh, cl.whhT, cl.terms.whh, g, hd, hd, 0, hPrev, l)
		}
	}
	if pre := r.cells[ci].pre; pre != nil { // DeepLIFT's whole-trace lanes
		copy(pre[t*g*l:(t+1)*g*l], z)
	}
	if s.p.Kind == LayerGRU {
		if !r.keepZg {
			zg = nil
		}
		gruStep(z, len(c), zg, cPrev, c, tc, h)
		return
	}
	kernel.GateStep(z, zg, cPrev, c, tc, h)
}

// inputRows sets the rows [r0, r1) of layer 0's z (cell ci, step t) for
// l ≥ 2 lanes: b + s_j·u_t per lane, fma(u, s_j, b), and b alone where
// u = 0 or the lane's row t is occluded.
func (r *lanes) inputRows(ci, t int, z, ut []float64, l, r0, r1 int) {
	copy(z[r0*l:r1*l], r.planes[ci][r0*l:r1*l])
	scale := r.scale[:l]
	for row := r0; row < r1; row++ {
		if uq := ut[row]; uq != 0 {
			kernel.Axpy(uq, scale, z[row*l:(row+1)*l])
		}
	}
	r.occludeRows(ci, t, z, l, r0, r1)
}

// occludeRows sets the rows [r0, r1) of z to cell ci's bias in the lanes
// whose row t is occluded.
func (r *lanes) occludeRows(ci, t int, z []float64, l, r0, r1 int) {
	b := r.s.cells[ci].b
	for j, o := range r.occluded[:l] {
		if o == t {
			for row := r0; row < r1; row++ {
				z[row*l+j] = b[row]
			}
		}
	}
}

// biasPlusScaled sets z = b + s·u for one lane: fma(u_q, s, b_q), and b_q
// alone where u_q = 0, as kernel.Axpy(u_q, [s], [b_q]) does row by row.
// With s finite, fma(0, s, b_q) is b_q (b is never −0), so one vectorized
// kernel.Axpy over all rows gives the same bits.
func biasPlusScaled(z, u []float64, s float64, b []float64) {
	u, b = u[:len(z)], b[:len(z)]
	if !math.IsInf(s, 0) && !math.IsNaN(s) {
		copy(z, b)
		kernel.Axpy(s, u, z)
		return
	}
	for q, uq := range u {
		if uq != 0 {
			z[q] = math.FMA(uq, s, b[q])
		} else {
			z[q] = b[q]
		}
	}
}

// broadcast writes the values of v to l lanes of dst ([unit][lane]).
func broadcast(dst, v []float64, l int) {
	for i, x := range v {
		row := dst[i*l : (i+1)*l]
		for j := range row {
			row[j] = x
		}
	}
}

// broadcastBiases fills the bias planes for l lanes.
func (r *lanes) broadcastBiases(l int) {
	if r.planeL == l {
		return
	}
	for ci := range r.s.cells {
		broadcast(r.planes[ci][:4*r.s.h*l], r.s.cells[ci].b, l)
	}
	r.planeL = l
}

// final returns the states the decoder reads of direction dir of the top
// layer: h after the last step it processed.
func (r *lanes) final(dir, steps, l int) []float64 {
	s := r.s
	ci := len(s.cells) - s.dirs + dir
	t := r.hSlot(order(s.cells[ci].reverse, steps-1, steps))
	hl := s.h * l
	return r.cells[ci].hs[t*hl : (t+1)*hl]
}

// mulAddLanes adds to dst (m rows of l lanes) the product of the columns
// [c0, c0+k) of a (m×cols, row-major; aT its cols×m transpose) and src (k
// rows of l lanes): dst[r] += Σ_j a[r][c0+j]·src[j], one fused multiply-add
// per term in order of j. One lane runs kernel.AxpyRows over aT, more lanes
// kernel.MulAddRows in blocks of src that stay in the L1 cache: the same
// operations either way; nz says that no element of a is ±0 (weights,
// Model.nonzero: kernel.MulAddRowsNonzero).
func mulAddLanes(dst, a, aT []float64, nz bool, m, k, cols, c0 int, src []float64, l int) {
	if l == 1 {
		kernel.AxpyRows(dst[:m], aT[c0*m:], m, src[:k])
		return
	}
	kb := evenBlocks(k, max(8, l1Words/l))
	for j0 := 0; j0 < k; j0 += kb {
		j1 := min(j0+kb, k)
		mulAddRows(nz, dst[:m*l], l, src[j0*l:j1*l], l, a[c0+j0:], cols, j1-j0)
	}
}

// mulAddRows is kernel.MulAddRows, or kernel.MulAddRowsNonzero with nz.
func mulAddRows(nz bool, dst []float64, n int, rows []float64, stride int, coef []float64, coefStride, k int) {
	if nz {
		kernel.MulAddRowsNonzero(dst, n, rows, stride, coef, coefStride, k)
		return
	}
	kernel.MulAddRows(dst, n, rows, stride, coef, coefStride, k)
}

// evenBlocks is the length of the fewest blocks of at most most of k
// terms, of equal length but the last: 512 terms in blocks of at most 170
// are 4 of 128, not 3 of 170 and one of 2, whose pass over dst would cost
// about as much as a full one.
func evenBlocks(k, most int) int {
	n := (k + most - 1) / most
	return (k + n - 1) / n
}

// symbolProducts writes u as inputProducts does for the one-hot input of
// syms (a negative symbol: a zero row), reading W_ih's columns instead of
// multiplying: the product's sum is +0 + w (w's bits, −0 made +0), so
// the bits are inputProducts' at a fraction of its work (T·4H copies
// instead of T·E·4H multiply-adds).
func (s *Model) symbolProducts(u []float64, syms []int) {
	g, steps := 4*s.h, len(syms)
	for d := range s.dirs {
		wT := s.cells[d].wihT
		for t, sym := range syms {
			row := u[(d*steps+t)*g : (d*steps+t+1)*g]
			if sym < 0 {
				clear(row)
				continue
			}
			for q, w := range wT[sym*g : (sym+1)*g] {
				row[q] = w + 0 // −0 + 0 is +0, as the product's sum
			}
		}
	}
}

// inputProducts writes u[(dir*T+t)*4H : …] = W_ih·x_t for each direction of
// layer 0 and every step of the dense input x (T×E), inputBlock steps at a
// time: the products the lanes scale (z = b + s·u).
// With a team (tm) the steps are shared among its members, each step's
// row computed as alone, a chunk of steps at a time with a stopper (the
// rows do not depend on the chunks). It ends early once stop has.
func (s *Model) inputProducts(tm *team, u, x []float64, steps int, stop *stopper) {
	g, e := 4*s.h, s.in
	for d := range s.dirs {
		cl := &s.cells[d]
		ud := u[d*steps*g : (d+1)*steps*g]
		clear(ud)
		if tm != nil && steps*e*g >= teamMinWork {
			n := steps // the steps of a team's product
			if stop != nil {
				n = chunkSteps(e*g, max(inputBlock, teamChunkWork()/(e*g)))
			}
			for t0 := 0; t0 < steps; t0 += n {
				t1 := min(t0+n, steps)
				if stop.spend((t1 - t0) * e * g) {
					return
				}
				tm.mulAdd(ud[t0*g:t1*g], x[t0*e:t1*e], nil, false, t1-t0, e, e, 0, cl.wihT, g)
			}
			continue
		}
		for t0 := 0; t0 < steps; t0 += inputBlock {
			t1 := min(t0+inputBlock, steps)
			if stop.spend((t1 - t0) * e * g) {
				return
			}
			kernel.MulAddRows(ud[t0*g:t1*g], g, cl.wihT, g, x[t0*e:t1*e], e, e)
		}
	}
}

package cell

import "github.com/whitebox-lstm/whitebox/kernel"

// Checkpointed passes of a model: memory O(l·H·(T/S + S)) per
// layer and direction instead of O(l·H·T), for inputs whose whole trace
// does not fit the budget.
//
// The steps are cut into segments of S steps (segment s holds the steps
// [s·S, (s+1)·S)). The forward pass keeps, for every layer and direction,
// the state (h, c) before each segment, in the order the direction runs
// (forward: the state after step s·S − 1; backward: after step (s+1)·S);
// each cell's trace holds one segment. A segment's trace is recomputed
// from its checkpoint when it is needed (ensure): layer k+1's segment
// first needs layer k's (both directions), the input products of layer 0
// are computed per segment. Nothing else of the input's length is kept.
//
// Backprop runs layer by layer from the top, each direction in its own
// sweep over the segments (in reverse of the order it ran forward). The
// gradient of layer k's outputs over a segment (what the full-trace pass
// keeps for the whole sequence, dOut) is recomputed per segment by
// re-running layer k+1's backprop over that segment from the state it had
// there in layer k+1's own sweep (bcp), recursively up to the head. Every
// recomputation repeats the operations of the first computation, so every
// value, and every result, is bit for bit that of the full-trace pass.
//
// Kept boundaries (runPlan.keep, models of two layers or more, where the
// budget holds them): the outputs of every layer below the top are kept
// for the whole input as the forward pass makes them, and the gradient of
// a layer's outputs is kept whole as the sweeps of the layer above add to
// it, so that a layer's segment is recomputed without the layers below it
// and a sweep reads its outputs' gradient instead of re-running the layers
// above: the forward pass runs twice, once more than on the whole trace,
// whatever the depth (Chen et al.'s sublinear-memory schedule, with the
// layers' outputs as the stored boundaries), for 4H words a step and lane
// of a 2-layer bidirectional model against the whole trace's 32H. Without
// them the cost of the recomputation grows with depth and directions (the
// bottom layer of a 2-layer bidirectional model runs about six times). The
// operations are the same either way, and so are the bits.
//
// Integrated Gradients' block sums of layer 0's dz then cover one segment:
// when a batch holds its blocks whole, each segment's sums are multiplied
// by W_ihᵀ as soon as the segment is done (the products of a step's row do
// not depend on the other rows), direction 0 over every segment before
// direction 1, as the full-trace pass adds them.

// checkpoints is the checkpointed state of a lanes whose traces hold one
// segment (lanes.steps is then the segment capacity).
type checkpoints struct {
	seg, nseg, steps int // S, ⌈T/S⌉ and T of the current pass
	nsegCap          int
	cp               [][]float64 // per cell: nseg × (h, c), H×l each
	bcp              [][]float64 // per cell of layers ≥ 1: nseg × (dh, dc), backprop's state before segment s
	tag              []int       // per cell: the segment its trace holds, −1 for none
	u                []float64   // dirs × S × 4H: layer 0's input products, direction d's of segment uTag[d]
	uTag             [2]int
	x                []float64   // T×E: the input, unscaled
	dh, dc, dcPrev   [][]float64 // per layer: backprop's running state, H×l
	// The layers' boundaries, kept whole (runPlan.keep; nil: recomputed
	// per segment): out, per cell of the layers below the top, its outputs
	// at every step (T×H×l); dOut, the gradient of a layer's outputs at
	// every step (T×dirs×H×l), written by the sweeps of the layer above and
	// read by its own (two for three layers or more, as lanes.dOut).
	out  [][]float64
	dOut [2][]float64
	// top, during the forward pass of kept lanes under a mean or max head:
	// the top layer's outputs at every step (T×dirs×H×l, in dOut[0], which
	// backprop has not begun to use), so that the head pools them without
	// recomputing the top layer (headOutCk); nil otherwise.
	top []float64
}

// keepBoundaries lets plans keep the layers' boundaries (tests turn it off
// to check the recursive recomputation).
var keepBoundaries = true

// keptWords is the memory, in words a lane, of the boundaries of T steps
// that checkpointed lanes keep (runPlan.keep).
func (s *Model) keptWords(steps int) int64 {
	h, t := int64(s.h), int64(steps)
	below := int64(len(s.cells) - s.dirs)
	return below*t*h + int64(min(2, s.p.Layers-1))*t*int64(s.dirs)*h
}

// segments returns S = ⌈√T⌉ and ⌈T/S⌉.
func segments(steps int) (seg, nseg int) {
	seg = 1
	for seg*seg < steps {
		seg++
	}
	return seg, (steps + seg - 1) / seg
}

// ckLaneBytes is the memory of checkpointed lanes: l lanes, segments of seg
// steps, nseg of them.
func (s *Model) ckLaneBytes(l, seg, nseg int, keep bool) int64 {
	h, cells := int64(s.h), int64(len(s.cells))
	upper := cells - int64(s.dirs)
	words := int64(l) * (2*h*int64(nseg)*(cells+upper) + 3*h*int64(s.p.Layers))
	if keep {
		words += int64(l) * s.keptWords(seg*nseg)
	}
	words += int64(s.dirs) * int64(seg) * 4 * h
	words += int64(l) * s.attnStepWords(seg*nseg)
	if keep { // the spare trace of a pipeline, and wide products
		words += s.spareBytes(l, seg)/8 + s.wideBytes()/8
	}
	return s.workerLaneBytes(l, seg) + 8*words
}

func newCkLanes(s *Model, l, seg, nseg int, keep bool) *lanes {
	r := newWorkerLanes(s, l, seg)
	kept := 0
	if keep {
		kept = seg * nseg
	}
	r.ck = newCheckpoints(s, l, nseg, kept, make([]float64, s.dirs*seg*4*s.h), make([]int, len(s.cells)))
	if keep {
		r.pipe = &pipeline{}
	}
	return r
}

// newCheckpoints returns the checkpoints of l lanes, nseg segments, with
// the given input-products and tag buffers (shared by the batches of a
// group), keeping the boundaries of up to kept steps (0: none).
func newCheckpoints(s *Model, l, nseg, kept int, u []float64, tag []int) *checkpoints {
	hl := s.h * l
	ck := &checkpoints{nsegCap: nseg, u: u, tag: tag}
	if kept > 0 {
		ck.out = make([][]float64, len(s.cells))
		for ci := range len(s.cells) - s.dirs {
			ck.out[ci] = bigFloats(kept * hl)
		}
		for i := range min(2, s.p.Layers-1) {
			ck.dOut[i] = bigFloats(kept * s.dirs * hl)
		}
	}
	for ci := range s.cells {
		ck.cp = append(ck.cp, make([]float64, nseg*2*hl))
		var b []float64
		if s.cells[ci].layer > 0 {
			b = make([]float64, nseg*2*hl)
		}
		ck.bcp = append(ck.bcp, b)
	}
	for range s.p.Layers {
		ck.dh = append(ck.dh, make([]float64, hl))
		ck.dc = append(ck.dc, make([]float64, hl))
		ck.dcPrev = append(ck.dcPrev, make([]float64, hl))
	}
	return ck
}

// newCkSibling returns checkpointed lanes for another batch of the same
// IG chunk as a: they share a's traces and scratch (one batch runs at a
// time; activate invalidates what another left) and keep their own
// checkpoints, backprop state, head state and lane settings, so that the
// chunk's batches can go through layer 0's segments together.
func newCkSibling(a *lanes) *lanes {
	s, l := a.s, a.l
	b := &lanes{s: s, l: l, steps: a.steps, hRing: a.hRing, cells: a.cells, pipe: a.pipe, wideZ: a.wideZ, wideIn: a.wideIn, zero: a.zero, dh: a.dh, dc: a.dc, dcPrev: a.dcPrev,
		dz: a.dz, dOut: a.dOut, lin: a.lin, row: a.row, acc: a.acc}
	for range s.cells {
		b.planes = append(b.planes, make([]float64, 4*s.h*l))
	}
	b.logitsBuf = make([]float64, s.c*l)
	b.scale, b.occluded = make([]float64, l), make([]int, l)
	b.newHeadBuffers()
	kept := 0
	if a.ck.out != nil {
		kept = a.steps * a.ck.nsegCap
	}
	b.ck = newCheckpoints(s, l, a.ck.nsegCap, kept, a.ck.u, a.ck.tag)
	return b
}

// siblingBytes is the memory of newCkSibling's own buffers (lanes of
// segments of seg steps, nseg of them).
func (s *Model) siblingBytes(l, seg, nseg int, keep bool) int64 {
	h, cells := int64(s.h), int64(len(s.cells))
	upper := cells - int64(s.dirs)
	words := 2*h*int64(nseg)*(cells+upper) + 3*h*int64(s.p.Layers) + cells*4*h + s.headWords() + 3*int64(s.c) + 3 + s.attnStepWords(0)
	if keep {
		words += s.keptWords(seg * nseg)
	}
	return 8 * words * int64(l)
}

// activate makes r the batch that runs on the traces it shares: nothing
// they hold is taken as r's.
func (r *lanes) activate() {
	for i := range r.ck.tag {
		r.ck.tag[i] = -1
	}
	r.ck.uTag = [2]int{-1, -1}
}

// fitsCk reports whether r is checkpointed lanes for l lanes and segments
// of seg steps, nseg of them.
func (r *lanes) fitsCk(l, seg, nseg int, keep bool) bool {
	return r != nil && r.ck != nil && l <= r.l && seg <= r.steps && nseg <= r.ck.nsegCap && (r.ck.out != nil) == keep
}

// setInput readies checkpointed lanes for passes over x (T×E, unscaled)
// in segments of seg steps.
func (r *lanes) setInput(x []float64, steps, seg int) {
	ck := r.ck
	ck.seg, ck.nseg = seg, (steps+seg-1)/seg
	ck.steps, ck.x = steps, x
}

// widenSegments returns checkpointed plan p with its steps in the fewest
// segments that fits admits, of equal length but the last. A cell's trace
// holds one segment, and backprop recomputes every segment but the one
// the forward pass left there: segments of ⌈√T⌉ steps, the least memory,
// held a few MB of a budget of hundreds and recomputed 968 of 1,000 steps
// (IG 50 steps, the H = 256 model). The results are the same bits for any
// length. Measured on the 2-core machine, 1,000 tokens of that model, 52
// lanes within 200 MB, 5 segments of 200 steps against 32 of 32,
// alternating rounds: a team of two 672–730 ms against 727–825 ms (five
// rounds); one core within the noise, 1.21–1.45 s against 1.22–1.40 s
// (four rounds). The split plan's two workers,
// each with 26 lanes' segments of its own, ran slower with 4 segments
// than with 32 (814–857 against 769–833 ms), and keep ⌈√T⌉.
func widenSegments(p runPlan, steps int, fits func(runPlan) bool) runPlan {
	for nseg := 1; nseg < p.nseg; nseg++ {
		q := p
		q.seg = (steps + nseg - 1) / nseg
		q.nseg = (steps + q.seg - 1) / q.seg
		if fits(q) {
			return q
		}
	}
	return p
}

// segRange returns the steps [t0, t1) of segment sg.
func (ck *checkpoints) segRange(sg int) (t0, t1 int) {
	return sg * ck.seg, min(ck.steps, (sg+1)*ck.seg)
}

// segAt returns the i-th segment a direction runs through.
func (ck *checkpoints) segAt(reverse bool, i int) int { return order(reverse, i, ck.nseg) }

// forwardCk is forward on checkpointed lanes: it keeps the checkpoints,
// leaves each cell's trace at some segment and the logits in r.logitsBuf.
func (r *lanes) forwardCk(l int) {
	s, ck := r.s, r.ck
	r.broadcastBiases(l)
	r.fillTables(l)
	for ci := range ck.tag {
		ck.tag[ci] = -1
	}
	ck.uTag = [2]int{-1, -1}
	if ck.out != nil && (s.p.Head == HeadMean || s.p.Head == HeadMax) {
		ck.top = ck.dOut[0][:ck.steps*s.dirs*s.h*l]
	}
	if s.dirs == 1 { // every layer runs forward in time: one sweep
		for sg := range ck.nseg {
			for ci := range s.cells {
				r.ensure(ci, sg, l)
				r.saveState(ci, sg, sg+1, l)
			}
		}
	} else {
		for ci := 0; ci < len(s.cells); ci += 2 {
			if r.pipes(l) {
				r.pipeDirs(ci, l)
				continue
			}
			r.forwardCell(ci, l)
			r.forwardCell(ci+1, l)
		}
	}
	r.classify(r.headOutCk(l), l)
	ck.top = nil
}

// forwardCell runs cell ci forward over every segment, in the order its
// direction runs, keeping the checkpoints.
func (r *lanes) forwardCell(ci, l int) {
	ck := r.ck
	rev := r.s.cells[ci].reverse
	for i := range ck.nseg {
		sg := ck.segAt(rev, i)
		r.ensure(ci, sg, l)
		if i+1 < ck.nseg {
			r.saveState(ci, sg, ck.segAt(rev, i+1), l)
		}
	}
}

// saveState copies cell ci's state after segment sg, its last step there,
// to the checkpoint of segment next (none past the last segment).
func (r *lanes) saveState(ci, sg, next, l int) {
	ck := r.ck
	if next >= ck.nseg {
		return
	}
	hl := r.s.h * l
	t0, t1 := ck.segRange(sg)
	j := order(!r.s.cells[ci].reverse, 0, t1-t0) // the last step it ran
	tr := &r.cells[ci]
	st := ck.cp[ci][next*2*hl : (next+1)*2*hl]
	jh := r.hSlot(j)
	copy(st[:hl], tr.hs[jh*hl:(jh+1)*hl])
	copy(st[hl:], tr.c[j*hl:(j+1)*hl])
}

// ensure makes cell ci's trace hold segment sg, recomputing it (and the
// segments it reads) from the checkpoints.
func (r *lanes) ensure(ci, sg, l int) {
	s, ck := r.s, r.ck
	if ck.tag[ci] == sg || r.stop.stopped() {
		return
	}
	cl := &s.cells[ci]
	if cl.layer == 0 {
		r.ensureInput(cl.dir, sg)
	} else if ck.out == nil { // (kept: the layer below's outputs are in ck.out)
		below := ci - s.dirs - cl.dir
		r.ensure(below, sg, l)
		if s.dirs == 2 {
			r.ensure(below+1, sg, l)
		}
	}
	r.runSegment(ci, sg, l)
	if !r.stop.stopped() { // else the trace is not the segment's
		ck.tag[ci] = sg
	}
}

// ensureInput computes layer 0's input products of segment sg, direction
// d (the rows of inputProducts: a row's values do not depend on the
// others).
func (r *lanes) ensureInput(d, sg int) {
	s, ck := r.s, r.ck
	if ck.uTag[d] == sg {
		return
	}
	ck.uTag[d] = -1
	g, e := 4*s.h, s.in
	t0, t1 := ck.segRange(sg)
	ud := ck.u[d*ck.seg*g : (d*ck.seg+t1-t0)*g]
	clear(ud)
	for a := t0; a < t1; a += inputBlock {
		b := min(a+inputBlock, t1)
		if r.stop.spend((b - a) * e * g) {
			return // not the segment's products
		}
		kernel.MulAddRows(ud[(a-t0)*g:(b-t0)*g], g, s.cells[d].wihT, g, ck.x[a*e:b*e], e, e)
	}
	ck.uTag[d] = sg
}

// runSegment runs cell ci over segment sg from its checkpoint, its inputs
// being in place.
func (r *lanes) runSegment(ci, sg, l int) {
	s, ck := r.s, r.ck
	h, g := s.h, 4*s.h
	hl, gl := h*l, g*l
	cl, tr := &s.cells[ci], &r.cells[ci]
	t0, t1 := ck.segRange(sg)
	n := t1 - t0
	first := sg == ck.segAt(cl.reverse, 0)
	work := s.stepWork(ci, l)
	wide := r.widens(ci, l) // z holds b + W_ih·(in0, in1) already
	if wide && !r.wideInputs(ci, sg, l) {
		return
	}
	for i := range n {
		if r.stop.spend(work) {
			return
		}
		j := order(cl.reverse, i, n)
		var ut, in0, in1, hPrev []float64
		cPrev := r.zero[:hl]
		if cl.layer == 0 {
			ut = ck.u[(cl.dir*ck.seg+j)*g : (cl.dir*ck.seg+j+1)*g]
		} else if !wide {
			below := ci - s.dirs - cl.dir
			src, k := r.cells[below].hs, j
			if ck.out != nil {
				src, k = ck.out[below], t0+j
			}
			in0 = src[k*hl : (k+1)*hl]
			if s.dirs == 2 {
				src := r.cells[below+1].hs
				if ck.out != nil {
					src = ck.out[below+1]
				}
				in1 = src[k*hl : (k+1)*hl]
			}
		}
		if i > 0 {
			jp := order(cl.reverse, i-1, n)
			hp := r.hSlot(jp)
			cPrev, hPrev = tr.c[jp*hl:(jp+1)*hl], tr.hs[hp*hl:(hp+1)*hl]
		} else if !first {
			st := ck.cp[ci][sg*2*hl : (sg+1)*2*hl]
			hPrev, cPrev = st[:hl], st[hl:]
		}
		jh := r.hSlot(j)
		r.stepForward(ci, t0+j, tr.z[j*gl:(j+1)*gl], ut, in0, in1, hPrev, cPrev, tr.zg[:hl], tr.c[j*hl:(j+1)*hl], tr.tc[j*hl:(j+1)*hl], tr.hs[jh*hl:(jh+1)*hl], l)
		if ck.out != nil && ck.out[ci] != nil {
			copy(ck.out[ci][(t0+j)*hl:(t0+j+1)*hl], tr.hs[jh*hl:(jh+1)*hl])
		} else if ck.top != nil {
			k := (t0+j)*s.dirs + cl.dir
			copy(ck.top[k*hl:(k+1)*hl], tr.hs[jh*hl:(jh+1)*hl])
		}
	}
}

// headOutCk is headOut on checkpointed lanes: v in r.v, read from the
// top layer's segments recomputed in the order the head reads them.
func (r *lanes) headOutCk(l int) (seg [2][]float64) {
	s, ck := r.s, r.ck
	hl, dirs := s.h*l, s.dirs
	top := len(s.cells) - dirs
	v := r.v[:dirs*hl]
	switch s.p.Head {
	case HeadAttention:
		return r.attnOutCk(l)
	case HeadHN, HeadHNBF, HeadLast:
		for d := range dirs {
			ci := top + d
			sg, j := ck.nseg-1, ck.steps-1-(ck.nseg-1)*ck.seg // step T−1
			if s.p.Head != HeadLast && s.cells[ci].reverse {
				sg, j = 0, 0 // step 0, the backward direction's last
			}
			r.ensure(ci, sg, l)
			jh := r.hSlot(j)
			copy(v[d*hl:(d+1)*hl], r.cells[ci].hs[jh*hl:(jh+1)*hl])
		}
		for d := range dirs {
			from := d
			if s.p.Head == HeadHNBF {
				from = dirs - 1 - d
			}
			seg[d] = v[from*hl : (from+1)*hl]
		}
		return seg
	}
	for sg := range ck.nseg {
		if ck.top == nil { // else the forward pass kept the outputs
			for d := range dirs {
				r.ensure(top+d, sg, l)
			}
		}
		t0, t1 := ck.segRange(sg)
		for t := t0; t < t1; t++ {
			j := t - t0
			for d := range dirs {
				hs := r.cells[top+d].hs[j*hl : (j+1)*hl]
				if ck.top != nil {
					hs = ck.top[(t*dirs+d)*hl : (t*dirs+d+1)*hl]
				}
				vd := v[d*hl : (d+1)*hl]
				switch {
				case t == 0:
					copy(vd, hs)
					if s.p.Head == HeadMax {
						clear(r.argmax[d*hl : (d+1)*hl])
					}
				case s.p.Head == HeadMean:
					for i, x := range hs {
						vd[i] += x
					}
				default: // max: strictly, ties keep the earliest step
					arg := r.argmax[d*hl : (d+1)*hl]
					for i, x := range hs {
						if x > vd[i] {
							vd[i], arg[i] = x, t
						}
					}
				}
			}
		}
	}
	if s.p.Head == HeadMean {
		n := float64(ck.steps)
		for i := range v {
			v[i] /= n
		}
	}
	for d := range dirs {
		seg[d] = v[d*hl : (d+1)*hl]
	}
	return seg
}

// backwardCk is backward on checkpointed lanes, after forwardCk: the
// sweeps of the layers above the first, then layer 0's, which hand dz to
// sk (and, with sk.seg > 0, add the products of each segment's sums).
func (r *lanes) backwardCk(l, class int, sk *gradSink) {
	s := r.s
	r.backwardUpper(l, class)
	n := l // IG's lanes, the first of the batch (gradSink.used)
	if sk.used > 0 {
		n = sk.used
	}
	nb := 0 // the blocks whose sums flushSums multiplies after each segment
	if sk.seg > 0 {
		nb = (sk.k0+n-1)/igBlock + 1
	}
	for d := range s.dirs {
		r.sweepLayer(0, d, l, sk, nb)
	}
}

// sweepLayer runs backprop of layer k, direction d, over every segment,
// in reverse of the order the direction ran, each beside the recomputation
// of the next where r pipes; with nb > 0, flushSums multiplies the sums of
// nb blocks after each segment.
func (r *lanes) sweepLayer(k, d, l int, sk *gradSink, nb int) {
	s, ck := r.s, r.ck
	ci := k*s.dirs + d
	rev := s.cells[ci].reverse
	r.startSweep(k, d, l)
	pipe := r.pipes(l)
	for i := ck.nseg - 1; i >= 0; i-- {
		sg := ck.segAt(rev, i)
		if pipe && i > 0 && !r.stop.stopped() {
			r.ensure(ci, sg, l) // the first (on the team); then the spare brings each
			r.pipeSweep(k, d, sg, ck.segAt(rev, i-1), l, sk)
		} else {
			r.sweepSegment(k, d, sg, l, sk)
		}
		if nb > 0 {
			r.flushSums(sk, d, sg, nb)
		}
	}
}

// backwardUpper computes ∂ŷ_class/∂v into r.dv and runs the sweeps of the
// layers above the first, keeping their states at the segments (bcp).
func (r *lanes) backwardUpper(l, class int) {
	s, ck := r.s, r.ck
	r.headGrad(class, l)
	for k := s.p.Layers - 1; k >= 1; k-- {
		if ck.out != nil { // the sweeps below add to the layer below's gradient
			clear(ck.dOut[(k-1)&1][:ck.steps*s.dirs*s.h*l])
		}
		for d := range s.dirs {
			r.sweepLayer(k, d, l, nil, 0)
		}
	}
}

// startSweep sets backprop's state of layer k, direction d, to that
// before its first step: zero, and the head's share for the top layer.
func (r *lanes) startSweep(k, d, l int) {
	s, ck := r.s, r.ck
	hl := s.h * l
	clear(ck.dh[k][:hl])
	clear(ck.dc[k][:hl])
	if k == s.p.Layers-1 {
		r.headSeed(r.dv[:hl*s.dirs], ck.dh[k][:hl], d, l)
	}
}

// sweepSegment runs backprop of layer k, direction d, over segment sg
// from the state the sweep has reached, keeping that state first (bcp,
// layers above the first).
func (r *lanes) sweepSegment(k, d, sg, l int, sk *gradSink) {
	r.sweep(k, d, sg, l, sk, true)
}

// sweepReady is sweepSegment with sg's trace in place: it reads only the
// trace of cell (k, d) and the kept boundaries (pipeSweep).
func (r *lanes) sweepReady(k, d, sg, l int, sk *gradSink) {
	r.sweep(k, d, sg, l, sk, false)
}

func (r *lanes) sweep(k, d, sg, l int, sk *gradSink, ensure bool) {
	s, ck := r.s, r.ck
	hl := s.h * l
	ci := k*s.dirs + d
	if k > 0 {
		st := ck.bcp[ci][sg*2*hl : (sg+1)*2*hl]
		copy(st[:hl], ck.dh[k][:hl])
		copy(st[hl:], ck.dc[k][:hl])
	}
	above := r.aboveSeg(k, sg, r.dv[:hl*s.dirs], l)
	if ensure {
		r.ensure(ci, sg, l)
	}
	var below []float64 // kept: the layer below's gradient, over sg
	if ck.out != nil && k > 0 {
		t0, t1 := ck.segRange(sg)
		below = ck.dOut[(k-1)&1][t0*s.dirs*hl : t1*s.dirs*hl]
	}
	ck.dc[k], ck.dcPrev[k] = r.backSegment(ci, sg, above, ck.dh[k][:hl], ck.dc[k][:hl], ck.dcPrev[k][:hl], below, sk, l)
}

// aboveSeg returns the gradient of layer k's outputs over segment sg
// (n×dirs×H×l, by step of the segment), nil where nothing reaches them
// but the final states: the dense head's share for the top layer, else
// layer k+1's backprop over sg re-run from its sweep's state there.
func (r *lanes) aboveSeg(k, sg int, dv []float64, l int) []float64 {
	s, ck := r.s, r.ck
	hl, dirs := s.h*l, s.dirs
	if k == s.p.Layers-1 && !s.p.Head.dense() {
		return nil
	}
	t0, t1 := ck.segRange(sg)
	buf := r.dOut[k&1][:(t1-t0)*dirs*hl]
	if k == s.p.Layers-1 {
		r.headSeqSeg(dv, buf, t0, t1, l)
		return buf
	}
	if ck.out != nil { // written whole by the sweeps of layer k+1
		return ck.dOut[k&1][t0*dirs*hl : t1*dirs*hl]
	}
	a := r.aboveSeg(k+1, sg, dv, l)
	clear(buf)
	for d := range dirs {
		ci := (k+1)*dirs + d
		r.ensure(ci, sg, l)
		dh, dc, dcPrev := ck.dh[k+1][:hl], ck.dc[k+1][:hl], ck.dcPrev[k+1][:hl]
		st := ck.bcp[ci][sg*2*hl : (sg+1)*2*hl]
		copy(dh, st[:hl])
		copy(dc, st[hl:])
		r.backSegment(ci, sg, a, dh, dc, dcPrev, buf, nil, l)
	}
	return buf
}

// backSegment runs backprop of cell ci over segment sg from the state (dh,
// dc), above being its outputs' gradient there (or nil). It adds W_ihᵀ·dz
// to below (the layer below's outputs' gradient over sg) or, for layer 0
// with below nil, hands dz to sk (nil: to nobody). It returns the state's
// dc and the spare buffer.
func (r *lanes) backSegment(ci, sg int, above, dh, dc, dcPrev, below []float64, sk *gradSink, l int) ([]float64, []float64) {
	s, ck := r.s, r.ck
	h, g, dirs := s.h, 4*s.h, s.dirs
	hl, gl := h*l, g*l
	cl, tr := &s.cells[ci], &r.cells[ci]
	dz := r.dz[:gl]
	t0, t1 := ck.segRange(sg)
	n := t1 - t0
	first := sg == ck.segAt(cl.reverse, 0)
	work := s.stepWork(ci, l)
	wide := below != nil && r.widens(ci, l) && cl.terms.wihT == nil // W_ihᵀ·dz after the steps (wideBelow)
	for i := n - 1; i >= 0; i-- {
		if r.stop.spend(work) {
			break
		}
		j := order(cl.reverse, i, n)
		var at []float64
		if above != nil {
			at = above[(j*dirs+cl.dir)*hl : (j*dirs+cl.dir+1)*hl]
		}
		cPrev, recur := r.zero[:hl], true
		if i > 0 {
			jp := order(cl.reverse, i-1, n)
			cPrev = tr.c[jp*hl : (jp+1)*hl]
		} else if !first {
			cPrev = ck.cp[ci][(sg*2+1)*hl : (sg+1)*2*hl]
		} else {
			recur = false
		}
		var sk0 *gradSink // layer 0's sink, which a team step may serve
		if below == nil && cl.layer == 0 {
			sk0 = sk
		}
		sunk := r.stepBackward(cl, t0+j, dz, dcPrev, dh, dc, at, tr.z[j*gl:(j+1)*gl], tr.tc[j*hl:(j+1)*hl], cPrev, recur, l, sk0, ck.steps)
		if below != nil && wide {
			copy(tr.z[j*gl:(j+1)*gl], dz) // wideBelow's, in place of the step's gates
		} else if below != nil {
			r.mulAdd(below[j*dirs*hl:(j+1)*dirs*hl], cl.wihT, cl.wih, cl.terms.wihT, cl.in, g, g, 0, dz, l)
		} else if sk0 != nil && !sunk {
			r.sink(sk, cl.dir, t0+j, ck.steps, l, dz)
		}
		dc, dcPrev = dcPrev, dc
	}
	if wide {
		ck.tag[ci] = -1 // z holds dz now
		if !r.stop.stopped() {
			r.wideBelow(ci, sg, below, l)
		}
	}
	return dc, dcPrev
}

// headSeqSeg is headSequence for the steps [t0, t1): seq is (t1−t0)×dirs×H×l.
func (r *lanes) headSeqSeg(dv, seq []float64, t0, t1, l int) {
	s := r.s
	hl, dirs := s.h*l, s.dirs
	switch s.p.Head {
	case HeadMean:
		n := float64(r.ck.steps)
		for j := range t1 - t0 {
			for d := range dirs {
				dst := seq[(j*dirs+d)*hl : (j*dirs+d+1)*hl]
				for i, g := range dv[d*hl : (d+1)*hl] {
					dst[i] = g / n
				}
			}
		}
	case HeadLast:
		clear(seq)
		if t1 == r.ck.steps {
			j := t1 - 1 - t0
			copy(seq[j*dirs*hl:(j+1)*dirs*hl], dv[:dirs*hl])
		}
	case HeadAttention:
		at := r.attn(r.ck.steps)
		r.attnGV(at, dv, l)
		top := len(s.cells) - dirs
		sg := t0 / r.ck.seg
		for d := range dirs {
			r.ensure(top+d, sg, l)
		}
		for t := t0; t < t1; t++ {
			j := r.hSlot(t - t0)
			s0 := r.cells[top].hs[j*hl : (j+1)*hl]
			var s1 []float64
			if dirs == 2 {
				s1 = r.cells[top+1].hs[j*hl : (j+1)*hl]
			}
			r.attnSeqStep(at, dv, seq[(t-t0)*dirs*hl:(t-t0+1)*dirs*hl], s0, s1, t, l)
		}
	case HeadMax:
		clear(seq)
		for d := range dirs {
			for i, t := range r.argmax[d*hl : (d+1)*hl] {
				if t >= t0 && t < t1 {
					seq[((t-t0)*dirs+d)*hl+i] = dv[d*hl+i]
				}
			}
		}
	}
}

// flushSums adds, for the blocks [0, nb) of the chunk, W_ihᵀ of direction
// d times their sums of dz over segment sg to their products (sk.part),
// and clears the sums.
func (r *lanes) flushSums(sk *gradSink, d, sg, nb int) {
	s, ck := r.s, r.ck
	w, e := sk.width(s), s.in
	t0, t1 := ck.segRange(sg)
	size := ck.steps * e
	for b := range nb {
		sum := sk.dzSum[b*sk.seg*w:]
		pb := sk.part[b*size : (b+1)*size]
		sk.addSums(r.team, s, d, pb[t0*e:t1*e], sum, t1-t0, r.stop)
		clear(sum[:(t1-t0)*w])
	}
}

package cell

import (
	"context"
	"fmt"
	"math"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// Integrated Gradients: Σ_k weights[k]·∇ŷ_class(alphas[k]·x). Item k (an α
// step) is a lane; a chunk is a run of whole blocks of 16 items, cut into
// batches of plan.lanes lanes. A batch runs forward over every step
// (keeping checkpoints), then backward segment by segment, adding each
// lane's gradient to its block's partial sum; a finished chunk's partial
// sums are added to the total in chunk order (commit), which gives the
// bits of Network.GradientSum whatever the plan.

// gradientSum is Batcher.GradientSum.
func (j *job) gradientSum(ctx context.Context, x Input, class int, alphas, weights, acc []float64, opt BatchOptions) error {
	n := j.net
	if err := x.check(n.d); err != nil {
		return err
	}
	if err := n.checkClass(class); err != nil {
		return err
	}
	if want := x.Len() * n.d; len(acc) != want {
		return fmt.Errorf("cell: gradient buffer has %d elements, want T×D = %d×%d = %d", len(acc), x.Len(), n.d, want)
	}
	if len(alphas) != len(weights) {
		return fmt.Errorf("cell: %d alphas but %d weights", len(alphas), len(weights))
	}
	clear(acc)
	if len(alphas) == 0 {
		return nil
	}
	if err := fitBudget(minIGBytes(j.shape(), x.Len(), len(alphas), !x.IsOneHot()), limitsOf(opt)); err != nil {
		return err
	}
	j.reset(request{
		kind: jobIG, x: x, class: class, alphas: alphas, wts: weights, acc: acc, progress: opt.Progress,
		items: len(alphas), plan: planIG(j.shape(), x.Len(), len(alphas), !x.IsOneHot(), limitsOf(opt)),
	})
	return j.run(ctx)
}

// integratedGradients is Batcher.IntegratedGradients: x and its zero copy
// ride along in padding lanes (fused), or run as a two-lane batch first
// (pairClass), or, when neither fits, as two Logits passes before
// gradientSum.
func (j *job) integratedGradients(ctx context.Context, x Input, class func(y []float64) (int, error), alphas, weights, acc, y, y0 []float64, opt BatchOptions) error {
	n := j.net
	if err := x.check(n.d); err != nil {
		return err
	}
	if len(y) != n.c || len(y0) != n.c {
		return fmt.Errorf("cell: logits have %d and %d elements, want C = %d", len(y), len(y0), n.c)
	}
	if err := fitBudget(minIGBytes(j.shape(), x.Len(), max(1, len(alphas)), !x.IsOneHot()), limitsOf(opt)); err != nil {
		return err
	}
	if want := x.Len() * n.d; len(acc) == want && len(alphas) == len(weights) && len(alphas) > 0 {
		p := planIG(j.shape(), x.Len(), len(alphas), !x.IsOneHot(), limitsOf(opt))
		k := len(alphas)
		fused := k <= p.lanes && k <= p.chunk && min(roundUp8(k), p.lanes)-k >= 2
		if fused || (x.IsOneHot() && p.lanes >= 2) {
			clear(acc)
			j.reset(request{
				kind: jobIG, x: x, alphas: alphas, wts: weights, acc: acc, progress: opt.Progress,
				y: y, y0: y0, resolve: class, pairFirst: !fused,
				items: k, plan: p,
			})
			return j.run(ctx)
		}
	}
	if err := j.logits(x, y); err != nil {
		return err
	}
	if err := j.logits(x.Scaled(0), y0); err != nil {
		return err
	}
	c, err := class(y)
	if err != nil {
		return err
	}
	return j.gradientSum(ctx, x, c, alphas, weights, acc, opt)
}

// pairClass computes ŷ(x) and ŷ(0·x) of IntegratedGradients' one-hot job
// into j.y and j.y0 on worker w, before w takes a chunk, while the other
// workers start their chunks' forward passes (batchClass waits for the
// class before backprop): the two run as the lanes of one batch, each with
// the operations, hence the bits, of Logits (as in the padding lanes of
// the fused path). Then it resolves the class. Measured, IG sp-counter T =
// 256, 1000 steps, 2 threads: two Logits passes before the job took 76 µs
// of its 3.3 ms, all of it serial.
func (j *job) pairClass(w *laneWorker) {
	n, x := j.net, j.x
	w.scale[0], w.scale[1] = x.scale, x.Scaled(0).scale
	zero := w.zero[:2*n.h]
	clear(zero)
	j.fillTables(w, 2)
	hPrev, cPrev := zero, zero
	for t := range x.Len() {
		hPrev, cPrev = j.stepForward(w, 2, t, t&1, hPrev, cPrev)
	}
	j.laneLogits(j.y, w.dh[:n.h], hPrev, 0, 2)
	j.laneLogits(j.y0, w.dh[:n.h], hPrev, 1, 2)
	c, err := j.resolve(j.y)
	if err == nil {
		err = n.checkClass(c)
	}
	if err != nil {
		j.fail(err)
		return
	}
	j.mu.Lock()
	j.class, j.classReady = c, true
	j.cond.Broadcast()
	j.mu.Unlock()
}

// awaitClass waits until pairClass has set the class; false if the job
// failed or was stopped first.
func (j *job) awaitClass() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	for !j.classReady && !j.stop.Load() {
		j.cond.Wait()
	}
	return !j.stop.Load()
}

// partBuf holds a chunk's block partial sums (blocks×T×D) from its
// computation to its commit.
type partBuf struct {
	v             []float64
	items, blocks int
	busy          bool
}

// igBatch is one batch of an IG chunk: l lanes, the first used of them the
// items s0, s0+1, … (the others padding), in the chunk that starts at item
// k0 and keeps its block partial sums (blocks×T×D) in part.
type igBatch struct {
	l, used, s0, k0 int
	part            []float64
	class, sum      int // the class backprop starts from, and its sum (0 but for IntegratedGradientsAll)
}

// igChunk computes the block partial sums of chunk ci, then adds them to
// the total in chunk order: the sum is that of GradientSum, bit for bit.
func (j *job) igChunk(w *laneWorker, ci int) {
	p := j.plan
	size := j.x.Len() * j.net.d
	k0 := ci * p.chunk
	k1 := min(k0+p.chunk, j.items)
	nblk := (k1 - k0 + sumBlock - 1) / sumBlock
	pb := j.freePart(w)
	if pb == nil {
		return
	}
	part := pb.v[:j.sums()*nblk*size]
	clear(part)
	for s0 := k0; s0 < k1; s0 += p.lanes {
		l := min(p.lanes, k1-s0)
		for i, a := range j.alphas[s0 : s0+l] {
			w.scale[i] = float64(j.x.scale * a)
		}
		// A short batch is padded with zero copies to a multiple of 8
		// lanes, whose gradients are computed and dropped: rows of whole
		// vectors are faster than a short batch.
		lp := max(l, min(roundUp8(l), p.lanes))
		clear(w.scale[l:lp])
		if j.y != nil && !j.pairFirst {
			// The padding lanes l and l+1 run x and its zero copy, with
			// the scales Logits gives them.
			w.scale[l] = j.x.scale
			w.scale[l+1] = j.x.Scaled(0).scale
		}
		if !j.gradientLanes(w, igBatch{l: lp, used: l, s0: s0, k0: k0, part: part}) {
			return
		}
	}
	pb.items, pb.blocks = k1-k0, nblk
	j.commit(ci, pb)
}

// commit leaves chunk ci's partial sums pb pending until every earlier
// chunk is committed; whoever completes the run of finished chunks adds
// them to the total, in order.
func (j *job) commit(ci int, pb *partBuf) {
	size := j.x.Len() * j.net.d
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.stop.Load() {
		return
	}
	j.pending[ci] = pb
	for j.committed < j.chunks && j.pending[j.committed] != nil {
		q := j.pending[j.committed]
		for k := range j.sums() {
			v := q.v[k*q.blocks*size:]
			for blk := range q.blocks {
				kernel.Axpy(1, v[blk*size:(blk+1)*size], j.sum(k))
			}
		}
		j.pending[j.committed], q.busy = nil, false
		j.committed++
		j.report(q.items)
	}
	j.cond.Broadcast()
}

// freePart returns one of w's partial-sum buffers that no pending chunk
// holds, waiting for a commit if both are held; nil if the job stopped.
// Two buffers let a worker start its next chunk while its last waits for
// an earlier chunk of the other worker, where one buffer made it idle
// (measured, IG sp-counter T = 256, 1000 steps, 2 threads: the cores were
// busy 184% of the time, now 193%).
func (j *job) freePart(w *laneWorker) *partBuf {
	j.mu.Lock()
	defer j.mu.Unlock()
	for !j.stop.Load() {
		for i := range w.parts {
			if pb := &w.parts[i]; !pb.busy {
				pb.busy = true
				return pb
			}
		}
		j.cond.Wait()
	}
	return nil
}

// gradientLanes runs forward and backward passes for the lanes of batch bt
// (their scales set in w.scale) and adds weights[k]·∇ of lane k to the
// partial sum of its block, for the used lanes (the others are padding).
// With fewer segments than steps it keeps only the states at segment
// starts and recomputes each segment before its backward pass. It reports
// false if the job stopped.
func (j *job) gradientLanes(w *laneWorker, bt igBatch) bool {
	l := bt.l
	j.fillTables(w, l)
	// Backprop reads c_{t−1} only for the forget gates' gradients; without
	// those, c takes two slots instead of a trace, which then fits the L2
	// cache (sp-counter: 5 KB a step instead of 8.7 at 64 lanes).
	w.keepC = j.tabs.runs == nil || j.tabs.needF || l == 1
	clear(w.zero[:j.net.h*l])
	hLast, ok := j.forwardLanes(w, l)
	if !ok || !j.batchClass(w, bt, hLast) {
		return false
	}
	if j.accs == nil {
		bt.class = j.class
		return j.backwardLanes(w, bt, false)
	}
	// IntegratedGradientsAll: one backward pass per class from this
	// forward pass, each into its own block sums (part holds them side by
	// side), as the class's own job would run it.
	per := len(bt.part) / len(j.accs)
	part := bt.part
	for k := range j.accs {
		bt.class, bt.sum, bt.part = k, k, part[k*per:(k+1)*per]
		if !j.backwardLanes(w, bt, k > 0) {
			return false
		}
	}
	return true
}

// forwardLanes runs the l lanes from the zero state over every step,
// keeping h and c at each segment start in w.ck, and returns the last h;
// false if the job stopped.
func (j *job) forwardLanes(w *laneWorker, l int) (hLast []float64, ok bool) {
	steps, seg := j.x.Len(), j.plan.seg
	hl := j.net.h * l
	zero := w.zero[:hl]
	hPrev, cPrev := zero, zero
	for t := range steps {
		slot := t % seg
		if slot == 0 && t > 0 {
			k := t / seg
			copy(w.ck[(2*k)*hl:(2*k+1)*hl], hPrev)
			copy(w.ck[(2*k+1)*hl:(2*k+2)*hl], cPrev)
			if j.cancelled() {
				return nil, false
			}
		}
		hPrev, cPrev = j.stepForward(w, l, t, slot, hPrev, cPrev)
	}
	return hPrev, true
}

// batchClass settles the class of an IntegratedGradients job before a
// batch's backward pass, its forward pass having ended in hLast: it waits
// for pairClass, or takes the logits of x and its zero copy from padding
// lanes used and used+1 and resolves the class. Other jobs have their class
// already. False if the job failed or stopped.
func (j *job) batchClass(w *laneWorker, bt igBatch, hLast []float64) bool {
	if j.pairFirst {
		return j.awaitClass()
	}
	if j.y == nil {
		return true
	}
	n := j.net
	// x and its zero copy: their logits as Logits computes them from the
	// last h, then the class.
	j.laneLogits(j.y, w.dh[:n.h], hLast, bt.used, bt.l)
	j.laneLogits(j.y0, w.dh[:n.h], hLast, bt.used+1, bt.l)
	c, err := j.resolve(j.y)
	if err != nil {
		j.fail(err)
		return false
	}
	if err := n.checkClass(c); err != nil {
		j.fail(err)
		return false
	}
	j.class = c
	return true
}

// backwardLanes runs backprop of class bt.class through the batch, segment
// by segment from the last, recomputing the trace of every segment but the
// last from its checkpoint, and the last too when again (an earlier
// backward pass of the same forward pass has overwritten it); false if the
// job stopped.
func (j *job) backwardLanes(w *laneWorker, bt igBatch, again bool) bool {
	n := j.net
	h, l := n.h, bt.l
	steps, seg := j.x.Len(), j.plan.seg
	hl := h * l
	nseg := (steps + seg - 1) / seg
	zero := w.zero[:hl]
	dh, dc, dcPrev := w.dh[:hl], w.dc[:hl], w.dcPrev[:hl]
	wc := n.p.Wy[bt.class*h : (bt.class+1)*h]
	for u, v := range wc {
		fill(dh[u*l:(u+1)*l], v)
	}
	clear(dc)
	for k := nseg - 1; k >= 0; k-- {
		ts, te := k*seg, min((k+1)*seg, steps)
		h0, c0 := zero, zero
		if k > 0 {
			h0, c0 = w.ck[(2*k)*hl:(2*k+1)*hl], w.ck[(2*k+1)*hl:(2*k+2)*hl]
		}
		if k < nseg-1 || (again && nseg > 1) {
			if j.cancelled() {
				return false
			}
			hp, cp := h0, c0
			for t := ts; t < te; t++ {
				hp, cp = j.stepForward(w, l, t, t-ts, hp, cp)
			}
		}
		for t := te - 1; t >= ts; t-- {
			j.stepBackward(w, bt, t, t-ts, c0, dc, dcPrev)
			dc, dcPrev = dcPrev, dc
		}
	}
	return true
}

// stepBackward runs backprop through time step t (trace slot slot, c0 the
// c before the segment) from dh and dc (dh_t, dc_t): it computes dz_t and
// dc_{t−1} (into dcPrev), adds the lanes' gradients of x_t to their blocks'
// partial sums, and leaves dh_{t−1} in w.dh. Dense inputs sum the weighted
// dz of each block instead of the gradients (see Network.GradientSum).
func (j *job) stepBackward(w *laneWorker, bt igBatch, t, slot int, c0, dc, dcPrev []float64) {
	n := j.net
	h, d, g, l := n.h, n.d, n.gates, bt.l
	hl := h * l
	dense := !j.x.IsOneHot()
	dh, dz, gx := w.dh[:hl], w.dz[:g*l], w.gx[:d*l]
	cPrev := c0 // (not read without w.keepC)
	if slot > 0 && w.keepC {
		cPrev = w.cs[(slot-1)*hl : slot*hl]
	}
	gates, tc := w.gates[slot*g*l:(slot+1)*g*l], w.tc[slot*hl:(slot+1)*hl]
	if j.tabs.runs == nil {
		kernel.GateBackward(dz, dcPrev, dh, dc, gates, tc, cPrev)
	} else {
		act := j.tableAt(w, l, t)
		for _, run := range j.tabs.runs {
			o, e := run.j0*l, run.j1*l
			need := run.need
			if l == 1 || dense {
				// One lane's products (AxpyRows over the
				// transposed weights) and the sums of dz
				// read every row.
				need = 15
			}
			kernel.GateBackwardTable(dz[o:], hl, dcPrev[o:e], dh[o:e], dc[o:e], gates[o:], act[o:], run.mask, need, tc[o:e], cPrev[o:e])
		}
	}
	if dense {
		j.dzSums(w, bt, t)
	} else {
		clear(gx)
		j.mulAdd(gx, j.wxT, 0, d, dz, l)
		// Each lane's gradient joins its block's partial sum, lanes
		// (steps) in order: one chain of fused multiply-adds per sum.
		size := j.x.Len() * d
		s0, k0 := bt.s0, bt.k0
		for a := 0; a < bt.used; {
			blk := (s0 + a - k0) / sumBlock
			e := min(bt.used, (blk+1)*sumBlock+k0-s0)
			laneSums(bt.part[blk*size+t*d:][:d], gx, l, a, e, j.wts[s0+a:s0+e])
			a = e
		}
	}
	if t > 0 {
		clear(dh)
		j.mulAdd(dh, j.whT, 0, h, dz, l)
	}
}

// dzSums adds the weighted dz_t of batch bt's used lanes (steps s0, s0+1,
// …) to their blocks' sums of dz in the chunk starting at k0, lanes in order,
// as Network.GradientSum does on dense inputs. A block that ends in this
// batch keeps its sums of the dzWindow steps from t/dzWindow·dzWindow in
// w.dzSum; once backprop reaches the first of them, one kernel.MulAddRows
// writes W_xᵀ·sum for all of them to the block's partial sum (AxpyRows' bits
// for each). A block cut by the end of the batch (batches of lanes that are
// not a multiple of 16) passes its sums of every step to the next batch in
// w.carry: batch i writes carry[i&1] and reads what batch i−1 wrote.
func (j *job) dzSums(w *laneWorker, bt igBatch, t int) {
	l, used, s0, k0, part := bt.l, bt.used, bt.s0, bt.k0, bt.part
	n := j.net
	d, g := n.d, n.gates
	steps := j.x.Len()
	k1 := min(k0+j.plan.chunk, j.items)
	size := steps * d
	tw0 := t / dzWindow * dzWindow
	tw1 := min(tw0+dzWindow, steps)
	batch := (s0 - k0) / j.plan.lanes
	blk0 := (s0 - k0) / sumBlock
	carry := w.carry
	if bt.sum > 0 && cutsBlocks(j.plan.lanes, j.items) { // IntegratedGradientsAll: this sum's carries
		carry = [2][]float64{w.carry[0][bt.sum*steps*g:], w.carry[1][bt.sum*steps*g:]}
	}
	for a := 0; a < used; {
		blk := (s0 + a - k0) / sumBlock
		first, end := k0+blk*sumBlock, min(k0+(blk+1)*sumBlock, k1)
		e := min(used, end-s0)
		win := w.dzSum[(blk-blk0)*dzWindow*g:][:(tw1-tw0)*g]
		sum := win[(t-tw0)*g : (t-tw0+1)*g]
		if s0+e < end {
			sum = carry[batch&1][t*g : (t+1)*g]
		}
		if first < s0 {
			copy(sum, carry[(batch+1)&1][t*g:(t+1)*g])
		} else {
			clear(sum)
		}
		laneSums(sum, w.dz, l, a, e, j.wts[s0+a:s0+e])
		if s0+e == end && t == tw0 {
			kernel.MulAddRows(part[blk*size+tw0*d:blk*size+tw1*d], d, n.wx, d, win, g, g)
		}
		a = e
	}
}

// dzWindow is the number of steps whose sums of dz dzSums multiplies by W_xᵀ
// in one product.
const dzWindow = 8

// dzBlocks is the most blocks of 16 items a batch of l lanes touches.
func dzBlocks(l int) int { return (l+sumBlock-1)/sumBlock + 1 }

// laneSums adds Σ_q w[q]·gx[i*l+a+q], q in order, to p[i] for every i <
// len(p). The sums are independent chains of fused multiply-adds, each bound
// by the latency of the one before; four run side by side so that the
// processor overlaps them (measured, IG sp-counter T = 256, 1000 steps, 1
// thread: the sums took 12% of the time one at a time).
func laneSums(p, gx []float64, l, a, e int, w []float64) {
	w = w[:e-a]
	i := 0
	for ; i+4 <= len(p); i += 4 {
		r0 := gx[i*l+a : i*l+e]
		r1 := gx[(i+1)*l+a : (i+1)*l+e]
		r2 := gx[(i+2)*l+a : (i+2)*l+e]
		r3 := gx[(i+3)*l+a : (i+3)*l+e]
		r0, r1, r2, r3 = r0[:len(w)], r1[:len(w)], r2[:len(w)], r3[:len(w)]
		s0, s1, s2, s3 := p[i], p[i+1], p[i+2], p[i+3]
		for q, v := range w {
			s0 = math.FMA(v, r0[q], s0)
			s1 = math.FMA(v, r1[q], s1)
			s2 = math.FMA(v, r2[q], s2)
			s3 = math.FMA(v, r3[q], s3)
		}
		p[i], p[i+1], p[i+2], p[i+3] = s0, s1, s2, s3
	}
	for ; i < len(p); i++ {
		acc := p[i]
		for q, v := range gx[i*l+a : i*l+e] {
			acc = math.FMA(w[q], v, acc)
		}
		p[i] = acc
	}
}

package cell

import "slices"

// One input's IG on every core when its lanes are one chunk of
// checkpointed lanes (a long input: IG's 50 steps on 1,000 tokens are one
// batch of 50 lanes, where chunks of whole blocks of 16 steps would leave
// one core waiting on the other) and the model's steps are too small to
// share on a team (igPlan: the H = 256 model's go on a team). The workers
// share the chunk, each its own run of lanes and its own checkpoints: each
// runs its forward pass and the layers above the first alone, then layer
// 0's sweeps in a pipeline, segment by segment: worker q adds its lanes'
// dz to a segment's sums only after worker q−1 has added its own, so each
// element of a sum gets its lanes' terms in order of the step, as one
// worker's batch adds them (laneSums), and the last worker multiplies the
// sums (flushSums). A segment's sums are one slot of a ring of one slot
// per worker, so that worker 0 runs ahead while the others catch up. The
// same bits as any other plan.
//
// ŷ(x) and ŷ(0), which the other plans take as a two-lane batch before
// the job, are one more lane of worker 0's batch and of the last
// worker's: a pass costs about as much for 26 lanes as for 25, and not
// the serial pass of two lanes (a pass of 2 lanes costs about what one of
// 24 does). The class is chosen once both are in; the backward passes
// wait for it, and leave the extra lane out of the sums (gradSink.used).
//
// The runs are as even as the lanes allow (25 + 25). Measured, IG 50 steps
// on 1,000 tokens of the H = 256 model, 2 cores: 25 + 25 lanes 1.01 s;
// 24 + 24 with the last 2 lanes a batch of their own, its forward pass on
// worker 0 and its sweeps on worker 1, 1.11 s (a product costs about as
// much for 2 lanes as for 24).

// splitPlan returns the plan that splits n IG steps of a steps-long input
// across the workers (at most one per step) as checkpointed lanes, and
// whether it fits the budget and maxLanes. extra is the memory of one
// worker besides its lanes.
func (r *Runner) splitPlan(steps, n int, budget int64, workers, maxLanes int, extra func(p runPlan) int64) (runPlan, bool) {
	w := min(workers, n)
	if w < 2 {
		return runPlan{}, false
	}
	seg, nseg := segments(steps)
	p := runPlan{workers: w, lanes: (n+w-1)/w + 1, ck: true, split: true, seg: seg, nseg: nseg, keep: r.s.keeps()} // + ŷ(x) or ŷ(0)
	if p.lanes > maxLanes {
		return runPlan{}, false
	}
	cost := func() int64 { return int64(w) * (r.s.laneCost(p, steps) + extra(p)) }
	if p.keep && cost() > budget {
		p.keep = false
	}
	return p, cost() <= budget
}

// splitRange returns the steps [b0, b1) of worker q of w.
func splitRange(q, w, n int) (b0, b1 int) { return q * n / w, (q + 1) * n / w }

// runSplit is run for a split plan: wk's run of lanes.
func (j *igJob) runSplit(wk *worker) {
	if err := j.splitLanes(wk, slices.Index(j.pool, wk)); err != nil {
		j.fail(err)
	}
}

func (j *igJob) splitLanes(wk *worker, q int) error {
	s := j.r.s
	w, n := len(j.pool), len(j.alphas)
	owner := j.pool[0] // holds the ring of sums and the blocks' products
	last := q == w-1
	b0, b1 := splitRange(q, w, n)
	l := b1 - b0
	lr, ck := wk.r, wk.r.ck
	sk := gradSink{seg: ck.seg, perLane: j.perLane}
	nb := (n + igBlock - 1) / igBlock
	slot := nb * ck.seg * sk.width(s)
	if q == 0 {
		clear(owner.dzSum[:w*slot]) // before anyone's first segment
	}
	part := owner.part[:nb*j.steps*s.in]
	if last {
		clear(part) // before its first flushSums, which only it runs
	}
	j.scaleLanes(lr, b0, l)
	lanes := l // with ŷ(x) (worker 0) or ŷ(0) (the last) as lane l
	if q == 0 || last {
		a := 1.0
		if last {
			a = 0
		}
		lr.scale[l], lr.occluded[l] = float64(j.x.scale*a), -1
		lanes++
	}
	lr.forward(j.r.u, j.steps, lanes)
	if err := canceled(j.ctx); err != nil {
		return err
	}
	if !j.splitClass(lr, l, lanes, q == 0, last) {
		return nil
	}
	lr.backwardUpper(lanes, j.class)
	if err := canceled(j.ctx); err != nil {
		return err
	}
	sk.wts, sk.k0, sk.part, sk.used = j.weights[b0:b1], b0, part, l
	k := 0 // segments swept so far, every direction
	for d := range s.dirs {
		lr.startSweep(0, d, lanes)
		for i := ck.nseg - 1; i >= 0; i, k = i-1, k+1 {
			// Worker q−1 has added its dz to this segment's sums, or, for
			// worker 0, the segment that last used the slot is flushed.
			if !j.await(func() bool { return q > 0 && j.pool[q-1].swept > k || q == 0 && j.pool[w-1].swept > k-w }) {
				return nil // another worker failed: the job has its error
			}
			sg := ck.segAt(s.cells[d].reverse, i)
			sk.dzSum = owner.dzSum[k%w*slot : (k%w+1)*slot]
			lr.sweepSegment(0, d, sg, lanes, &sk)
			if err := canceled(j.ctx); err != nil {
				return err // the sweep may have been cut short (wk.stop)
			}
			if last {
				lr.flushSums(&sk, d, sg, nb)
			}
			j.mu.Lock()
			wk.swept++
			j.cond.Broadcast()
			j.mu.Unlock()
		}
	}
	j.prog.add(l)
	if last {
		j.addBlocks(0, part, nb)
	}
	return nil
}

// splitClass hands over the logits of lane e of lr's batch of lanes, ŷ(x)
// for worker 0 (isX) and ŷ(0) for the last, and waits for the class: the
// last worker chooses it once both are in. It reports false if the job
// failed.
func (j *igJob) splitClass(lr *lanes, e, lanes int, isX, last bool) bool {
	c := j.r.s.c
	j.mu.Lock()
	if isX {
		for k := range c {
			j.y[k] = lr.logitsBuf[k*lanes+e]
		}
		j.haveY = true
	}
	if last {
		for k := range c {
			j.y0[k] = lr.logitsBuf[k*lanes+e]
		}
		j.haveY0 = true
	}
	j.cond.Broadcast()
	j.mu.Unlock()
	if !last {
		return j.await(func() bool { return j.classReady })
	}
	if !j.await(func() bool { return j.haveY }) {
		return false
	}
	class, err := j.choose(j.y)
	if err == nil {
		err = checkClass(class, c)
	}
	if err != nil {
		j.fail(err)
		return false
	}
	j.mu.Lock()
	j.class, j.classReady = class, true
	j.cond.Broadcast()
	j.mu.Unlock()
	return true
}

// await waits until ready() (called with j.mu held), and reports false if
// the job failed first.
func (j *igJob) await(ready func() bool) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.err == nil {
		if ready() {
			return true
		}
		j.cond.Wait()
	}
	return false
}

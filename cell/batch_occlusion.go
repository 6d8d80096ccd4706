package cell

import (
	"context"
	"fmt"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// Occlusion: the logit of every copy of x with one row set to zero. The
// unoccluded pass runs once (prefix), keeping the state at the start of
// every chunk; chunk ci runs the copies that occlude positions ci·lanes, …
// as the lanes of one batch from that state. No sum crosses lanes or
// chunks: each position's logit is written once, by its lane.

// occlusion is Batcher.Occlusion.
func (j *job) occlusion(ctx context.Context, x Input, class int, out []float64, opt BatchOptions) error {
	n := j.net
	if err := x.check(n.d); err != nil {
		return err
	}
	if err := n.checkClass(class); err != nil {
		return err
	}
	if len(out) != x.Len() {
		return fmt.Errorf("cell: occlusion buffer has %d elements, want T = %d", len(out), x.Len())
	}
	if err := fitBudget(occlusionLaneBytes(j.shape()), limitsOf(opt)); err != nil {
		return err
	}
	j.reset(request{
		kind: jobOcclusion, x: x, class: class, out: out, progress: opt.Progress,
		items: x.Len(), plan: planOcclusion(j.shape(), x.Len(), limitsOf(opt)),
	})
	return j.run(ctx)
}

// prefix runs the unoccluded input once, one lane on w, and keeps h and c
// at the start of every occlusion chunk.
func (j *job) prefix(w *laneWorker) {
	n := j.net
	h, l := n.h, j.plan.lanes
	zero := w.zero[:h]
	clear(zero)
	j.fillTablesUniform(w, 1, j.x.scale)
	hPrev, cPrev := zero, zero
	for t := range j.x.Len() {
		if t%l == 0 {
			ci := t / l
			copy(j.pre[2*ci*h:(2*ci+1)*h], hPrev)
			copy(j.pre[(2*ci+1)*h:(2*ci+2)*h], cPrev)
		}
		hPrev, cPrev = j.stepForward(w, 1, t, t&1, hPrev, cPrev)
	}
}

// occlusionChunk runs the variants that occlude positions ci·lanes, … as one
// batch from the unoccluded state at the first of them: lane b follows the
// unoccluded input (the same bits as its prefix) until its own position.
func (j *job) occlusionChunk(w *laneWorker, ci int) {
	n := j.net
	h := n.h
	p0 := ci * j.plan.lanes
	used := min(j.plan.lanes, j.items-p0)
	// Padding lanes (to a multiple of 8) occlude nothing; their results
	// are dropped.
	l := max(used, min(roundUp8(used), j.plan.lanes))
	hl := h * l
	preH, preC := j.pre[2*ci*h:(2*ci+1)*h], j.pre[(2*ci+1)*h:(2*ci+2)*h]
	h0, c0 := w.h0[:hl], w.c0[:hl]
	for u := range h {
		fill(h0[u*l:(u+1)*l], preH[u])
		fill(c0[u*l:(u+1)*l], preC[u])
	}
	j.fillTablesUniform(w, l, j.x.scale)
	hPrev, cPrev := h0, c0
	for t := p0; t < j.items; t++ {
		if (t-p0)%64 == 63 && j.cancelled() {
			return
		}
		occ := t - p0
		if occ < used {
			w.scale[occ], w.occ = 0, occ
		}
		hPrev, cPrev = j.stepForward(w, l, t, t&1, hPrev, cPrev)
		if occ < used {
			w.scale[occ], w.occ = j.x.scale, -1
		}
	}
	if j.outs == nil {
		j.occludedLogit(w, hPrev, j.class, j.out[p0:p0+used], l)
	} else {
		for c, out := range j.outs { // OcclusionAll: every class from the same states
			j.occludedLogit(w, hPrev, c, out[p0:p0+used], l)
		}
	}
	j.mu.Lock()
	j.report(used)
	j.mu.Unlock()
}

// occludedLogit writes ŷ_class of the first len(out) of l lanes whose last
// h is hLast to out.
func (j *job) occludedLogit(w *laneWorker, hLast []float64, class int, out []float64, l int) {
	n := j.net
	h := n.h
	lin := w.lin[:l]
	clear(lin)
	kernel.AxpyRows(lin, hLast, l, n.p.Wy[class*h:(class+1)*h])
	by := n.p.By[class]
	for lane, v := range lin[:len(out)] {
		out[lane] = v + by
	}
}

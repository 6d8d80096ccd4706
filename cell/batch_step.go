package cell

import (
	"fmt"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// stepForward runs time step t of the l lanes from (hPrev, cPrev) into trace
// slot slot and returns the new h and c. Lane b reads row t of the input
// scaled by w.scale[b] (0 occludes the row). The gates of the current
// tableSet take their activations from w's tables (fillTables); only the
// other rows' pre-activations are computed.
func (j *job) stepForward(w *laneWorker, l, t, slot int, hPrev, cPrev []float64) (hNew, cNew []float64) {
	n := j.net
	h, g := n.h, n.gates
	hl := h * l
	z := w.gates[slot*g*l : (slot+1)*g*l]
	j.ensureBias(w, l)
	x := j.x
	scale := w.scale[:l]
	// The input product of lane k is scale[k]·u with u = W_x·x_t, row r
	// adding u_r·scale to the bias: on one-hot inputs u is column s of W_x
	// (a scaled column gather), on dense inputs the product of the unscaled
	// row, shared by all lanes (see Network.inputProducts).
	var u []float64
	if x.dense != nil {
		u = j.inputProduct(w, t)
	} else if s := x.symbols[t]; s >= 0 {
		u = n.wxT[s*g : (s+1)*g]
	}
	// z = b + scale·u + W_h·h_{t−1} for rows [r0, r1).
	rows := func(r0, r1 int) {
		copy(z[r0*l:r1*l], w.bias[r0*l:r1*l])
		if u != nil {
			for r := r0; r < r1; r++ {
				if v := u[r]; v != 0 {
					kernel.Axpy(v, scale, z[r*l:(r+1)*l])
				}
			}
		}
		j.mulAdd(z, j.wh, r0, r1, hPrev, l)
	}
	if w.keepC {
		cNew = w.cs[slot*hl : (slot+1)*hl]
	} else {
		cNew = w.cpp[(t&1)*cppOffset(hl):][:hl]
	}
	hNew = w.hs[(t&1)*hl : (t&1+1)*hl]
	tc := w.tc[slot*hl : (slot+1)*hl]
	if j.tabs.runs == nil {
		rows(0, g)
		kernel.GateStep(z, w.zg[slot*hl:(slot+1)*hl], cPrev, cNew, tc, hNew)
		return hNew, cNew
	}
	for _, rr := range j.tabs.rows {
		rows(rr[0], rr[1])
	}
	act := j.tableAt(w, l, t)
	for _, run := range j.tabs.runs {
		o, e := run.j0*l, run.j1*l
		kernel.GateStepTable(z[o:], hl, act[o:], run.mask, cPrev[o:e], cNew[o:e], tc[o:e], hNew[o:e])
	}
	return hNew, cNew
}

// inputProduct returns u = W_x·x_t of the dense input, from w's block of
// inputBlock steps, which it computes first if it does not hold step t: the
// bits of Network.inputProducts, once per block for every lane.
func (j *job) inputProduct(w *laneWorker, t int) []float64 {
	n := j.net
	g, d := n.gates, n.d
	t0 := t / inputBlock * inputBlock
	if w.uxT0 != t0 {
		t1 := min(t0+inputBlock, j.x.Len())
		u := w.ux[:(t1-t0)*g]
		n.inputRows(u, j.x.dense[t0*d:t1*d])
		w.uxT0 = t0
	}
	return w.ux[(t-t0)*g : (t-t0+1)*g]
}

// laneLogits writes to y the logits of lane k of the l-lane state h (H×l),
// as Logits computes them from the last h; col is scratch (H values).
func (e *engine) laneLogits(y, col, h []float64, k, l int) {
	n := e.net
	for j := range col {
		col[j] = h[j*l+k]
	}
	n.decode(y, y, col)
}

// logits is Batcher.Logits: the single lane of Forward on worker 0, without
// a trace.
func (j *job) logits(x Input, logits []float64) error {
	n := j.net
	if err := x.check(n.d); err != nil {
		return err
	}
	if len(logits) != n.c {
		return fmt.Errorf("cell: logits has %d elements, want C = %d", len(logits), n.c)
	}
	j.reset(request{kind: jobLogits, x: x, plan: logitsPlan})
	w := j.pool.grow(1)[0]
	w.reserve(j)
	j.tabs = j.tablesOf(x)
	w.scale[0] = x.scale
	zero := w.zero[:n.h]
	clear(zero)
	hPrev, cPrev := zero, zero
	if x.dense == nil {
		j.fillTablesUniform(w, 1, x.scale)
		for t := range x.Len() {
			hPrev, cPrev = j.stepForward(w, 1, t, t&1, hPrev, cPrev)
		}
	} else {
		hPrev, _ = j.logitsDense(w, hPrev, cPrev)
	}
	n.decode(logits, logits, hPrev)
	return nil
}

// logitsDense is Logits' forward pass over a dense input: z_t = b + s·u_t
// from the input products of inputProduct (a block of steps at a time), plus
// W_h·h_{t−1}, then the gate step: the operations of Network.forward, in its
// order, hence its bits. It returns the last h and c.
func (j *job) logitsDense(w *laneWorker, hPrev, cPrev []float64) (hLast, cLast []float64) {
	n, x := j.net, j.x
	h, g := n.h, n.gates
	for t := range x.Len() {
		slot := t & 1
		z := w.gates[slot*g : (slot+1)*g]
		copy(z, j.inputProduct(w, t))
		scaleInput(z, x.scale, n.p.B)
		j.mulAdd(z, j.wh, 0, g, hPrev, 1)
		cNew, hNew := w.cs[slot*h:(slot+1)*h], w.hs[slot*h:(slot+1)*h]
		kernel.GateStep(z, w.zg[slot*h:(slot+1)*h], cPrev, cNew, w.tc[slot*h:(slot+1)*h], hNew)
		hPrev, cPrev = hNew, cNew
	}
	return hPrev, cPrev
}

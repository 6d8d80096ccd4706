package cell

// laneWorker is one worker's scratch space: the lane buffers of its
// batches, [gate][unit][lane] (see the design notes in batch_engine.go).
// They grow to the largest plan so far and are kept from job to job.
type laneWorker struct {
	// The trace of one segment, [step][gate][unit][lane].
	gates, zg, cs, tc, hs []float64
	ck                    []float64    // checkpoints: h then c at each segment start
	zero                  []float64    // H×lanes zeros
	h0, c0                []float64    // occlusion: the start state, H×lanes each
	dz                    []float64    // 4H×lanes
	dh, dc, dcPrev        []float64    // H×lanes
	gx                    []float64    // D×lanes
	dzSum                 []float64    // dense inputs: the blocks' sums of dz over dzWindow steps, [block][step][4H]
	carry                 [2][]float64 // dense inputs: the sums of dz (T×4H) of a block cut by the end of a batch
	ux                    []float64    // dense inputs: W_x·x_t for the inputBlock steps from uxT0, [step][4H]
	uxT0                  int          // the first step in ux, or −1
	scale, lin            []float64    // lanes
	parts                 [2]partBuf   // IG: two chunks' block partial sums
	bias                  []float64    // 4H×biasLanes: the bias b repeated over the lanes
	tab                   []float64    // the activation tables, one 4H×lanes block per symbol (see tableSet)
	patch                 []float64    // occlusion: a table with one lane's row occluded, 4H×lanes
	tabKey                tabKey       // what tab holds, if every lane has the same scale
	keepC                 bool         // IG: c in the trace (cs), else in two slots (cpp)
	cpp                   []float64    // IG without keepC: c_t in slot t&1, cppOffset apart
	occ                   int          // occlusion: the lane whose current row is occluded, or -1
	biasLanes             int
}

// reserve grows w's buffers to j's plan and resets its per-job state.
func (w *laneWorker) reserve(j *job) {
	n, p := j.net, j.plan
	h, d, l, s := n.h, n.d, p.lanes, p.seg
	steps := j.x.Len()
	grow := func(v *[]float64, size int) {
		if len(*v) < size {
			*v = make([]float64, size)
		}
	}
	grow(&w.gates, s*4*h*l)
	grow(&w.zg, s*h*l)
	grow(&w.cs, s*h*l)
	grow(&w.tc, s*h*l)
	grow(&w.hs, 2*h*l)
	grow(&w.cpp, cppOffset(h*l)+h*l)
	if len(w.tab) < (d+1)*4*h*l {
		w.tab, w.tabKey = make([]float64, (d+1)*4*h*l), tabKey{}
	}
	if j.kind == jobIG {
		if nseg := (steps + s - 1) / s; nseg > 1 {
			grow(&w.ck, nseg*2*h*l)
		}
		for i := range w.parts {
			grow(&w.parts[i].v, j.sums()*p.chunk/sumBlock*steps*d)
			w.parts[i].busy = false
		}
		grow(&w.gx, d*l)
	} else if j.kind == jobOcclusion {
		grow(&w.h0, h*l)
		grow(&w.c0, h*l)
		grow(&w.patch, 4*h*l)
	}
	w.occ = -1
	grow(&w.zero, h*l)
	grow(&w.dz, 4*h*l)
	grow(&w.dh, h*l)
	grow(&w.dc, h*l)
	grow(&w.dcPrev, h*l)
	if j.x.dense != nil {
		grow(&w.ux, inputBlock*4*h)
		grow(&w.dzSum, dzBlocks(l)*dzWindow*4*h)
		if j.kind == jobIG && cutsBlocks(l, j.items) {
			grow(&w.carry[0], j.sums()*steps*4*h)
			grow(&w.carry[1], j.sums()*steps*4*h)
		}
	}
	w.uxT0 = -1
	grow(&w.scale, l)
	grow(&w.lin, l)
	if len(w.bias) < 4*h*l {
		w.bias = make([]float64, 4*h*l)
		w.biasLanes = 0
	}
	if j.kind == jobOcclusion {
		grow(&j.pre, ((steps+l-1)/l)*2*h)
	}
}

// cppOffset is where the second of the two c slots starts: hl values on,
// rounded so that the slots lie 2048 bytes off a multiple of 4096 apart.
// With the two slots one trace slot (hl values, here 3584 bytes) apart, a
// load of c_{t−1} a few vectors ahead of the store of c_t hit the same
// address bits 0–11 every other step, and the processor made it wait for
// the store (4K aliasing): 8% slower at 1 thread.
func cppOffset(hl int) int {
	return ((hl*8+4095)/4096*4096 + 2048) / 8
}

// ensureBias fills w.bias with the bias repeated over l lanes.
func (e *engine) ensureBias(w *laneWorker, l int) {
	if w.biasLanes == l {
		return
	}
	w.biasLanes = l
	for r, v := range e.net.p.B {
		fill(w.bias[r*l:(r+1)*l], v)
	}
}

func fill(v []float64, x float64) {
	for i := range v {
		v[i] = x
	}
}

package cell

import (
	"math"
	"math/bits"
	"runtime"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// Planning: how a job is cut into batches and chunks, and how much of the
// trace backprop keeps. These are pure functions of the network's shape,
// the job's size and the options (limits); only scheduling depends on
// them, never a result.

// maxLanes is the largest number of lanes (α-scaled copies or occluded
// variants) that travel through the network together. 64 lanes make every
// row of a batched product 64 values (8 AVX-512 vectors) long and a gate
// step H·64 values long, which is past the point where wider batches gain
// anything on the white-box networks (H = 1 … 102), while the trace of a
// batch stays small enough to be cut into chunks that both cores can share.
const maxLanes = 64

// cacheBytes is the size of the L2 cache a checkpointed segment's trace
// should fit: the processor's (kernel.Caches).
var cacheBytes = func() int64 { _, l2 := kernel.Caches(); return int64(l2) }()

// plan is the decomposition of a job. Only scheduling depends on it.
type plan struct {
	workers int
	lanes   int // lanes per batch
	chunk   int // items per chunk (IG: a multiple of 16)
	seg     int // time steps per trace segment (T: no checkpointing)
}

// logitsPlan is the plan of Logits: one lane on the calling goroutine, two
// trace slots.
var logitsPlan = plan{workers: 1, lanes: 1, chunk: 1, seg: 2}

// shape is what planning needs of a network: H and D, and the gradient
// sums each IG lane feeds (C for IntegratedGradientsAll; 0 counts as 1).
type shape struct{ h, d, sums int }

// limits are a call's BatchOptions with the defaults filled in.
type limits struct {
	budget  int64 // bytes of scratch memory, > 0
	workers int   // > 0
	lanes   int   // the cap on the lanes per batch; 0: automatic
}

// limitsOf fills in the defaults of opt (its fields are not negative).
func limitsOf(opt BatchOptions) limits {
	l := limits{budget: opt.Budget, workers: opt.Workers, lanes: max(opt.Lanes, 0)}
	if l.budget <= 0 {
		l.budget = DefaultBudget
	}
	if l.workers <= 0 {
		l.workers = runtime.GOMAXPROCS(0)
	}
	return l
}

// igBytes is the scratch memory of one IG worker with batches of the given
// lanes, segments of seg time steps, an input of the given steps (dense or
// not) and the given items (α steps) in all.
func igBytes(s shape, lanes, seg, steps, items int, dense bool) int64 {
	h, d := int64(s.h), int64(s.d)
	l, sg, t := int64(lanes), int64(seg), int64(steps)
	sums := int64(max(1, s.sums))
	words := sg*7*h*l + 2*h*l    // trace: gates 4H, zg, c, tanh c; h (two slots)
	words += (d + 1) * 4 * h * l // activation tables
	if nseg := (t + sg - 1) / sg; nseg > 1 {
		words += nseg * 2 * h * l
	}
	words += (4*h + 4*h + d + 2) * l // dz, dh, dc, dcPrev, zero; gx; scale, lin
	words += inputBlock*4*h + 4*h    // dense inputs: the input products of a block, a sum of dz
	if dense && cutsBlocks(lanes, items) {
		words += sums * t * 4 * h // the sums of dz of a block cut by a batch
	}
	words += 2 * sums * int64(chunkOf(lanes)/sumBlock) * t * d
	return 8 * words
}

// occlusionLaneBytes is the scratch memory of one lane of an occlusion
// batch: a forward-only batch needs two trace slots and the start state.
func occlusionLaneBytes(s shape) int64 {
	h, d := int64(s.h), int64(s.d)
	return 8 * (2*8*h + 2*h + 8*h + 2*d + 2 + (d+2)*4*h)
}

// cutsBlocks reports whether IG batches of the given lanes cut blocks of 16
// items when there are items in all.
func cutsBlocks(lanes, items int) bool { return lanes%sumBlock != 0 && items > lanes }

// chunkOf is the IG chunk for batches of the given lanes: whole blocks of 16.
func chunkOf(lanes int) int { return (lanes + sumBlock - 1) / sumBlock * sumBlock }

// planIG plans an IG job of n items (α steps) over an input of the given
// steps, dense or one-hot.
func planIG(s shape, steps, n int, dense bool, lim limits) plan {
	budget := lim.budget
	w := lim.workers
	top := maxLanes
	if lim.lanes > 0 {
		top = min(top, lim.lanes)
	}
	// Enough chunks for every worker, and not many more lanes than steps.
	top = min(top, max(sumBlock, chunkOf((n+w-1)/w)), roundUp8(n))
	if lim.lanes == 0 {
		top = min(maxLanes, 1<<bits.Len(uint(top-1))) // a power of two: whole batches per chunk
	}
	fits := func(p plan) bool { return int64(p.workers)*igBytes(s, p.lanes, p.seg, steps, n, dense) <= budget }
	mk := func(lanes, seg int) plan {
		chunk := chunkOf(lanes)
		return plan{workers: min(w, (n+chunk-1)/chunk), lanes: lanes, chunk: chunk, seg: seg}
	}
	// As many lanes as fit, with the whole trace if it fits, else with
	// checkpoints every ⌈√T⌉ steps, as long as a segment's trace then stays
	// in the L2 cache: there recomputing costs little. Otherwise fewer lanes
	// with the whole trace come first. Measured, 2 threads: IG 10 000
	// steps, T = 4096, sp-counter (segment 1.8 MB): 64 lanes whole trace
	// 2.54 s, 64 lanes checkpointed 2.96 s, 32 lanes whole trace 3.88 s;
	// dense H = 256, 50 steps, T = 256, 1 thread (segment 16 MB): 32 lanes
	// whole trace 1.37 s, 64 lanes checkpointed 1.77 s.
	// All the items in one batch per worker, if its whole trace fits even
	// though the power of two above does not: the weights then go by once
	// per time step for all of them. Measured, dense H = 256, 50 steps,
	// T = 256, 1 thread: one batch of 56 lanes 0.436 s, 32 + 24 lanes 0.473 s.
	if one := roundUp8((n + w - 1) / w); lim.lanes == 0 && one <= maxLanes && one > top/2 {
		if p := mk(one, steps); fits(p) {
			return p
		}
	}
	seg := int(math.Ceil(math.Sqrt(float64(steps))))
	segBytes := func(l int) int64 { return int64(seg) * 8 * int64(s.h) * int64(l) * 8 }
	for l := top; l >= 1; l /= 2 {
		if p := mk(l, steps); fits(p) {
			return p
		}
		if p := mk(l, seg); fits(p) && (segBytes(l) <= cacheBytes || l <= sumBlock) {
			return p
		}
	}
	for l := top; l >= 1; l /= 2 {
		if p := mk(l, seg); fits(p) {
			return p
		}
	}
	p := mk(1, seg)
	for p.workers > 1 && !fits(p) {
		p.workers--
	}
	return p
}

// planOcclusion plans the occlusion of every position of an input of the
// given steps.
func planOcclusion(s shape, steps int, lim limits) plan {
	w := lim.workers
	lanes := maxLanes
	if lim.lanes > 0 {
		lanes = min(lanes, lim.lanes)
	}
	// Enough chunks for every worker; two more per worker balance chunks of
	// decreasing length (a chunk at t runs T − t steps).
	lanes = max(1, min(lanes, steps/(3*w)))
	if lim.lanes == 0 && lanes > 8 {
		lanes &^= 7 // whole vectors
	}
	per := occlusionLaneBytes(s)
	for lanes > 1 && int64(w*lanes)*per > lim.budget {
		lanes /= 2
	}
	chunks := (steps + lanes - 1) / lanes
	return plan{workers: min(w, chunks), lanes: lanes, chunk: lanes, seg: 2}
}

func roundUp8(n int) int { return (n + 7) &^ 7 }

// fitBudget returns an error when the smallest plan of a job, one worker
// with one lane (need bytes), does not fit the budget: a budget is a
// bound, not a wish, and a smaller one would only be overrun.
func fitBudget(need int64, lim limits) error {
	if need > lim.budget {
		return &BudgetError{Budget: lim.budget, Need: need, What: "one lane of this input"}
	}
	return nil
}

// minIGBytes is the memory of the smallest IG plan: one worker, one lane,
// checkpoints every ⌈√T⌉ steps.
func minIGBytes(s shape, steps, n int, dense bool) int64 {
	seg := int(math.Ceil(math.Sqrt(float64(steps))))
	return igBytes(s, 1, seg, steps, n, dense)
}

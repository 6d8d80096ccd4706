package cell

import (
	"context"
	"sync"
	"sync/atomic"
)

// Design of the batched paths.
//
// Layout. A batch of l lanes keeps every per-unit quantity as
// [gate][unit][lane]: the pre-activations of one time step are 4H rows of l
// values. A batched gate step is then a single kernel.GateStep over H·l
// values, and each product (W_x·x, W_h·h, and backprop's W_xᵀ·dz, W_hᵀ·dz)
// is, per output row r, a kernel.AxpyRows over rows of l lanes with the
// coefficients of row r of the weight matrix (kernel.MulAddRows runs those
// axpys for several output rows at once, with the same bits). Each lane therefore receives
// the same fused multiply-adds in the same order as the single path, whose
// AxpyRows runs over the transposed weights: the same bits, with the loops
// that a SIMD kernel vectorises running across lanes (64 by default)
// instead of across H (7 units in sp-counter). The lane-major alternative
// [lane][gate][unit] would reuse the single-lane kernels unchanged but
// vectorise over H only. For dense, wide networks the register-blocked
// product of matmul.go replaces the axpys (measurements there). On dense
// inputs the lanes share their input products: lane k's is
// scale_k·(W_x·x_t), one product per step for all lanes, and IG multiplies
// each block's weighted sum of dz by W_xᵀ instead of every lane's dz, as
// Network.forward and Network.GradientSum define them.
//
// Determinism. IG's sum is that of Network.GradientSum: gradients are added
// to a partial sum in step order within fixed blocks of 16 steps, and the
// blocks' partial sums to the total in block order. A chunk is a run of
// whole blocks; a worker computes its chunk's partial sums privately and
// leaves them pending; they are added to the total once every earlier chunk
// has been, by whichever worker completes that run. The number
// of workers, the lanes per batch, the chunk size and checkpointing change
// only the schedule, never an operation, so every setting gives the same
// bits. Occlusion writes one value per position: no reduction at all.
//
// Memory. One IG worker holds the trace of one segment (S steps × 8H values
// × l lanes), the states at segment starts (⌈T/S⌉ × 2H × l) and two chunks'
// partial sums (l/16 blocks × T × D; dense inputs add two T×4H sums of dz
// when batches cut blocks of 16). With S = T no state is recomputed;
// when that does not fit the budget, S = ⌈√T⌉: the forward pass keeps every
// S-th state, and backprop recomputes each segment before it runs through
// it, about one forward pass more, for memory O(l·H·√T). Nothing is
// proportional to the number of steps.
//
// State, by lifetime. An engine depends on the network only (its products
// and tables), made once by NewBatcher. A pool (batch_pool.go) holds the
// worker goroutines and each worker's lane buffers (laneWorker), grown to
// the largest plan so far. A job is one call: its request (the input and
// where the results go), its plan and its progress; it is reset wholesale
// at the start and the end of each call, keeping only buffers sized to
// earlier calls (jobScratch).

// engine is what a Batcher derives from its network: the products and the
// gate tables. It does not change after newEngine.
type engine struct {
	net    *Network
	tiled  bool        // use the register-blocked product (dense, wide networks)
	tables [2]tableSet // the gates taken from tables: [0] one-hot inputs, [1] dense
	// The products: W_x and W_h (forward), W_xᵀ and W_hᵀ (backprop).
	wx, wh, wxT, whT *product
}

func newEngine(n *Network) *engine {
	g, h, d := n.gates, n.h, n.d
	tiled := useTiled(n)
	return &engine{
		net: n, tiled: tiled, tables: [2]tableSet{tablesFor(n, true, tiled), tablesFor(n, false, tiled)},
		wx: newProduct(n.wx, n.wxT, g, d), wh: newProduct(n.wh, n.whT, g, h),
		wxT: newProduct(n.wxT, n.wx, d, g), whT: newProduct(n.whT, n.wh, h, g),
	}
}

// shape is what planning needs to know of the engine's network.
func (e *engine) shape() shape { return shape{h: e.net.h, d: e.net.d} }

// tablesOf returns the tableSet for input x.
func (e *engine) tablesOf(x Input) *tableSet {
	if x.IsOneHot() {
		return &e.tables[0]
	}
	return &e.tables[1]
}

type jobKind int

const (
	jobIG jobKind = iota
	jobOcclusion
	jobLogits
)

// request is what one call asks for: the input, where the results go, and
// the plan of the work.
type request struct {
	kind        jobKind
	x           Input
	class       int
	alphas, wts []float64   // IG: the α steps and their weights
	acc         []float64   // IG: the weighted sum of gradients, T×D
	accs        [][]float64 // IntegratedGradientsAll: acc of every class, instead of acc and class
	out         []float64   // occlusion: one logit per occluded position
	outs        [][]float64 // OcclusionAll: out of every class, instead of out
	progress    func(done, total int)
	items       int // IG steps or occluded positions
	plan        plan

	// IG with logits (IntegratedGradients): when y is not nil, the batch's
	// first two padding lanes carry x and its zero copy; after the forward
	// pass their logits go to y and y0 and resolve picks the class, which
	// then replaces class. With pairFirst, x and its zero copy are not
	// padding lanes but a two-lane batch that worker 0 runs first
	// (pairClass); the others start their chunks and wait for the class
	// before backprop.
	y, y0     []float64
	resolve   func(y []float64) (int, error)
	pairFirst bool
}

// jobScratch holds the buffers of a job that are sized to the call and kept
// from call to call.
type jobScratch struct {
	pending []*partBuf // IG: finished chunks not yet committed, by chunk
	pre     []float64  // occlusion: h and c of the unoccluded pass at each chunk start
}

// job is one call on an engine and a pool: the request, the table set of
// its input, and the progress the workers share.
type job struct {
	*engine
	pool *pool
	request
	ctx    context.Context
	tabs   *tableSet // those of the request's input
	chunks int       // of plan.chunk items

	next atomic.Int64 // the next chunk to take
	stop atomic.Bool  // the job failed or was cancelled
	mu   sync.Mutex   // guards what follows and jobScratch.pending; cond's lock
	cond sync.Cond    // broadcast on a commit, the class, a failure
	// Chunks committed (IG), items done, the class resolved (pairFirst),
	// the first error.
	committed, done int
	classReady      bool
	err             error

	jobScratch
}

func newJob(e *engine, p *pool) *job {
	j := &job{engine: e, pool: p}
	j.cond.L = &j.mu
	return j
}

// reset makes j a new job for r, keeping its scratch buffers.
func (j *job) reset(r request) {
	*j = job{engine: j.engine, pool: j.pool, request: r, jobScratch: j.jobScratch}
	j.cond.L = &j.mu
}

// clear ends a call: j lets go of the caller's input, outputs and context.
func (j *job) clear() { j.reset(request{}) }

// run runs the planned job on the workers and waits for it.
func (j *job) run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p := j.plan
	j.ctx = ctx
	j.tabs = j.tablesOf(j.x)
	j.chunks = (j.items + p.chunk - 1) / p.chunk
	if cap(j.pending) < j.chunks {
		j.pending = make([]*partBuf, j.chunks)
	}
	j.pending = j.pending[:j.chunks]
	clear(j.pending)
	workers := j.pool.grow(p.workers)
	for _, w := range workers {
		w.reserve(j)
	}
	if j.kind == jobOcclusion {
		j.prefix(workers[0])
	}
	j.pool.run(j, p.workers)
	return j.err
}

// lead is the calling goroutine's part of the job, on worker 0.
func (j *job) lead(w *laneWorker) {
	if j.pairFirst {
		j.pairClass(w)
	}
	j.work(w)
}

// work takes chunks until none is left or the job failed.
func (j *job) work(w *laneWorker) {
	for !j.stop.Load() {
		ci := int(j.next.Add(1) - 1)
		if ci >= j.chunks {
			return
		}
		if err := j.ctx.Err(); err != nil {
			j.fail(err)
			return
		}
		if j.kind == jobIG {
			j.igChunk(w, ci)
		} else {
			j.occlusionChunk(w, ci)
		}
	}
}

// fail stops the job with err, unless it failed before.
func (j *job) fail(err error) {
	j.mu.Lock()
	if j.err == nil {
		j.err = err
	}
	j.stop.Store(true)
	j.cond.Broadcast()
	j.mu.Unlock()
}

// cancelled checks the context inside a long chunk.
func (j *job) cancelled() bool {
	if j.stop.Load() {
		return true
	}
	if err := j.ctx.Err(); err != nil {
		j.fail(err)
		return true
	}
	return false
}

// report counts finished items and calls Progress; j.mu must be held.
func (j *job) report(items int) {
	j.done += items
	if j.progress != nil {
		j.progress(j.done, j.items)
	}
}

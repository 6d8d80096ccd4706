package cell

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// DefaultBudget is the scratch memory a Batcher may use when BatchOptions
// gives none: 256 MiB.
const DefaultBudget int64 = 256 << 20

// maxLanes is the largest number of lanes (α-scaled copies or occluded
// variants) that travel through the network together. 64 lanes make every
// row of a batched product 64 values (8 AVX-512 vectors) long and a gate
// step H·64 values long, which is past the point where wider batches gain
// anything on the white-box networks (H = 1 … 102), while the trace of a
// batch stays small enough to be cut into chunks that both cores can share.
const maxLanes = 64

// BatchOptions tune a Batcher call. None of them changes a result: the
// lanes of a batch compute exactly the operations of the single path, and
// sums over steps are added in the fixed blocks of 16 of GradientSum, in
// order, whatever the chunking.
type BatchOptions struct {
	// Budget bounds the scratch memory of the call in bytes (0:
	// DefaultBudget). It decides the number of lanes per batch and whether
	// backprop keeps the whole trace or only every ⌈√T⌉-th state
	// (checkpointing: the segments in between are recomputed). A budget too
	// small for even one lane with checkpoints is exceeded by that minimum.
	Budget int64
	// Workers is the number of goroutines (0: runtime.GOMAXPROCS(0)).
	Workers int
	// Lanes caps the lanes per batch (0: automatic, at most 64).
	Lanes int
	// Progress, if not nil, is called after each finished chunk with the
	// number of items done (IG steps or occluded positions) and the total.
	// Calls come from the worker goroutines, one at a time, with done
	// increasing.
	Progress func(done, total int)
}

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

// A Batcher runs many variants of one input through a network at once: the
// α-scaled copies of Integrated Gradients and the occluded copies of
// Occlusion. Variants are lanes of a batch in a gate-major layout
// [gate][unit][lane], so that a batched gate step is one kernel.GateStep
// call over H·lanes values and every matrix product is a kernel.AxpyRows
// over rows of one value per lane: each lane sees exactly the floating-point
// operations of the single-input path, in the same order, hence the same
// bits. Batches are cut into chunks that run on several goroutines.
//
// A Batcher reuses its buffers and its goroutines: steady-state calls
// allocate nothing. It is not safe for concurrent use; the Network it
// serves may be shared. Its goroutines end when it is garbage collected;
// after each call they spin for up to 200 µs (spinTime) before they block,
// so that calls in a loop start at once.
type Batcher struct {
	*engine
}

// engine is a Batcher's state; the worker goroutines hold it, not the
// Batcher, so that the Batcher can be collected and the goroutines stopped.
type engine struct {
	net    *Network
	tiled  bool        // use the register-blocked product (dense, wide networks)
	tables [2]tableSet // the gates taken from tables: [0] one-hot inputs, [1] dense
	// The products: W_x and W_h (forward), W_xᵀ and W_hᵀ (backprop).
	wx, wh, wxT, whT *product
	tabs             *tableSet // those of the current job's input

	workers []*laneWorker
	active  atomic.Int32   // worker goroutines still running the current job
	wg      sync.WaitGroup // the same, to block on once spinning is over
	mu      sync.Mutex
	cond    sync.Cond
	stop    atomic.Bool

	// The current job, set before the workers start.
	kind          int
	ctx           context.Context
	x             Input
	class         int
	alphas, wts   []float64
	acc, out      []float64
	plan          plan
	items, chunks int
	next          atomic.Int64
	committed     int
	pending       []*partBuf // IG: finished chunks not yet committed, by chunk
	done          int
	progress      func(done, total int)
	err           error

	// IG with logits (IntegratedGradients): when y is not nil, the batch's
	// first two padding lanes carry x and its zero copy; after the forward
	// pass their logits go to y and y0 and resolve picks the class.
	y, y0   []float64
	resolve func(y []float64) (int, error)
	// With pairFirst, x and its zero copy are not padding lanes but a
	// two-lane batch that worker 0 runs first (pairClass); the others start
	// their chunks and wait for classReady before backprop.
	pairFirst, classReady bool

	pre []float64 // occlusion: h and c of the unoccluded pass at each chunk start

	wake []*waker // one per worker goroutine (workers 1, 2, …)
}

const (
	jobIG = iota
	jobOcclusion
	jobLogits
)

// plan is the decomposition of a job. Only scheduling depends on it.
type plan struct {
	workers int
	lanes   int // lanes per batch
	chunk   int // items per chunk (IG: a multiple of 16)
	seg     int // time steps per trace segment (T: no checkpointing)
}

// laneWorker is one goroutine's scratch space.
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

// NewBatcher returns a Batcher for n.
func NewBatcher(n *Network) *Batcher {
	g, h, d := n.gates, n.h, n.d
	tiled := useTiled(n)
	e := &engine{
		net: n, tiled: tiled, tables: [2]tableSet{tablesFor(n, true, tiled), tablesFor(n, false, tiled)},
		wx: newProduct(n.wx, n.wxT, g, d), wh: newProduct(n.wh, n.whT, g, h),
		wxT: newProduct(n.wxT, n.wx, d, g), whT: newProduct(n.whT, n.wh, h, g),
	}
	e.cond.L = &e.mu
	b := &Batcher{e}
	runtime.AddCleanup(b, (*engine).shutdown, e)
	return b
}

// shutdown ends the worker goroutines.
func (e *engine) shutdown() {
	for _, k := range e.wake {
		close(k.ch)
	}
}

// GradientSum is Network.GradientSum, batched and parallel: it writes
// Σ_k weights[k]·∇ŷ_class(alphas[k]·x) to acc (T×D), the same bits as
// Network.GradientSum for every option. It returns ctx's error if ctx is
// cancelled first (acc then holds a partial sum).
func (b *engine) GradientSum(ctx context.Context, x Input, class int, alphas, weights, acc []float64, opt BatchOptions) error {
	n := b.net
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
	b.kind, b.x, b.class, b.alphas, b.wts, b.acc = jobIG, x, class, alphas, weights, acc
	b.items = len(alphas)
	b.plan = b.planIG(x.Len(), len(alphas), !x.IsOneHot(), opt)
	return b.start(ctx, opt)
}

// IntegratedGradients writes the logits ŷ(x) to y and ŷ(0·x) to y0 (the
// bits of Logits), calls class with y to choose the class c, then writes
// Σ_k weights[k]·∇ŷ_c(alphas[k]·x) to acc as GradientSum does. If class
// returns an error, so does IntegratedGradients, before any gradient. When
// the whole job is one batch with room to spare (the padding lanes that
// round it to whole vectors), x and its zero copy ride along as two of
// those lanes, which then compute exactly Logits' operations: the weights
// go by once per step for all of them instead of in two more passes.
// Otherwise, on one-hot inputs, the two run as a two-lane batch on the first
// worker while the others begin their forward passes (pairClass).
func (b *engine) IntegratedGradients(ctx context.Context, x Input, class func(y []float64) (int, error), alphas, weights, acc, y, y0 []float64, opt BatchOptions) error {
	n := b.net
	if err := x.check(n.d); err != nil {
		return err
	}
	if len(y) != n.c || len(y0) != n.c {
		return fmt.Errorf("cell: logits have %d and %d elements, want C = %d", len(y), len(y0), n.c)
	}
	if want := x.Len() * n.d; len(acc) == want && len(alphas) == len(weights) && len(alphas) > 0 {
		p := b.planIG(x.Len(), len(alphas), !x.IsOneHot(), opt)
		k := len(alphas)
		fused := k <= p.lanes && k <= p.chunk && min(roundUp8(k), p.lanes)-k >= 2
		if fused || (x.IsOneHot() && p.lanes >= 2) {
			clear(acc)
			b.kind, b.x, b.class, b.alphas, b.wts, b.acc = jobIG, x, 0, alphas, weights, acc
			b.y, b.y0, b.resolve, b.pairFirst = y, y0, class, !fused
			b.items = k
			b.plan = p
			err := b.start(ctx, opt)
			b.y, b.y0, b.resolve, b.pairFirst = nil, nil, nil, false
			return err
		}
	}
	if err := b.Logits(x, y); err != nil {
		return err
	}
	if err := b.Logits(x.Scaled(0), y0); err != nil {
		return err
	}
	c, err := class(y)
	if err != nil {
		return err
	}
	return b.GradientSum(ctx, x, c, alphas, weights, acc, opt)
}

// pairClass computes ŷ(x) and ŷ(0·x) of IntegratedGradients' one-hot job
// into b.y and b.y0 on worker w, before w takes a chunk, while the other
// workers start their chunks' forward passes (gradientLanes waits for the
// class before backprop): the two run as the lanes of one batch, each with
// the operations, hence the bits, of Logits (as in the padding lanes of
// the fused path). Then it resolves the class. Measured, IG sp-counter T =
// 256, 1000 steps, 2 threads: two Logits passes before the job took 76 µs
// of its 3.3 ms, all of it serial.
func (b *engine) pairClass(w *laneWorker) {
	n, x := b.net, b.x
	w.scale[0], w.scale[1] = x.scale, x.Scaled(0).scale
	zero := w.zero[:2*n.h]
	clear(zero)
	b.fillTables(w, 2)
	hPrev, cPrev := zero, zero
	for t := range x.Len() {
		hPrev, cPrev = b.stepForward(w, 2, t, t&1, hPrev, cPrev)
	}
	b.laneLogits(b.y, w.dh[:n.h], hPrev, 0, 2)
	b.laneLogits(b.y0, w.dh[:n.h], hPrev, 1, 2)
	c, err := b.resolve(b.y)
	if err == nil {
		err = n.checkClass(c)
	}
	if err != nil {
		b.fail(err)
		return
	}
	b.mu.Lock()
	b.class, b.classReady = c, true
	b.cond.Broadcast()
	b.mu.Unlock()
}

// awaitClass waits until pairClass has set the class; false if the job
// failed or was stopped first.
func (b *engine) awaitClass() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.classReady && !b.stop.Load() {
		b.cond.Wait()
	}
	return !b.stop.Load()
}

// laneLogits writes to y the logits of lane k of the l-lane state h (H×l),
// as Logits computes them from the last h; col is scratch (H values).
func (b *engine) laneLogits(y, col, h []float64, k, l int) {
	n := b.net
	for j := range col {
		col[j] = h[j*l+k]
	}
	clear(y)
	kernel.AxpyRows(y, n.wyT, n.c, col)
	for i, v := range n.p.By {
		y[i] += v
	}
}

// Occlusion writes to out[t] the logit ŷ_class of x with row t set to zero,
// for every t < T, the same bits as Network.Forward on each occluded copy.
// The states before t are those of the unoccluded pass, computed once; the
// occluded variants run as batches from their own prefix.
func (b *engine) Occlusion(ctx context.Context, x Input, class int, out []float64, opt BatchOptions) error {
	n := b.net
	if err := x.check(n.d); err != nil {
		return err
	}
	if err := n.checkClass(class); err != nil {
		return err
	}
	if len(out) != x.Len() {
		return fmt.Errorf("cell: occlusion buffer has %d elements, want T = %d", len(out), x.Len())
	}
	b.kind, b.x, b.class, b.out = jobOcclusion, x, class, out
	b.items = x.Len()
	b.plan = b.planOcclusion(x.Len(), opt)
	return b.start(ctx, opt)
}

func workerCount(opt BatchOptions) int {
	if opt.Workers > 0 {
		return opt.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// igBytes is the scratch memory of one IG worker with batches of the given
// lanes, segments of seg time steps, an input of the given steps (dense or
// not) and the given items (α steps) in all.
func (b *engine) igBytes(lanes, seg, steps, items int, dense bool) int64 {
	h, d := int64(b.net.h), int64(b.net.d)
	l, s, t := int64(lanes), int64(seg), int64(steps)
	words := s*7*h*l + 2*h*l     // trace: gates 4H, zg, c, tanh c; h (two slots)
	words += (d + 1) * 4 * h * l // activation tables
	if nseg := (t + s - 1) / s; nseg > 1 {
		words += nseg * 2 * h * l
	}
	words += (4*h + 4*h + d + 2) * l // dz, dh, dc, dcPrev, zero; gx; scale, lin
	words += inputBlock*4*h + 4*h    // dense inputs: the input products of a block, a sum of dz
	if dense && cutsBlocks(lanes, items) {
		words += t * 4 * h // the sums of dz of a block cut by a batch
	}
	words += 2 * int64(chunkOf(lanes)/sumBlock) * t * d
	return 8 * words
}

// cutsBlocks reports whether IG batches of the given lanes cut blocks of 16
// items when there are items in all.
func cutsBlocks(lanes, items int) bool { return lanes%sumBlock != 0 && items > lanes }

// cacheBytes is the size of the L2 cache a checkpointed segment's trace
// should fit (2 MiB on this machine).
const cacheBytes = 2 << 20

// chunkOf is the IG chunk for batches of the given lanes: whole blocks of 16.
func chunkOf(lanes int) int { return (lanes + sumBlock - 1) / sumBlock * sumBlock }

func (b *engine) planIG(steps, n int, dense bool, opt BatchOptions) plan {
	budget := opt.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	w := workerCount(opt)
	top := maxLanes
	if opt.Lanes > 0 {
		top = min(top, opt.Lanes)
	}
	// Enough chunks for every worker, and not many more lanes than steps.
	top = min(top, max(sumBlock, chunkOf((n+w-1)/w)), roundUp8(n))
	if opt.Lanes == 0 {
		top = min(maxLanes, 1<<bits.Len(uint(top-1))) // a power of two: whole batches per chunk
	}
	fits := func(p plan) bool { return int64(p.workers)*b.igBytes(p.lanes, p.seg, steps, n, dense) <= budget }
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
	if one := roundUp8((n + w - 1) / w); opt.Lanes == 0 && one <= maxLanes && one > top/2 {
		if p := mk(one, steps); fits(p) {
			return p
		}
	}
	seg := int(math.Ceil(math.Sqrt(float64(steps))))
	segBytes := func(l int) int64 { return int64(seg) * 8 * int64(b.net.h) * int64(l) * 8 }
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

func (b *engine) planOcclusion(steps int, opt BatchOptions) plan {
	w := workerCount(opt)
	lanes := maxLanes
	if opt.Lanes > 0 {
		lanes = min(lanes, opt.Lanes)
	}
	// Enough chunks for every worker; two more per worker balance chunks of
	// decreasing length (a chunk at t runs T − t steps).
	lanes = max(1, min(lanes, steps/(3*w)))
	if opt.Lanes == 0 && lanes > 8 {
		lanes &^= 7 // whole vectors
	}
	// A forward-only batch needs two trace slots and the start state.
	h, d := int64(b.net.h), int64(b.net.d)
	per := 8 * (2*8*h + 2*h + 8*h + 2*d + 2 + (d+2)*4*h)
	budget := opt.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	for lanes > 1 && int64(w*lanes)*per > budget {
		lanes /= 2
	}
	chunks := (steps + lanes - 1) / lanes
	return plan{workers: min(w, chunks), lanes: lanes, chunk: lanes, seg: 2}
}

// start runs the planned job on the workers and waits for it.
func (b *engine) start(ctx context.Context, opt BatchOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p := b.plan
	b.ctx, b.progress = ctx, opt.Progress
	b.tabs = b.tablesOf(b.x)
	b.chunks = (b.items + p.chunk - 1) / p.chunk
	b.next.Store(0)
	b.committed, b.done, b.err = 0, 0, nil
	if cap(b.pending) < b.chunks {
		b.pending = make([]*partBuf, b.chunks)
	}
	b.pending = b.pending[:b.chunks]
	clear(b.pending)
	b.stop.Store(false)
	b.addWorkers(p.workers)
	for _, w := range b.workers[:p.workers] {
		w.reserve(b)
	}
	if b.kind == jobOcclusion {
		b.prefix()
	}
	b.classReady = false
	b.active.Store(int32(p.workers - 1))
	b.wg.Add(p.workers - 1)
	for _, k := range b.wake[:p.workers-1] {
		k.start()
	}
	if b.pairFirst {
		b.pairClass(b.workers[0])
	}
	b.work(b.workers[0])
	if !spinUntil(func() bool { return b.active.Load() == 0 }) {
		b.wg.Wait()
	}
	err := b.err
	b.ctx, b.progress, b.x, b.alphas, b.wts, b.acc, b.out = nil, nil, Input{}, nil, nil, nil, nil
	return err
}

// addWorkers makes n workers: the calling goroutine's and n−1 goroutines
// that wait to be woken for each job.
func (b *engine) addWorkers(n int) {
	for len(b.workers) < n {
		w := &laneWorker{}
		b.workers = append(b.workers, w)
		if len(b.workers) > 1 {
			k := &waker{ch: make(chan struct{}, 1)}
			b.wake = append(b.wake, k)
			go b.serve(w, k)
		}
	}
}

func (b *engine) serve(w *laneWorker, k *waker) {
	for k.wait() {
		b.work(w)
		b.active.Add(-1)
		b.wg.Done()
	}
}

// A waker starts a worker goroutine's jobs. Between jobs the goroutine spins
// for up to spinTime before it parks: on this machine (a virtual one) a
// parked goroutine took 110 µs to start after being woken, and the caller as
// long to resume after the last worker finished, 4% of an IG call of 3 ms on
// 2 threads (sp-counter, T = 256, 1000 steps). Jobs that follow each other,
// as in a loop over inputs, then start at once; the price is up to spinTime
// of a spinning core after the last one.
type waker struct {
	state atomic.Int32 // spinning, parked or ready
	ch    chan struct{}
}

const (
	spinning = iota
	parked
	ready
)

// spinTime is how long a goroutine spins for the next job or the end of
// the current one before it blocks.
const spinTime = 200 * time.Microsecond

// start gives the worker its next job; the one before must be over.
func (k *waker) start() {
	if k.state.Swap(ready) == parked {
		k.ch <- struct{}{}
	}
}

// wait returns when the worker has a job (true) or is shut down (false).
func (k *waker) wait() bool {
	if spinUntil(func() bool { return k.state.Load() == ready }) {
		k.state.Store(spinning)
		return true
	}
	if k.state.CompareAndSwap(spinning, parked) {
		if _, ok := <-k.ch; !ok {
			return false
		}
	}
	k.state.Store(spinning)
	return true
}

// spinUntil polls done for up to spinTime, yielding the processor between
// polls (so that with GOMAXPROCS=1 the other goroutines still run); it
// reports whether done became true in that time.
func spinUntil(done func() bool) bool {
	start := time.Now()
	for i := 0; !done(); i++ {
		if i%64 == 63 && time.Since(start) > spinTime {
			return false
		}
		runtime.Gosched()
	}
	return true
}

// Logits writes the logits ŷ(x) to logits (C values), the bits of Forward,
// without keeping a trace: memory O(H) whatever T.
func (b *engine) Logits(x Input, logits []float64) error {
	n := b.net
	if err := x.check(n.d); err != nil {
		return err
	}
	if len(logits) != n.c {
		return fmt.Errorf("cell: logits has %d elements, want C = %d", len(logits), n.c)
	}
	b.kind, b.x, b.plan = jobLogits, x, plan{workers: 1, lanes: 1, chunk: 1, seg: 2}
	b.addWorkers(1)
	w := b.workers[0]
	w.reserve(b)
	b.tabs = b.tablesOf(x)
	w.scale[0] = x.scale
	zero := w.zero[:n.h]
	clear(zero)
	hPrev, cPrev := zero, zero
	if x.dense == nil {
		b.fillTablesUniform(w, 1, x.scale)
		for t := range x.Len() {
			hPrev, cPrev = b.stepForward(w, 1, t, t&1, hPrev, cPrev)
		}
	} else {
		hPrev, cPrev = b.logitsDense(w, hPrev, cPrev)
	}
	clear(logits)
	kernel.AxpyRows(logits, n.wyT, n.c, hPrev)
	for k, v := range n.p.By {
		logits[k] += v
	}
	b.x = Input{}
	return nil
}

// logitsDense is Logits' forward pass over a dense input: z_t = b + s·u_t
// from the input products of inputProduct (a block of steps at a time), plus
// W_h·h_{t−1}, then the gate step: the operations of Network.forward, in its
// order, hence its bits. It returns the last h and c.
func (b *engine) logitsDense(w *laneWorker, hPrev, cPrev []float64) (hLast, cLast []float64) {
	n, x := b.net, b.x
	h, g := n.h, n.gates
	for t := range x.Len() {
		slot := t & 1
		z := w.gates[slot*g : (slot+1)*g]
		copy(z, b.inputProduct(w, t))
		scaleInput(z, x.scale, n.p.B)
		b.mulAdd(z, b.wh, 0, g, hPrev, 1)
		cNew, hNew := w.cs[slot*h:(slot+1)*h], w.hs[slot*h:(slot+1)*h]
		kernel.GateStep(z, w.zg[slot*h:(slot+1)*h], cPrev, cNew, w.tc[slot*h:(slot+1)*h], hNew)
		hPrev, cPrev = hNew, cNew
	}
	return hPrev, cPrev
}

// reserve grows w's buffers to the current plan.
func (w *laneWorker) reserve(b *engine) {
	n, p := b.net, b.plan
	h, d, l, s := n.h, n.d, p.lanes, p.seg
	steps := b.x.Len()
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
	if b.kind == jobIG {
		if nseg := (steps + s - 1) / s; nseg > 1 {
			grow(&w.ck, nseg*2*h*l)
		}
		for i := range w.parts {
			grow(&w.parts[i].v, p.chunk/sumBlock*steps*d)
			w.parts[i].busy = false
		}
		grow(&w.gx, d*l)
	} else if b.kind == jobOcclusion {
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
	if b.x.dense != nil {
		grow(&w.ux, inputBlock*4*h)
		grow(&w.dzSum, dzBlocks(l)*dzWindow*4*h)
		if b.kind == jobIG && cutsBlocks(l, b.items) {
			grow(&w.carry[0], steps*4*h)
			grow(&w.carry[1], steps*4*h)
		}
	}
	w.uxT0 = -1
	grow(&w.scale, l)
	grow(&w.lin, l)
	if len(w.bias) < 4*h*l {
		w.bias = make([]float64, 4*h*l)
		w.biasLanes = 0
	}
	if b.kind == jobOcclusion {
		grow(&b.pre, ((steps+l-1)/l)*2*h)
	}
}

// work takes chunks until none is left or the job failed.
func (b *engine) work(w *laneWorker) {
	for !b.stop.Load() {
		ci := int(b.next.Add(1) - 1)
		if ci >= b.chunks {
			return
		}
		if err := b.ctx.Err(); err != nil {
			b.fail(err)
			return
		}
		if b.kind == jobIG {
			b.igChunk(w, ci)
		} else {
			b.occlusionChunk(w, ci)
		}
	}
}

func (b *engine) fail(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.stop.Store(true)
	b.cond.Broadcast()
	b.mu.Unlock()
}

// cancelled checks the context inside a long chunk.
func (b *engine) cancelled() bool {
	if b.stop.Load() {
		return true
	}
	if err := b.ctx.Err(); err != nil {
		b.fail(err)
		return true
	}
	return false
}

// report counts finished items and calls Progress; b.mu must be held.
func (b *engine) report(items int) {
	b.done += items
	if b.progress != nil {
		b.progress(b.done, b.items)
	}
}

// igChunk computes the block partial sums of chunk ci, then adds them to
// the total in chunk order: the sum is that of GradientSum, bit for bit.
func (b *engine) igChunk(w *laneWorker, ci int) {
	n, p := b.net, b.plan
	steps, d := b.x.Len(), n.d
	k0 := ci * p.chunk
	k1 := min(k0+p.chunk, b.items)
	size := steps * d
	nblk := (k1 - k0 + sumBlock - 1) / sumBlock
	pb := b.freePart(w)
	if pb == nil {
		return
	}
	part := pb.v[:nblk*size]
	clear(part)
	for s0 := k0; s0 < k1; s0 += p.lanes {
		l := min(p.lanes, k1-s0)
		for i, a := range b.alphas[s0 : s0+l] {
			w.scale[i] = float64(b.x.scale * a)
		}
		// A short batch is padded with zero copies to a multiple of 8
		// lanes, whose gradients are computed and dropped: rows of whole
		// vectors are faster than a short batch.
		lp := max(l, min(roundUp8(l), p.lanes))
		clear(w.scale[l:lp])
		if b.y != nil && !b.pairFirst {
			// The padding lanes l and l+1 run x and its zero copy, with
			// the scales Logits gives them.
			w.scale[l] = b.x.scale
			w.scale[l+1] = b.x.Scaled(0).scale
		}
		if !b.gradientLanes(w, lp, l, s0, k0, part) {
			return
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop.Load() {
		return
	}
	// The chunk waits in pending until every earlier one is committed;
	// whoever completes the run of finished chunks adds them, in order.
	pb.items, pb.blocks = k1-k0, nblk
	b.pending[ci] = pb
	for b.committed < b.chunks && b.pending[b.committed] != nil {
		q := b.pending[b.committed]
		for blk := range q.blocks {
			kernel.Axpy(1, q.v[blk*size:(blk+1)*size], b.acc)
		}
		b.pending[b.committed], q.busy = nil, false
		b.committed++
		b.report(q.items)
	}
	b.cond.Broadcast()
}

// freePart returns one of w's partial-sum buffers that no pending chunk
// holds, waiting for a commit if both are held; nil if the job stopped.
// Two buffers let a worker start its next chunk while its last waits for
// an earlier chunk of the other worker, where one buffer made it idle
// (measured, IG sp-counter T = 256, 1000 steps, 2 threads: the cores were
// busy 184% of the time, now 193%).
func (b *engine) freePart(w *laneWorker) *partBuf {
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.stop.Load() {
		for i := range w.parts {
			if pb := &w.parts[i]; !pb.busy {
				pb.busy = true
				return pb
			}
		}
		b.cond.Wait()
	}
	return nil
}

// partBuf holds a chunk's block partial sums (blocks×T×D) from its
// computation to its commit.
type partBuf struct {
	v             []float64
	items, blocks int
	busy          bool
}

// gradientLanes runs forward and backward passes for the l lanes of steps
// s0, s0+1, … (their scales set in w.scale) and adds weights[k]·∇ of lane k
// to the partial sum of its block (chunk starting at k0), for the first
// used lanes (the others are padding). With fewer
// segments than steps it keeps only the states at segment starts and
// recomputes each segment before its backward pass.
func (b *engine) gradientLanes(w *laneWorker, l, used, s0, k0 int, part []float64) bool {
	n := b.net
	h, d, g := n.h, n.d, n.gates
	steps, seg := b.x.Len(), b.plan.seg
	hl := h * l
	nseg := (steps + seg - 1) / seg
	b.fillTables(w, l)
	// Backprop reads c_{t−1} only for the forget gates' gradients; without
	// those, c takes two slots instead of a trace, which then fits the L2
	// cache (sp-counter: 5 KB a step instead of 8.7 at 64 lanes).
	w.keepC = b.tabs.runs == nil || b.tabs.needF || l == 1
	zero := w.zero[:hl]
	clear(zero)

	// Forward over all steps, keeping the segment starts.
	hPrev, cPrev := zero, zero
	for t := range steps {
		slot := t % seg
		if slot == 0 && t > 0 {
			k := t / seg
			copy(w.ck[(2*k)*hl:(2*k+1)*hl], hPrev)
			copy(w.ck[(2*k+1)*hl:(2*k+2)*hl], cPrev)
			if b.cancelled() {
				return false
			}
		}
		hPrev, cPrev = b.stepForward(w, l, t, slot, hPrev, cPrev)
	}
	if b.pairFirst {
		if !b.awaitClass() {
			return false
		}
	} else if b.y != nil {
		// x and its zero copy (lanes used and used+1): their logits as
		// Logits computes them from the last h, then the class.
		b.laneLogits(b.y, w.dh[:h], hPrev, used, l)
		b.laneLogits(b.y0, w.dh[:h], hPrev, used+1, l)
		c, err := b.resolve(b.y)
		if err != nil {
			b.fail(err)
			return false
		}
		if err := n.checkClass(c); err != nil {
			b.fail(err)
			return false
		}
		b.class = c
	}

	// Backward, segment by segment from the last. Dense inputs sum the
	// weighted dz of each block instead of the gradients (see
	// Network.GradientSum).
	dense := !b.x.IsOneHot()
	dh, dc, dcPrev, dz, gx := w.dh[:hl], w.dc[:hl], w.dcPrev[:hl], w.dz[:g*l], w.gx[:d*l]
	wc := n.p.Wy[b.class*h : (b.class+1)*h]
	for j, v := range wc {
		fill(dh[j*l:(j+1)*l], v)
	}
	clear(dc)
	size := steps * d
	for k := nseg - 1; k >= 0; k-- {
		ts, te := k*seg, min((k+1)*seg, steps)
		h0, c0 := zero, zero
		if k > 0 {
			h0, c0 = w.ck[(2*k)*hl:(2*k+1)*hl], w.ck[(2*k+1)*hl:(2*k+2)*hl]
		}
		if k < nseg-1 {
			if b.cancelled() {
				return false
			}
			hp, cp := h0, c0
			for t := ts; t < te; t++ {
				hp, cp = b.stepForward(w, l, t, t-ts, hp, cp)
			}
		}
		for t := te - 1; t >= ts; t-- {
			slot := t - ts
			cPrev := c0 // (not read without w.keepC)
			if slot > 0 && w.keepC {
				cPrev = w.cs[(slot-1)*hl : slot*hl]
			}
			gates, tc := w.gates[slot*g*l:(slot+1)*g*l], w.tc[slot*hl:(slot+1)*hl]
			if b.tabs.runs == nil {
				kernel.GateBackward(dz, dcPrev, dh, dc, gates, tc, cPrev)
			} else {
				act := b.tableAt(w, l, t)
				for _, run := range b.tabs.runs {
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
				b.dzSums(w, l, used, s0, k0, t, part)
			} else {
				clear(gx)
				b.mulAdd(gx, b.wxT, 0, d, dz, l)
				// Each lane's gradient joins its block's partial sum,
				// lanes (steps) in order: one chain of fused
				// multiply-adds per sum.
				for a := 0; a < used; {
					blk := (s0 + a - k0) / sumBlock
					e := min(used, (blk+1)*sumBlock+k0-s0)
					laneSums(part[blk*size+t*d:][:d], gx, l, a, e, b.wts[s0+a:s0+e])
					a = e
				}
			}
			if t > 0 {
				clear(dh)
				b.mulAdd(dh, b.whT, 0, h, dz, l)
			}
			dc, dcPrev = dcPrev, dc
		}
	}
	return true
}

// dzSums adds the weighted dz_t of the first used lanes (steps s0, s0+1, …)
// to their blocks' sums of dz in the chunk starting at k0, lanes in order,
// as Network.GradientSum does on dense inputs. A block that ends in this
// batch keeps its sums of the dzWindow steps from t/dzWindow·dzWindow in
// w.dzSum; once backprop reaches the first of them, one kernel.MulAddRows
// writes W_xᵀ·sum for all of them to the block's partial sum (AxpyRows' bits
// for each). A block cut by the end of the batch (batches of lanes that are
// not a multiple of 16) passes its sums of every step to the next batch in
// w.carry: batch i writes carry[i&1] and reads what batch i−1 wrote.
func (b *engine) dzSums(w *laneWorker, l, used, s0, k0, t int, part []float64) {
	n := b.net
	d, g := n.d, n.gates
	steps := b.x.Len()
	k1 := min(k0+b.plan.chunk, b.items)
	size := steps * d
	tw0 := t / dzWindow * dzWindow
	tw1 := min(tw0+dzWindow, steps)
	batch := (s0 - k0) / b.plan.lanes
	blk0 := (s0 - k0) / sumBlock
	for a := 0; a < used; {
		blk := (s0 + a - k0) / sumBlock
		first, end := k0+blk*sumBlock, min(k0+(blk+1)*sumBlock, k1)
		e := min(used, end-s0)
		win := w.dzSum[(blk-blk0)*dzWindow*g:][:(tw1-tw0)*g]
		sum := win[(t-tw0)*g : (t-tw0+1)*g]
		if s0+e < end {
			sum = w.carry[batch&1][t*g : (t+1)*g]
		}
		if first < s0 {
			copy(sum, w.carry[(batch+1)&1][t*g:(t+1)*g])
		} else {
			clear(sum)
		}
		laneSums(sum, w.dz, l, a, e, b.wts[s0+a:s0+e])
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

// stepForward runs time step t of the l lanes from (hPrev, cPrev) into trace
// slot slot and returns the new h and c. Lane b reads row t of the input
// scaled by w.scale[b] (0 occludes the row). The gates of the current
// tableSet take their activations from w's tables (fillTables); only the
// other rows' pre-activations are computed.
func (b *engine) stepForward(w *laneWorker, l, t, slot int, hPrev, cPrev []float64) (hNew, cNew []float64) {
	n := b.net
	h, g := n.h, n.gates
	hl := h * l
	z := w.gates[slot*g*l : (slot+1)*g*l]
	b.ensureBias(w, l)
	x := b.x
	scale := w.scale[:l]
	// The input product of lane k is scale[k]·u with u = W_x·x_t, row r
	// adding u_r·scale to the bias: on one-hot inputs u is column s of W_x
	// (a scaled column gather), on dense inputs the product of the unscaled
	// row, shared by all lanes (see Network.inputProducts).
	var u []float64
	if x.dense != nil {
		u = b.inputProduct(w, t)
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
		b.mulAdd(z, b.wh, r0, r1, hPrev, l)
	}
	if w.keepC {
		cNew = w.cs[slot*hl : (slot+1)*hl]
	} else {
		cNew = w.cpp[(t&1)*cppOffset(hl):][:hl]
	}
	hNew = w.hs[(t&1)*hl : (t&1+1)*hl]
	tc := w.tc[slot*hl : (slot+1)*hl]
	if b.tabs.runs == nil {
		rows(0, g)
		kernel.GateStep(z, w.zg[slot*hl:(slot+1)*hl], cPrev, cNew, tc, hNew)
		return hNew, cNew
	}
	for _, rr := range b.tabs.rows {
		rows(rr[0], rr[1])
	}
	act := b.tableAt(w, l, t)
	for _, run := range b.tabs.runs {
		o, e := run.j0*l, run.j1*l
		kernel.GateStepTable(z[o:], hl, act[o:], run.mask, cPrev[o:e], cNew[o:e], tc[o:e], hNew[o:e])
	}
	return hNew, cNew
}

// inputProduct returns u = W_x·x_t of the dense input, from w's block of
// inputBlock steps, which it computes first if it does not hold step t: the
// bits of Network.inputProducts, once per block for every lane.
func (b *engine) inputProduct(w *laneWorker, t int) []float64 {
	n := b.net
	g, d := n.gates, n.d
	t0 := t / inputBlock * inputBlock
	if w.uxT0 != t0 {
		t1 := min(t0+inputBlock, b.x.Len())
		u := w.ux[:(t1-t0)*g]
		n.inputRows(u, b.x.dense[t0*d:t1*d])
		w.uxT0 = t0
	}
	return w.ux[(t-t0)*g : (t-t0+1)*g]
}

// ensureBias fills w.bias with the bias repeated over l lanes.
func (b *engine) ensureBias(w *laneWorker, l int) {
	if w.biasLanes == l {
		return
	}
	w.biasLanes = l
	for r, v := range b.net.p.B {
		fill(w.bias[r*l:(r+1)*l], v)
	}
}

// A tableSet lists the gates whose activations a batch takes from tables
// instead of computing them at every step. A gate row without recurrent
// weights has, on a one-hot input, the pre-activation z = b + s·W_x[r, k]
// when symbol k is read with scale s (z = b for no symbol); with the scale
// fixed per lane, that is one value per symbol and lane, whatever the time
// step. Its activation is computed once per symbol, from the very z the step
// would compute (the same fused multiply-add; the recurrent product skips
// the zero terms), so the bits do not change. On dense inputs only rows
// without any weight qualify (z = b). The white-box networks are made of
// such gates: in sp-counter 25 of the 28 rows (all but the input gates of
// the units that read other units), in the counting network all four.
//
// Measured, 1 thread, AVX-512 (this replaced a shortcut for rows without
// any weight): IG sp-counter T = 256, 1000 steps 15.1 → 10.3 ms; occlusion
// sp-counter T = 4096 286 → 160 ms. Backprop then skips the gradients of the
// gates without weights (tableRun.need): IG 7.9 → 6.6 ms.
type tableSet struct {
	runs  []tableRun // runs of units with the same table gates, covering every unit; nil: no table
	rows  [][2]int   // runs [r0, r1) of the rows (gate-major, 4H) still computed
	needF bool       // some run needs the forget gates' gradients
}

// tableRun is a run of units [j0, j1) whose gates in mask (kernel.TableI,
// TableF, TableG, TableO) come from the tables and whose pre-activation
// gradients backprop computes for the gates in need only: the others have
// no weights at all, so nothing reads their gradients.
type tableRun struct{ j0, j1, mask, need int }

// tablesOf returns the tableSet for input x.
func (b *engine) tablesOf(x Input) *tableSet {
	if x.IsOneHot() {
		return &b.tables[0]
	}
	return &b.tables[1]
}

// tablesFor finds the tabled gates of n for one-hot (oneHot) or dense
// inputs, and the gates without weights. With the register-blocked product
// (tiled), which multiplies zero weights instead of skipping them, every
// gradient is computed.
func tablesFor(n *Network, oneHot, tiled bool) tableSet {
	h, d := n.h, n.d
	zero := func(v []float64) bool {
		for _, x := range v {
			if x != 0 {
				return false
			}
		}
		return true
	}
	tabled := func(r int) bool {
		return zero(n.wh[r*h:(r+1)*h]) && (oneHot || zero(n.wx[r*d:(r+1)*d]))
	}
	var ts tableSet
	some := false
	for j := range h {
		m, need := 0, 15
		for q := range 4 {
			r := q*h + j
			if tabled(r) {
				m |= 1 << q
			}
			if !tiled && zero(n.wh[r*h:(r+1)*h]) && zero(n.wx[r*d:(r+1)*d]) {
				need &^= 1 << q
			}
		}
		some = some || m != 0
		if k := len(ts.runs); k > 0 && ts.runs[k-1].mask == m && ts.runs[k-1].need == need {
			ts.runs[k-1].j1 = j + 1
		} else {
			ts.runs = append(ts.runs, tableRun{j, j + 1, m, need})
		}
	}
	if !some {
		return tableSet{}
	}
	for _, run := range ts.runs {
		ts.needF = ts.needF || run.need&kernel.TableF != 0
	}
	for r := range 4 * h {
		if tabled(r) {
			continue
		}
		if k := len(ts.rows); k > 0 && ts.rows[k-1][1] == r {
			ts.rows[k-1][1] = r + 1
		} else {
			ts.rows = append(ts.rows, [2]int{r, r + 1})
		}
	}
	return ts
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

// tabKey names the tables of a worker whose lanes all have one scale: the
// tableSet, the lanes and the scale's bits (zero: none, or per-lane scales).
type tabKey struct {
	set   *tableSet
	lanes int
	scale uint64
}

// fillTablesUniform sets the l lanes' scales to scale and fills the tables
// for them, unless w holds those already: occlusion's chunks and the single
// passes all read x at its own scale, so their tables are computed once per
// worker (measured: occlusion sp-fsa T = 16, whose eight chunks each
// computed them, 337 → 290 µs).
func (b *engine) fillTablesUniform(w *laneWorker, l int, scale float64) {
	fill(w.scale[:l], scale)
	key := tabKey{b.tabs, l, math.Float64bits(scale)}
	if w.tabKey == key {
		return
	}
	b.fillTables(w, l)
	w.tabKey = key
}

// fillTables computes w's tables for the scales in w.scale[:l]: block k (k <
// D) holds the activations of every tabled gate when symbol k is read, block
// D those when no symbol is (one-hot inputs); dense inputs have the one
// block of z = b. The other rows of the blocks are not used.
func (b *engine) fillTables(w *laneWorker, l int) {
	ts := b.tabs
	w.tabKey = tabKey{}
	if ts.runs == nil {
		return
	}
	n := b.net
	h, d, g := n.h, n.d, n.gates
	hl := h * l
	b.ensureBias(w, l)
	scale := w.scale[:l]
	blocks := 1
	if b.x.IsOneHot() {
		blocks = d + 1
	}
	zero := w.zero[:hl]
	clear(zero)
	for k := range blocks {
		tab := w.tab[k*g*l : (k+1)*g*l]
		for _, run := range ts.runs {
			if run.mask == 0 {
				continue
			}
			for q := range 4 {
				if run.mask&(1<<q) == 0 {
					continue
				}
				for r := q*h + run.j0; r < q*h+run.j1; r++ {
					row := tab[r*l : (r+1)*l]
					copy(row, w.bias[r*l:(r+1)*l])
					if blocks > 1 && k < d {
						if v := n.wx[r*d+k]; v != 0 {
							kernel.Axpy(v, scale, row)
						}
					}
				}
			}
			// The activations in place, computing exactly the tabled
			// gates (the others are read, unused, from tab itself).
			o, e := run.j0*l, run.j1*l
			kernel.GateStepTable(tab[o:], hl, tab[o:], ^run.mask&15, zero[o:e], w.dc[o:e], w.dcPrev[o:e], w.dh[o:e])
		}
	}
}

// tableAt returns the table block of step t: that of its symbol, or with
// w.occ ≥ 0 that block with lane w.occ's values replaced by those of no
// symbol (an occluded row).
func (b *engine) tableAt(w *laneWorker, l, t int) []float64 {
	n := b.net
	g := n.gates
	x := b.x
	if x.dense != nil {
		return w.tab[:g*l]
	}
	s := x.symbols[t]
	if s < 0 {
		s = n.d
	}
	tab := w.tab[s*g*l : (s+1)*g*l]
	if w.occ < 0 || s == n.d {
		return tab
	}
	none := w.tab[n.d*g*l : (n.d+1)*g*l]
	p := w.patch[:g*l]
	copy(p, tab)
	for _, run := range b.tabs.runs {
		for q := range 4 {
			if run.mask&(1<<q) == 0 {
				continue
			}
			for r := q*n.h + run.j0; r < q*n.h+run.j1; r++ {
				p[r*l+w.occ] = none[r*l+w.occ]
			}
		}
	}
	return p
}

// prefix runs the unoccluded input once, one lane, and keeps h and c at the
// start of every occlusion chunk.
func (b *engine) prefix() {
	n, w := b.net, b.workers[0]
	h, l := n.h, b.plan.lanes
	zero := w.zero[:h]
	clear(zero)
	b.fillTablesUniform(w, 1, b.x.scale)
	hPrev, cPrev := zero, zero
	for t := range b.x.Len() {
		if t%l == 0 {
			ci := t / l
			copy(b.pre[2*ci*h:(2*ci+1)*h], hPrev)
			copy(b.pre[(2*ci+1)*h:(2*ci+2)*h], cPrev)
		}
		hPrev, cPrev = b.stepForward(w, 1, t, t&1, hPrev, cPrev)
	}
}

// occlusionChunk runs the variants that occlude positions ci·lanes, … as one
// batch from the unoccluded state at the first of them: lane b follows the
// unoccluded input (the same bits as its prefix) until its own position.
func (b *engine) occlusionChunk(w *laneWorker, ci int) {
	n := b.net
	h := n.h
	p0 := ci * b.plan.lanes
	used := min(b.plan.lanes, b.items-p0)
	// Padding lanes (to a multiple of 8) occlude nothing; their results
	// are dropped.
	l := max(used, min(roundUp8(used), b.plan.lanes))
	hl := h * l
	preH, preC := b.pre[2*ci*h:(2*ci+1)*h], b.pre[(2*ci+1)*h:(2*ci+2)*h]
	h0, c0 := w.h0[:hl], w.c0[:hl]
	for j := range h {
		fill(h0[j*l:(j+1)*l], preH[j])
		fill(c0[j*l:(j+1)*l], preC[j])
	}
	b.fillTablesUniform(w, l, b.x.scale)
	hPrev, cPrev := h0, c0
	for t := p0; t < b.items; t++ {
		if (t-p0)%64 == 63 && b.cancelled() {
			return
		}
		occ := t - p0
		if occ < used {
			w.scale[occ], w.occ = 0, occ
		}
		hPrev, cPrev = b.stepForward(w, l, t, t&1, hPrev, cPrev)
		if occ < used {
			w.scale[occ], w.occ = b.x.scale, -1
		}
	}
	lin := w.lin[:l]
	clear(lin)
	kernel.AxpyRows(lin, hPrev, l, n.p.Wy[b.class*h:(b.class+1)*h])
	by := n.p.By[b.class]
	for lane, v := range lin[:used] {
		b.out[p0+lane] = v + by
	}
	b.mu.Lock()
	b.report(used)
	b.mu.Unlock()
}

func roundUp8(n int) int { return (n + 7) &^ 7 }

func fill(v []float64, x float64) {
	for i := range v {
		v[i] = x
	}
}

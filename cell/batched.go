package cell

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// Integrated Gradients on a model.
//
// Determinism. Step k's gradient is W_ihᵀ·dz_k of layer 0 (both
// directions), linear in dz_k, so each block of 16 consecutive steps sums
// its weighted dz_k, in order of k, and multiplies the sum by W_ihᵀ once
// (per direction, forward first); the blocks' products are added to the
// total in block order. Blocks are fixed by the step count alone; a chunk
// is a run of whole blocks that one worker computes in batches of any
// number of lanes (a batch may end inside a block: the block's sum simply
// goes on in the next batch). The workers, the lanes and the budget change
// the schedule, never an operation: the same bits for every setting, and
// those of the model's one-lane pass for each step.

// IntegratedGradients writes Σ_k weights[k]·∇ŷ_c(alphas[k]·x) to grad
// (T×E), the logits of x to y and those of the zero input to y0, where c
// is choose(y) (the relevance class, chosen once the logits of x are known;
// an error from choose ends the call with that error).
func (r *Runner) IntegratedGradients(ctx context.Context, x Input, choose func(y []float64) (int, error), alphas, weights, grad, y, y0 []float64, opt RunOptions) error {
	if err := r.acquire(); err != nil {
		return err
	}
	defer r.release()
	if err := r.checkOut(&x, 0, grad); err != nil {
		return err
	}
	return r.integratedGradients(ctx, x, choose, alphas, weights, grad, nil, y, y0, opt)
}

// integratedGradients is IntegratedGradients (grads nil: the class choose
// returns, its sum to grad) and IntegratedGradientsAll (grads: every
// class, choose nil), their outputs checked. Every class shares each
// batch's forward pass on whole-trace plans; on checkpointed plans (an
// input whose trace does not fit the budget) the classes run one after
// another, each as IntegratedGradients would.
func (r *Runner) integratedGradients(ctx context.Context, x Input, choose func(y []float64) (int, error), alphas, weights, grad []float64, grads [][]float64, y, y0 []float64, opt RunOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	s := r.s
	if len(alphas) != len(weights) || len(alphas) == 0 {
		return fmt.Errorf("cell: %d alphas and %d weights: want the same positive number", len(alphas), len(weights))
	}
	if len(y) != s.c || len(y0) != s.c {
		return fmt.Errorf("cell: logits buffers have %d and %d elements, want C = %d", len(y), len(y0), s.c)
	}
	budget, maxWorkers, maxLanes, err := optionsOf(opt)
	if err != nil {
		return err
	}
	rows := r.rowsBytes()
	if rows >= budget {
		return &BudgetError{Budget: budget, Need: rows, What: "this one-hot input's dense rows alone"}
	}
	budget -= rows
	if err := canceled(ctx); err != nil {
		return err
	}
	steps, n := x.Len(), len(alphas)
	maxWorkers = s.callWorkers(maxWorkers, n+2, steps) // with ŷ(x) and ŷ(0)
	blocks := (n + igBlock - 1) / igBlock
	g := (&gradSink{perLane: r.perLane}).width(s) // a sum's values per step
	classes := max(1, len(grads))                 // the sums of each class, side by side
	sizes := func(p runPlan, per int) (sums, parts int) {
		if p.split { // one slot of sums per worker
			return p.workers * per * p.seg * g, per * steps * s.in
		}
		if !p.longSums {
			return per * p.seg * g, per * steps * s.in
		}
		return classes * per * s.dirs * steps * g, classes * per * steps * s.in
	}
	chunkBlocks := func(p runPlan) int {
		if p.split {
			return blocks // one chunk
		}
		return igChunkBlocks(n, p.lanes, p.workers)
	}
	// extraPer is extra for chunks of per blocks, the largest of which
	// sums of dz cover (tailPlan's: one more).
	extraPer := func(p runPlan, per, sumBlocks int) int64 {
		sums, parts := sizes(p, sumBlocks)
		return 8*int64(sums+parts) + int64(batchesPer(p, per, n)-1)*s.siblingBytes(p.lanes, p.seg, p.nseg, p.keep)
	}
	extra := func(p runPlan) int64 { return extraPer(p, chunkBlocks(p), chunkBlocks(p)) }
	p, err := r.igPlan(steps, n, budget, maxWorkers, maxLanes, extra)
	if err != nil {
		return r.withRows(err)
	}
	if opt.Spare > 0 { // the input fits Budget: the spare memory may speed it up
		if q, err := r.igPlan(steps, n, budget+opt.Spare, maxWorkers, maxLanes, extra); err == nil {
			p, budget = q, budget+opt.Spare
		}
	}
	if classes > 1 && p.ck {
		return r.integratedGradientsEach(ctx, x, alphas, weights, grads, y, y0, opt)
	}
	per := chunkBlocks(p)
	chunks := (blocks + per - 1) / per
	if !p.split {
		p.workers = min(p.workers, chunks)
	}
	// A short last block rides with the chunk before it where the budget
	// holds its lanes (tailPlan): one batch fewer.
	// costOf is the memory of plan q whose largest chunk has sumBlocks
	// blocks of sums.
	costOf := func(q runPlan, sumBlocks int) int64 {
		return s.sharedBytes(q, steps) + int64(q.workers)*(s.laneCost(q, steps)+extraPer(q, per, sumBlocks))
	}
	sumBlocks := per // the blocks of the largest chunk
	if q, ok := tailPlan(p, n, per, chunks, maxLanes, func(q runPlan) bool { return costOf(q, per+1) <= budget }); ok {
		p, sumBlocks = q, per+1
		chunks--
	}
	if planSeen != nil {
		planSeen(p)
	}
	// A batch may carry more lanes than IG steps, where they fit the
	// budget and Lanes:
	//   - ŷ(x) and ŷ(0), as two more lanes of a job's one batch (fused,
	//     fusedClass), instead of a two-lane pass before it: a product
	//     costs about the same for 52 lanes as for 50 (measured, IG sp-fsa
	//     T = 256, BenchmarkEngines: the two-lane pass took 11 % of the
	//     call);
	//   - on sparse models, lanes that fill the last vector of 8 (pad):
	//     their products are an axpy per
	//     nonzero weight into one row of lanes after another, and a row
	//     ending in a partial vector ends in a masked store that the next
	//     axpy's load of the row waits for (measured: 100 Axpys into one
	//     row of 50 values 1.03 µs, of 56 values 0.68 µs).
	//   - ŷ(x) and ŷ(0) as two more lanes of the last chunk (fusedLast)
	//     where every chunk has its own worker and the last, the shortest,
	//     has room for them: the other chunks run their forward passes
	//     meanwhile and wait for the class before backprop. Before, a
	//     serial two-lane pass came first, on the smallest nets about as
	//     long as a chunk's forward pass (measured, IG on counting,
	//     T = 4,096, 2 threads, medians of six: 1.66 → 1.45 ms).
	items, fused, fusedLast, pad := p.lanes, false, false, false // items: IG steps per batch
	if !p.split {
		lanes := p.lanes
		if chunks == 1 && n+2 <= maxLanes {
			lanes, fused = n+2, true
		} else if last := n - (chunks-1)*per*igBlock; chunks > 1 && chunks <= p.workers && !p.ck && last+2 <= p.lanes {
			fusedLast = true
		}
		if s.sparse() && roundUp8(lanes) <= maxLanes {
			lanes, pad = roundUp8(lanes), true
		}
		fp := p
		fp.lanes = lanes
		if cost := s.sharedBytes(fp, steps) + int64(fp.workers)*(s.laneCost(fp, steps)+extra(p)); cost <= budget && s.laneCost(fp, steps) <= fullTraceMax {
			p = fp
		} else {
			fused, fusedLast, pad = false, false, false
		}
	}
	if p.ck && !p.split { // see widenSegments for the split plan's
		p = widenSegments(p, steps, func(q runPlan) bool {
			return costOf(q, sumBlocks) <= budget && s.workerLaneBytes(q.lanes, q.seg) <= fullTraceMax
		})
	}
	r.report(opt, "IG", p, false, steps, n, rows+costOf(p, sumBlocks), rows+budget)
	sums, parts := sizes(p, sumBlocks)
	pool := r.workers(p, steps, sums, parts, batchesPer(p, per, n)-1, budget-s.sharedBytes(p, steps))
	setSymbols(pool, r.syms)
	defer setSymbols(pool, nil)
	setRingIG(pool, !p.ck && s.stateRing(r.syms))
	defer setRingIG(pool, false)
	r.lend(pool, p.team) // first: the team shares the input's products
	defer r.lend(pool, 0)
	watch(ctx, pool)
	defer unwatch(pool)
	r.setInput(x, p, pool)

	job := &r.ig
	*job = igJob{r: r.runnerState, ctx: ctx, x: x, alphas: alphas, weights: weights, grad: grad, grads: grads,
		steps: steps, lanes: items, per: per, chunks: chunks, tail: p.tail, workers: len(pool), segSums: !p.longSums, perLane: r.perLane, pad: pad, prog: progress{fn: opt.Progress, total: n}}
	job.cond.L = &job.mu
	for c := range job.classes() {
		clear(job.sum(c))
	}
	if fused || fusedLast {
		job.fused, job.fusedLast, job.choose, job.y, job.y0 = fused, fusedLast, choose, y, y0
	} else if p.split { // ŷ(x), ŷ(0) and the class come within the job
		job.pool, job.choose, job.y, job.y0 = pool, choose, y, y0
		for _, wk := range pool {
			wk.swept = 0
		}
	} else if err := r.logitsAndClass(x, p, pool[0].r, choose, y, y0, job); err != nil {
		*job = igJob{}
		return err
	}
	r.start(job, pool)
	err = cutShort(job.err, pool)
	*job = igJob{}
	return err
}

// cutShort is a job's error err, or, where the job ended without one, the
// context's error if a pass of one of the workers was cut short (the
// products after the last look of the job at its context).
func cutShort(err error, pool []*worker) error {
	if err != nil {
		return err
	}
	for _, wk := range pool {
		if err := wk.r.stop.err(); err != nil {
			return err
		}
	}
	return nil
}

// logitsAndClass writes ŷ(x) and ŷ(0) to y and y0, as a two-lane batch on
// first, and job's class: choose(y) (none with choose nil).
func (r *Runner) logitsAndClass(x Input, p runPlan, first *lanes, choose func(y []float64) (int, error), y, y0 []float64, job *igJob) error {
	s, steps := r.s, x.Len()
	lanesXY := min(2, p.lanes)
	for j, a := range []float64{1, 0}[:lanesXY] {
		first.scale[j], first.occluded[j] = float64(x.scale*a), -1
	}
	first.forward(r.u, steps, lanesXY)
	if err := first.stop.err(); err != nil {
		return err // the logits are not x's: choose is not called
	}
	for k := range s.c {
		y[k] = first.logitsBuf[k*lanesXY]
	}
	if lanesXY == 2 {
		for k := range s.c {
			y0[k] = first.logitsBuf[k*2+1]
		}
	} else {
		first.scale[0] = 0
		first.forward(r.u, steps, 1)
		copy(y0, first.logitsBuf[:s.c])
	}
	if choose == nil {
		return nil
	}
	class, err := choose(y)
	if err != nil {
		return err
	}
	job.class = class
	return checkClass(class, s.c)
}

// fusedClass takes ŷ(x) and ŷ(0) from lanes l and l+1 of lr's batch of
// lanes, their logits as logitsAndClass's two-lane pass computes them (a
// lane's operations do not depend on the others), and sets the class:
// choose(y) (none with choose nil).
func (j *igJob) fusedClass(lr *lanes, l, lanes int) error {
	c := j.r.s.c
	for k := range c {
		j.y[k] = lr.logitsBuf[k*lanes+l]
		j.y0[k] = lr.logitsBuf[k*lanes+l+1]
	}
	if j.choose == nil {
		return nil
	}
	class, err := j.choose(j.y)
	if err != nil {
		return err
	}
	j.class = class
	return checkClass(class, c)
}

// errJobFailed ends a worker's part of a job that failed elsewhere (fail
// keeps the first error, so the job reports that one).
var errJobFailed = errors.New("cell: the job failed")

// igBlock is the number of IG steps whose weighted dz one sum collects.
const igBlock = 16

// igChunkBlocks returns the blocks per chunk for n steps, batches of at
// most l lanes and w workers: an equal share of the blocks for each
// worker, fewer while a chunk would not fit one batch (the last chunk may
// be short: 50 steps on one worker are one chunk of 50 lanes, not 48 and
// 2). With fewer than 16 lanes a chunk is one block in several batches.
func igChunkBlocks(n, l, w int) int {
	blocks := (n + igBlock - 1) / igBlock
	per := max(1, (blocks+w-1)/w)
	for per > 1 && min(per*igBlock, n) > l {
		per--
	}
	return per
}

// batchesPer returns the batches of an IG chunk under plan p, chunks of
// per blocks and n steps in all, that need their own checkpoints: on
// checkpointed lanes whose sums of dz cover one segment, a chunk's
// batches go through layer 0's segments together (chunkGroup), each but
// the first with its own checkpoints (newCkSibling).
func batchesPer(p runPlan, per, n int) int {
	if p.longSums || p.split {
		return 1
	}
	return (min(per*igBlock, n) + p.lanes - 1) / p.lanes
}

// setInput readies the workers' lanes for x under plan p: the input
// products the full-trace lanes share, or the input the checkpointed ones
// read per segment.
func (r *Runner) setInput(x Input, p runPlan, pool []*worker) {
	if !p.ck {
		r.prepare(x, pool[0].r.team, pool[0].r.stop)
		return
	}
	r.u = nil // the whole input's products: not within a checkpointed plan's budget
	for _, wk := range pool {
		wk.r.setInput(x.dense, x.Len(), p.seg)
		for _, b := range wk.sib {
			b.setInput(x.dense, x.Len(), p.seg)
		}
	}
}

// igJob is one IntegratedGradients call: the input, the outputs, and the
// hand-over of the blocks' products to the total in block order.
type igJob struct {
	r               *runnerState
	ctx             context.Context
	x               Input
	class           int
	alphas, weights []float64
	grad            []float64
	grads           [][]float64 // IntegratedGradientsAll: every class's sum (class and grad unused)
	steps, lanes    int
	per, chunks     int
	tail            int       // the lanes of a short last block that the last chunk carries besides its own (tailPlan)
	workers         int       // the workers running the job
	segSums         bool      // checkpointed lanes: dz summed per segment (gradSink.seg)
	perLane         bool      // one-hot input: the sums hold input gradients (gradSink.perLane)
	pool            []*worker // a split plan's workers, in order (nil: a chunk each)
	fused           bool      // one batch, with ŷ(x) and ŷ(0) as two more lanes (fusedClass)
	fusedLast       bool      // the last chunk's one batch has them; the others wait for the class
	pad             bool      // batches fill their last vector of 8 lanes with lanes of α = 0
	// A split plan's class: choose(y) once y and y0 are in (classReady).
	choose           func(y []float64) (int, error)
	y, y0            []float64
	haveY, haveY0    bool
	classReady       bool
	mu               sync.Mutex
	cond             sync.Cond
	nextChunk, added int // chunks handed out, chunks added to grad
	err              error
	prog             progress
}

// take returns the next chunk, or −1 when none is left or the job failed.
func (j *igJob) take() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil || j.nextChunk >= j.chunks {
		return -1
	}
	j.nextChunk++
	return j.nextChunk - 1
}

func (j *igJob) fail(err error) {
	j.mu.Lock()
	if j.err == nil {
		j.err = err
	}
	j.cond.Broadcast()
	j.mu.Unlock()
}

// run is wk's part of the job: the chunks it takes. Where every worker has
// a chunk, worker i runs chunk i: each call then runs the same lanes on
// the same worker's buffers. (A worker that ran a shorter chunk in one
// call than in the next first touched the rest of its lanes in the next:
// the second call of IG on sp-counter T = 4,096, 2 threads, took 37 ms,
// the others 4.5 ms.)
func (j *igJob) run(wk *worker) {
	if j.pool != nil {
		j.runSplit(wk)
		return
	}
	if j.chunks <= j.workers {
		if wk.idx < j.chunks {
			j.runChunk(wk, wk.idx)
		}
		return
	}
	for {
		c := j.take()
		if c < 0 || !j.runChunk(wk, c) {
			return
		}
	}
}

// runChunk computes chunk c on wk, waits for the earlier chunks and adds
// its blocks to the sums in order; false if the job failed.
func (j *igJob) runChunk(wk *worker, c int) bool {
	if err := j.chunk(wk, c); err != nil {
		j.fail(err)
		return false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.added != c && j.err == nil {
		j.cond.Wait()
	}
	if j.err != nil {
		return false
	}
	k0, k1 := j.chunkRange(c)
	nb := (k1 - k0 + igBlock - 1) / igBlock
	for k := range j.classes() { // class k's blocks follow class k−1's
		j.addBlocks(k, wk.part[k*nb*j.steps*j.r.s.in:], nb)
	}
	j.added++
	j.cond.Broadcast()
	return true
}

// chunkRange returns the IG steps [k0, k1) of chunk c: per blocks, the
// last chunk's with the tail's.
func (j *igJob) chunkRange(c int) (k0, k1 int) {
	k0 = c * j.per * igBlock
	k1 = min(len(j.alphas), k0+j.per*igBlock)
	if c == j.chunks-1 {
		k1 += j.tail
	}
	return k0, k1
}

// addBlocks adds the nb blocks' products in part to class k's sum, in
// block order.
func (j *igJob) addBlocks(k int, part []float64, nb int) {
	size := j.steps * j.r.s.in
	for b := range nb {
		kernel.Axpy(1, part[b*size:(b+1)*size], j.sum(k))
	}
}

// scaleLanes readies l lanes of lr for IG's steps b0, b0+1, …: x scaled
// by their α, no row occluded.
func (j *igJob) scaleLanes(lr *lanes, b0, l int) {
	for i := range l {
		lr.scale[i] = float64(j.x.scale * j.alphas[b0+i])
		lr.occluded[i] = -1
	}
}

// chunk computes the blocks' products of chunk c into wk.part.
func (j *igJob) chunk(wk *worker, c int) error {
	s := j.r.s
	steps, e := j.steps, s.in
	k0, k1 := j.chunkRange(c)
	nb := (k1 - k0 + igBlock - 1) / igBlock
	lr := wk.r
	sk := gradSink{perLane: j.perLane}
	g := sk.width(s)
	// Several classes (IntegratedGradientsAll) only on whole-trace lanes:
	// each batch's forward pass, then each class's backward pass into that
	// class's sums (block b of class k is block k·nb + b).
	classes, size := j.classes(), nb*s.dirs*steps*g
	part := wk.part[:classes*nb*steps*e]
	if j.segSums {
		sk.seg, sk.part = lr.ck.seg, part
		sk.dzSum = wk.dzSum[:nb*sk.seg*g]
		clear(part)
		if k1-k0 > j.lanes {
			clear(sk.dzSum)
			return j.chunkGroup(wk, k0, k1, nb, &sk)
		}
	} else {
		sk.dzSum = wk.dzSum[:classes*size]
	}
	sums := sk.dzSum
	clear(sums)
	for b0 := k0; b0 < k1; b0 += j.lanes {
		if err := canceled(j.ctx); err != nil {
			return err
		}
		b1 := min(k1, b0+j.lanes)
		l := b1 - b0
		j.scaleLanes(lr, b0, l)
		lanes := l
		fuse := j.fused || (j.fusedLast && c == j.chunks-1)
		if fuse {
			for i, a := range []float64{1, 0} {
				lr.scale[l+i], lr.occluded[l+i] = float64(j.x.scale*a), -1
			}
			lanes += 2
		}
		for ; j.pad && lanes < min(roundUp8(lanes), lr.l); lanes++ {
			lr.scale[lanes], lr.occluded[lanes] = 0, -1
		}
		sk.used = l // 0 where lanes == l: every lane
		lr.forward(j.r.u, steps, lanes)
		if fuse {
			if err := j.fusedClass(lr, l, lanes); err != nil {
				return err
			}
			if j.fusedLast {
				j.mu.Lock()
				j.classReady = true
				j.cond.Broadcast()
				j.mu.Unlock()
			}
		} else if j.fusedLast && !j.await(func() bool { return j.classReady }) {
			return errJobFailed
		}
		sk.wts = j.weights[b0:b1]
		sk.k0 = b0 - k0
		for k := range classes {
			if classes > 1 {
				sk.dzSum = sums[k*size : (k+1)*size]
			}
			lr.backward(steps, lanes, j.classOf(k), &sk)
		}
		if err := canceled(j.ctx); err != nil {
			return err // the pass may have been cut short (wk.stop)
		}
		j.prog.add(l)
	}
	if j.segSums {
		return nil // flushSums added the products segment by segment
	}
	// Each block's sums times W_ihᵀ, forward direction first.
	clear(part)
	for b := range classes * nb {
		pb := part[b*steps*e : (b+1)*steps*e]
		for d := range s.dirs {
			sk.addSums(lr.team, s, d, pb, sums[(b*s.dirs+d)*steps*g:(b*s.dirs+d+1)*steps*g], steps, lr.stop)
		}
	}
	return nil
}

// chunkGroup is chunk for the batches of a chunk of checkpointed lanes
// that does not fit one batch: each batch runs forward and backprop
// through the layers above the first, then layer 0's sweeps run the
// batches segment by segment, so that each segment's sums of dz hold
// every lane of their blocks before flushSums multiplies them.
func (j *igJob) chunkGroup(wk *worker, k0, k1, nb int, sk *gradSink) error {
	s := j.r.s
	grp := wk.sib[:(k1-k0+j.lanes-1)/j.lanes-1]
	batch := func(q int) (lr *lanes, b0, l int) {
		lr = wk.r
		if q > 0 {
			lr = grp[q-1]
		}
		b0 = k0 + q*j.lanes
		return lr, b0, min(k1, b0+j.lanes) - b0
	}
	m := len(grp) + 1
	for q := range m {
		if err := canceled(j.ctx); err != nil {
			return err
		}
		lr, b0, l := batch(q)
		j.scaleLanes(lr, b0, l)
		lr.forward(j.r.u, j.steps, l)
		lr.backwardUpper(l, j.class)
	}
	ck := wk.r.ck
	for d := range s.dirs {
		for q := range m {
			lr, _, l := batch(q)
			lr.startSweep(0, d, l)
		}
		for i := ck.nseg - 1; i >= 0; i-- {
			if err := canceled(j.ctx); err != nil {
				return err
			}
			sg := ck.segAt(s.cells[d].reverse, i)
			for q := range m {
				lr, b0, l := batch(q)
				lr.activate()
				sk.wts = j.weights[b0 : b0+l]
				sk.k0 = b0 - k0
				lr.sweepSegment(0, d, sg, l, sk)
			}
			if err := canceled(j.ctx); err != nil {
				return err // the pass may have been cut short (wk.stop)
			}
			wk.r.flushSums(sk, d, sg, nb)
		}
	}
	j.prog.add(k1 - k0)
	return nil
}

// Occlusion writes ŷ_class of x with row t set to zero to out[t], for every
// step t, the occluded copies running as lanes of batches.
func (r *Runner) Occlusion(ctx context.Context, x Input, class int, out []float64, opt RunOptions) error {
	if err := r.acquire(); err != nil {
		return err
	}
	defer r.release()
	if err := r.input(&x); err != nil {
		return err
	}
	if err := checkClass(class, r.s.c); err != nil {
		return err
	}
	if err := occlusionOut(out, x.Len()); err != nil {
		return err
	}
	return r.occlusion(ctx, x, class, out, nil, nil, opt)
}

// occlusionOut checks occlusion's output buffer: one value per step.
func occlusionOut(out []float64, steps int) error {
	if len(out) != steps {
		return fmt.Errorf("cell: output buffer has %d elements, want T = %d", len(out), steps)
	}
	return nil
}

// OcclusionChosen is Occlusion for the class c = choose(y), y the logits
// of x, which it writes to y (C values), and returns c. The unoccluded pass
// whose states the occluded copies start from gives the logits: one pass
// fewer than Logits, then Occlusion (a model that runs its copies whole
// computes them as Logits does). An error of choose ends the call and is
// returned as it is.
func (r *Runner) OcclusionChosen(ctx context.Context, x Input, choose func(y []float64) (int, error), y, out []float64, opt RunOptions) (class int, err error) {
	if err := r.acquire(); err != nil {
		return 0, err
	}
	defer r.release()
	if err := r.input(&x); err != nil {
		return 0, err
	}
	if len(y) != r.s.c {
		return 0, fmt.Errorf("cell: logits buffer has %d elements, want C = %d", len(y), r.s.c)
	}
	if err := occlusionOut(out, x.Len()); err != nil {
		return 0, err
	}
	ch := occChoice{choose: choose, y: y}
	err = r.occlusion(ctx, x, 0, out, nil, &ch, opt)
	return ch.class, err
}

// occChoice is OcclusionChosen's class choice: choose, the logits it reads
// and the class it gave.
type occChoice struct {
	choose func(y []float64) (int, error)
	y      []float64
	class  int
}

// occlusion is Occlusion (outs nil) and OcclusionAll (out nil), their
// outputs checked; with ch set, the class is ch's choice from the logits
// of x (OcclusionChosen).
func (r *Runner) occlusion(ctx context.Context, x Input, class int, out []float64, outs [][]float64, ch *occChoice, opt RunOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	s := r.s
	steps := x.Len()
	budget, maxWorkers, maxLanes, err := optionsOf(opt)
	if err != nil {
		return err
	}
	rows := r.rowsBytes()
	if rows >= budget {
		return &BudgetError{Budget: budget, Need: rows, What: "this one-hot input's dense rows alone"}
	}
	budget -= rows
	if err := canceled(ctx); err != nil {
		return err
	}
	// The copies run from their occluded step on, half the input on
	// average (prefix).
	maxWorkers = s.callWorkers(maxWorkers, steps, (steps+1)/2)
	// Ring lanes where the model allows them (ring.go), else
	// lanes with the whole trace, or checkpoints.
	var p runPlan
	ring := false
	if s.ringOK() {
		p, ring = s.ringPlan(steps, budget, maxWorkers, maxLanes)
	}
	laneSteps := 2 // the steps a lane's trace holds
	if !ring {
		laneSteps = steps
		if p, err = r.plan(steps, steps, budget, maxWorkers, maxLanes, func(runPlan) int64 { return 0 }); err != nil {
			return r.withRows(err)
		}
		if opt.Spare > 0 { // the input fits Budget: the spare memory may speed it up
			if q, err := r.plan(steps, steps, budget+opt.Spare, maxWorkers, maxLanes, func(runPlan) int64 { return 0 }); err == nil {
				p, budget = q, budget+opt.Spare
			}
		}
	}
	pool := r.workers(p, laneSteps, 0, 0, 0, budget-s.sharedBytes(p, steps))
	setSymbols(pool, r.syms)
	defer setSymbols(pool, nil)
	setRing(pool, ring)
	defer setRing(pool, false)
	// shown is the plan with its team, for opt.Plan.
	shown := p
	if teamsOn || (p.workers == 1 && r.teamable(min(p.lanes, steps))) { // one batch: its steps on a team
		r.lend(pool, maxWorkers)
		defer r.lend(pool, 0)
		shown.team = maxWorkers
	}
	watch(ctx, pool)
	defer unwatch(pool)
	stop := pool[0].r.stop             // the caller's: worker 0's
	r.setInput(x, p, pool)             // after lend: the team shares the input's products
	if err := stop.err(); err != nil { // (the products are cut short)
		return err
	}
	var prefix *lanes
	if !p.ck && s.hasPrefix() && steps > 1 && s.sharedBytes(p, steps)+int64(p.workers)*s.laneCost(p, laneSteps)+s.prefixBytes(steps) <= budget {
		r.runPrefix(x, steps, stop)
		if err := stop.err(); err != nil {
			return err
		}
		prefix = r.prefix
	} else {
		r.prefix = nil // not within the budget: the copies run whole
	}
	bytes := rows + s.sharedBytes(p, steps) + int64(p.workers)*s.laneCost(p, laneSteps)
	if prefix != nil {
		bytes += s.prefixBytes(steps)
	}
	r.report(opt, "occlusion", shown, ring, steps, steps, bytes, rows+budget)
	if ch != nil {
		if prefix != nil {
			copy(ch.y, prefix.logitsBuf[:s.c])
		} else {
			r.pass = stop
			r.logits(x, ch.y)
			r.pass = nil
			if err := stop.err(); err != nil {
				return err
			}
		}
		if class, err = ch.choose(ch.y); err != nil {
			return err
		}
		if err := checkClass(class, s.c); err != nil {
			return err
		}
		ch.class = class
	}
	job := &r.occ
	*job = occJob{r: r.runnerState, ctx: ctx, x: x, class: class, out: out, outs: outs, steps: steps, lanes: p.lanes, prefix: prefix, prog: progress{fn: opt.Progress, total: steps}}
	r.start(job, pool)
	err = cutShort(job.err, pool)
	*job = occJob{}
	return err
}

// occJob is one Occlusion call. Lanes are independent: no reduction.
type occJob struct {
	r      *runnerState
	ctx    context.Context
	x      Input
	class  int
	out    []float64
	outs   [][]float64 // OcclusionAll: out of every class, instead of out
	steps  int
	lanes  int
	prefix *lanes // the unoccluded pass the lanes start from (nil: none)
	mu     sync.Mutex
	next   int
	err    error
	prog   progress
}

func (j *occJob) take() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil || j.next >= j.steps {
		return -1
	}
	t := j.next
	j.next += j.lanes
	return t
}

func (j *occJob) run(wk *worker) {
	steps := j.steps
	for {
		t0 := j.take()
		if t0 < 0 {
			return
		}
		if err := canceled(j.ctx); err != nil {
			j.mu.Lock()
			if j.err == nil {
				j.err = err
			}
			j.mu.Unlock()
			return
		}
		t1 := min(steps, t0+j.lanes)
		l := t1 - t0
		lr := wk.r
		for q := range l {
			lr.scale[q], lr.occluded[q] = j.x.scale, t0+q
		}
		lr.prefix, lr.from = j.prefix, t0
		lr.forward(j.r.u, steps, l)
		lr.prefix = nil
		if j.outs == nil {
			for q := range l {
				j.out[t0+q] = lr.logitsBuf[j.class*l+q]
			}
		}
		for c, out := range j.outs { // OcclusionAll: every class from the same passes
			for q := range l {
				out[t0+q] = lr.logitsBuf[c*l+q]
			}
		}
		j.prog.add(l)
	}
}

// roundUp8 rounds n up to a multiple of 8 (a sparse batch's lanes fill
// whole AVX-512 vectors).
func roundUp8(n int) int { return (n + 7) &^ 7 }

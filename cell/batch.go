// The batched engine: many variants of one input (IG's α-scaled copies,
// occlusion's occluded copies) as the lanes of a batch, in chunks on worker
// goroutines, within a memory budget. One file per job:
//
//	batch.go            the public API: BatchOptions, Batcher and its methods
//	batch_engine.go     the design notes; what lives how long (engine, job);
//	                    a job's run loop: chunks, failure, cancellation, progress
//	batch_pool.go       the worker goroutines: hand-off, spinning, parking, shutdown
//	batch_plan.go       planning, pure functions: lanes, chunks, checkpoints, memory
//	batch_lanes.go      a worker's lane buffers, grown to the plan
//	batch_step.go       one batched time step forward; single-lane logits
//	batch_tables.go     the gates taken from tables instead of computed
//	batch_ig.go         Integrated Gradients: forward, backprop, ordered sums
//	batch_occlusion.go  Occlusion: the unoccluded prefix, the occluded batches
//
// Every result has the bits of the single-input path (forward.go,
// gradient.go) whatever the options; the tests in batch_test.go check it.

package cell

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
)

// DefaultBudget is the scratch memory a Batcher may use when BatchOptions
// gives none: 256 MiB.
const DefaultBudget int64 = 256 << 20

// BatchOptions tune a Batcher call. None of them changes a result: the
// lanes of a batch compute exactly the operations of the single path, and
// sums over steps are added in the fixed blocks of 16 of GradientSum, in
// order, whatever the chunking. The zero value is the default for every
// field; a negative Budget, Workers or Lanes is an error.
type BatchOptions struct {
	// Budget bounds the scratch memory of the call in bytes (0:
	// DefaultBudget). It decides the number of lanes per batch and whether
	// backprop keeps the whole trace or only every ⌈√T⌉-th state
	// (checkpointing: the segments in between are recomputed). A budget too
	// small for even one lane with checkpoints is an error that gives the
	// least budget the input needs.
	Budget int64
	// Workers is the number of goroutines (0: runtime.GOMAXPROCS(0)). A
	// StackedRunner's IG may run one batch with each time step shared
	// among them (stacked_team.go), spinning between steps: callers that
	// run several inputs at once give each its share of the cores. A
	// StackedRunner's call too small to gain from a second goroutine runs
	// on one (stacked_workers.go).
	Workers int
	// Lanes caps the lanes per batch (0: automatic, at most 64).
	Lanes int
	// Progress, if not nil, is called after each finished chunk with the
	// number of items done (IG steps or occluded positions) and the total.
	// Calls come from the worker goroutines, one at a time, with done
	// increasing (nil: no calls).
	Progress func(done, total int)
}

// check rejects negative options, naming the field.
func (o BatchOptions) check() error {
	switch {
	case o.Budget < 0:
		return fmt.Errorf("cell: BatchOptions.Budget is %d, want ≥ 0 (0: DefaultBudget)", o.Budget)
	case o.Workers < 0:
		return fmt.Errorf("cell: BatchOptions.Workers is %d, want ≥ 0 (0: GOMAXPROCS)", o.Workers)
	case o.Lanes < 0:
		return fmt.Errorf("cell: BatchOptions.Lanes is %d, want ≥ 0 (0: automatic)", o.Lanes)
	}
	return nil
}

// Errors of a Batcher used other than as documented.
var (
	// ErrBatcherClosed is returned by a Batcher's methods after Close.
	ErrBatcherClosed = errors.New("cell: Batcher used after Close")
	// ErrBatcherBusy is returned by a call to a Batcher that another call
	// is still using (from another goroutine, or from a Progress callback):
	// a Batcher runs one call at a time.
	ErrBatcherBusy = errors.New("cell: Batcher already in use by another call (a Batcher is not safe for concurrent use)")
	// ErrNoNetwork is returned by the methods of a Batcher made by
	// NewBatcher(nil) or declared as a zero Batcher.
	ErrNoNetwork = errors.New("cell: Batcher without a network (NewBatcher(nil) or a zero Batcher)")
)

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
// allocate nothing. It runs one call at a time: a call made while another
// is running (from another goroutine, or from a Progress callback) returns
// ErrBatcherBusy at once. The Network it serves may be shared. After each
// call its goroutines spin for up to 200 µs before they block,
// so that calls in a loop start at once; Close ends them, and so does the
// garbage collector once the Batcher is unreachable.
type Batcher struct {
	job    *job        // the network's engine, the worker pool, the current call; nil without a network
	inUse  atomic.Bool // a call is running
	closed bool        // written and read only with inUse held
}

// NewBatcher returns a Batcher for n. With n nil, every method of the
// Batcher returns ErrNoNetwork (and Close returns nil).
func NewBatcher(n *Network) *Batcher {
	if n == nil {
		return &Batcher{}
	}
	p := new(pool)
	b := &Batcher{job: newJob(newEngine(n), p)}
	// The goroutines hold the pool, not the Batcher: once the Batcher is
	// unreachable, shutdown ends them.
	runtime.AddCleanup(b, (*pool).shutdown, p)
	return b
}

// acquire marks b in use and returns its job, or the error that forbids the
// call. A successful acquire must be followed by release.
func (b *Batcher) acquire() (*job, error) {
	if b.job == nil {
		return nil, ErrNoNetwork
	}
	if !b.inUse.CompareAndSwap(false, true) {
		return nil, ErrBatcherBusy
	}
	if b.closed {
		b.inUse.Store(false)
		return nil, ErrBatcherClosed
	}
	return b.job, nil
}

// release ends a call: the job lets go of the caller's data, and b is free.
func (b *Batcher) release() {
	b.job.clear()
	b.inUse.Store(false)
}

// GradientSum is Network.GradientSum, batched and parallel: it writes
// Σ_k weights[k]·∇ŷ_class(alphas[k]·x) to acc (T×D), the same bits as
// Network.GradientSum for every option. It returns ctx's error if ctx is
// cancelled first (acc then holds a partial sum).
func (b *Batcher) GradientSum(ctx context.Context, x Input, class int, alphas, weights, acc []float64, opt BatchOptions) error {
	j, err := b.acquire()
	if err != nil {
		return err
	}
	defer b.release()
	if err := opt.check(); err != nil {
		return err
	}
	return j.gradientSum(ctx, x, class, alphas, weights, acc, opt)
}

// IntegratedGradients writes the logits ŷ(x) to y and ŷ(0·x) to y0 (the
// bits of Logits), calls class with y to choose the class c, then writes
// Σ_k weights[k]·∇ŷ_c(alphas[k]·x) to acc as GradientSum does. If class
// returns an error, so does IntegratedGradients, before any gradient. When
// the whole call is one batch with room to spare (the padding lanes that
// round it to whole vectors), x and its zero copy ride along as two of
// those lanes, which then compute exactly Logits' operations: the weights
// go by once per step for all of them instead of in two more passes.
// Otherwise, on one-hot inputs, the two run as a two-lane batch on the first
// worker while the others begin their forward passes.
func (b *Batcher) IntegratedGradients(ctx context.Context, x Input, class func(y []float64) (int, error), alphas, weights, acc, y, y0 []float64, opt BatchOptions) error {
	j, err := b.acquire()
	if err != nil {
		return err
	}
	defer b.release()
	if err := opt.check(); err != nil {
		return err
	}
	return j.integratedGradients(ctx, x, class, alphas, weights, acc, y, y0, opt)
}

// Occlusion writes to out[t] the logit ŷ_class of x with row t set to zero,
// for every t < T, the same bits as Network.Forward on each occluded copy.
// The states before t are those of the unoccluded pass, computed once; the
// occluded variants run as batches from their own prefix.
func (b *Batcher) Occlusion(ctx context.Context, x Input, class int, out []float64, opt BatchOptions) error {
	j, err := b.acquire()
	if err != nil {
		return err
	}
	defer b.release()
	if err := opt.check(); err != nil {
		return err
	}
	return j.occlusion(ctx, x, class, out, opt)
}

// Logits writes the logits ŷ(x) to logits (C values), the bits of Forward,
// without keeping a trace: memory O(H) whatever T.
func (b *Batcher) Logits(x Input, logits []float64) error {
	j, err := b.acquire()
	if err != nil {
		return err
	}
	defer b.release()
	return j.logits(x, logits)
}

// Close ends the Batcher's goroutines and waits for them. Closing a closed
// Batcher does nothing; any other method then returns ErrBatcherClosed.
// Close returns ErrBatcherBusy while a call is running.
func (b *Batcher) Close() error {
	if b.job == nil {
		return nil
	}
	if !b.inUse.CompareAndSwap(false, true) {
		return ErrBatcherBusy
	}
	defer b.inUse.Store(false)
	if !b.closed {
		b.closed = true
		b.job.pool.close()
	}
	return nil
}

package cell

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// A Runner runs a model on one input at a time: the forward
// pass, the gradient of a logit, LRP, DeepLIFT (deeplift.go), and
// the batched methods (the α-scaled
// copies of Integrated Gradients, the occluded copies of Occlusion) on
// several goroutines within a memory budget. It reuses its buffers and its
// goroutines: calls on inputs no longer than earlier ones allocate nothing.
// It is not safe for concurrent use (a second goroutine's call fails at
// once with an error); the model may be shared. Its goroutines end
// with Close, or when the runner is garbage collected.
//
// The batched methods keep the whole trace of their lanes when it fits the
// budget, else checkpoints (checkpoint.go: memory O(l·H·√T) per
// layer and direction, about one more forward pass per layer). IG's
// checkpointed lanes of one input, one chunk, are shared by the workers
// (ig_split.go); a dense model's whole-trace batch alone on several
// cores splits each time step among them (team.go).
// The single passes (Forward, Gradient, LRP) keep the whole one-lane trace
// (TraceBytes); Logits keeps none.
type Runner struct {
	*runnerState
}

// runnerState is a Runner's state; the worker goroutines hold it,
// not the Runner, so that an abandoned runner can be collected and
// its goroutines stopped.
type runnerState struct {
	s        *Model
	pass     *stopper // the single passes' (set by the methods with a context)
	passStop stopper  // what pass points to (none allocated per call)
	inUse    atomic.Bool
	closed   bool
	one      *lanes    // one lane with z_g kept: the single-input methods
	light    *lanes    // one checkpointed lane: Logits of long inputs
	prefix   *lanes    // one lane, the whole trace: occlusion's unoccluded pass (occlusion_prefix.go)
	u        []float64 // dirs×T×4H: layer 0's input products of the current input
	oh       []float64 // T×E: a one-hot input's rows, made dense (input)
	// perLane: the current input is one-hot; IG sums each lane's W_ihᵀ·dz
	// (E wide) instead of dz (gradSink.perLane).
	perLane bool
	syms    []int     // the one-hot input's symbols, for layer 0's tables (nil: dense)
	final   int       // the steps of the last Forward or ForwardFrom, whose states Final reads (0: none)
	xs      []float64 // T×E: a scaled input as the model reads it (LRP)
	dl      *deepLIFTState
	pool    []*worker
	team    *team // worker 0's helpers when a job has fewer workers than cores
	gsink   gradSink
	ig      igJob
	occ     occJob
	wg      sync.WaitGroup // the helpers running the current job
	panics  panicBox       // the first panic of the current job's goroutines
}

// task is a job the workers share: IG's chunks or occlusion's batches.
type task interface{ run(*worker) }

// worker is the state of one goroutine of the batched methods; worker 0
// is the caller's, the others are goroutines that wait on work.
type worker struct {
	idx   int       // its place in the pool
	work  chan task // nil for worker 0
	r     *lanes
	sib   []*lanes  // checkpointed IG: the other batches of a chunk (newCkSibling)
	stop  stopper   // ends its lanes' passes soon after the job's context is done
	dzSum []float64 // blocks × dirs × T×4H: IG's weighted sums of dz
	part  []float64 // blocks × T×E: their products with W_ihᵀ
	swept int       // a split IG plan: segments whose dz it has added (ig_split.go)
}

// NewRunner returns a runner for s.
func NewRunner(s *Model) (*Runner, error) {
	if s == nil {
		return nil, errors.New("cell: nil model")
	}
	r := &Runner{&runnerState{s: s}}
	runtime.AddCleanup(r, func(st *runnerState) { st.stop() }, r.runnerState)
	return r, nil
}

// Close stops the runner's goroutines. Calls after Close return an error.
func (r *Runner) Close() error {
	if err := r.acquire(); err != nil {
		return err
	}
	r.stop()
	r.closed = true
	r.release()
	return nil
}

// Release ends r's worker goroutines and drops the buffers it keeps from
// call to call (the batch lanes, up to the budget, and the traces of the
// longest input); r stays usable and allocates them again on its next
// call. It returns an error while a call is running.
func (r *Runner) Release() error {
	if err := r.acquire(); err != nil {
		return err
	}
	defer r.release()
	r.stop()
	for _, wk := range r.pool {
		wk.r, wk.sib, wk.dzSum, wk.part = nil, nil, nil, nil // an ending goroutine may still hold wk
	}
	r.pool, r.one, r.light, r.prefix, r.u, r.xs, r.oh, r.syms, r.dl, r.gsink = nil, nil, nil, nil, nil, nil, nil, nil, nil, gradSink{}
	return nil
}

// stop ends the worker goroutines.
func (st *runnerState) stop() {
	st.team.stop()
	st.team = nil
	for _, wk := range st.pool {
		if wk.work != nil {
			close(wk.work)
			wk.work = nil
		}
	}
}

// start runs t on the workers: helpers 1 … len(pool)−1 on their
// goroutines, worker 0 on the caller's, and waits for all of them.
func (st *runnerState) start(t task, pool []*worker) {
	for _, wk := range pool[1:] {
		if wk.work == nil {
			wk.work = make(chan task)
			go wk.loop(&st.wg, &st.panics)
		}
		st.wg.Add(1)
		wk.work <- t
	}
	func() {
		defer st.panics.catch(func() { abort(t) })
		t.run(pool[0])
	}()
	st.wg.Wait()
	st.panics.rethrow() // on the caller's goroutine (panics.go)
}

// watch makes the passes of the workers' lanes end soon after ctx is done
// (a batch of a long input runs for minutes; stop.go); the job then
// returns ctx's error. unwatch ends it.
func watch(ctx context.Context, pool []*worker) {
	for _, wk := range pool {
		stop := wk.stop.start(ctx)
		wk.r.stop = stop
		for _, b := range wk.sib {
			b.stop = stop
		}
	}
}

// unwatch ends watch: the workers' passes run unchecked again.
func unwatch(pool []*worker) {
	for _, wk := range pool {
		wk.stop.end()
		wk.r.stop = nil
		for _, b := range wk.sib {
			b.stop = nil
		}
	}
}

// loop runs the tasks sent to a helper until its channel is closed.
func (wk *worker) loop(wg *sync.WaitGroup, box *panicBox) {
	for t := range wk.work {
		wk.run(t, wg, box)
	}
}

// run runs t, a panic recovered into box (panics.go).
func (wk *worker) run(t task, wg *sync.WaitGroup, box *panicBox) {
	defer wg.Done()
	defer box.catch(func() { abort(t) })
	t.run(wk)
}

// logitsTraceMax is the largest one-lane trace Logits keeps: past it the
// checkpointed pass, which recomputes the layers below the top once per
// direction above them, costs less than touching the trace's pages.
const logitsTraceMax = 16 << 20

// Model returns the model r runs.
func (r *Runner) Model() *Model { return r.s }

var errBusy = errors.New("cell: Runner used by two goroutines at once; make one per goroutine")

func (r *Runner) acquire() error {
	if r == nil || r.runnerState == nil || r.s == nil {
		return errors.New("cell: nil Runner")
	}
	if !r.inUse.CompareAndSwap(false, true) {
		return errBusy
	}
	if r.closed {
		r.inUse.Store(false)
		return errors.New("cell: Runner used after Close")
	}
	return nil
}

func (r *Runner) release() { r.inUse.Store(false) }

// check validates x for the model: dense, T×E, finite (DeepLIFT and
// contextual decomposition, which read dense rows only).
func (r *Runner) check(x Input) error {
	if x.IsOneHot() && x.Len() > 0 {
		return errors.New("cell: this method reads dense input (embed the tokens first)")
	}
	return x.check(r.s.in)
}

// input validates *x for the model (T×E, finite) and, when it is one-hot,
// replaces it by its rows made dense in r.oh (1 at each symbol, the scale
// kept: the same bits as the one-hot rows) and sets r.perLane, so that IG
// sums each lane's input gradient (gradSink.perLane). The rows take 8·T·E bytes, refused past the one-lane
// trace of the input (TraceBytes), which the caller bounds; the batched
// methods count them in their budget (rowsBytes).
func (r *Runner) input(x *Input) error {
	r.perLane, r.syms = false, nil
	if err := x.check(r.s.in); err != nil {
		return err
	}
	if !x.IsOneHot() || x.Len() == 0 {
		return nil
	}
	steps, e := x.Len(), r.s.in
	if need, limit := 8*int64(steps)*int64(e), r.s.TraceBytes(steps); need > limit {
		return fmt.Errorf("cell: a one-hot input of %d steps over %d features takes %d bytes of dense rows, more than its trace (%d bytes); embed it first", steps, e, need, limit)
	}
	n := steps * e
	if cap(r.oh) < n {
		r.oh = make([]float64, n)
	}
	r.oh = r.oh[:n]
	clear(r.oh)
	for t, sym := range x.symbols {
		if sym >= 0 {
			r.oh[t*e+sym] = 1
		}
	}
	r.syms = x.symbols
	*x = Input{dense: r.oh, scale: x.scale, t: steps}
	r.perLane = true
	return nil
}

// prepare computes the input products of x's rows, unscaled, on team tm
// if not nil; it ends early once stop has (the products are then not x's).
func (r *Runner) prepare(x Input, tm *team, stop *stopper) {
	steps := x.Len()
	n := r.s.dirs * steps * 4 * r.s.h
	if cap(r.u) < n {
		r.u = bigFloats(n)
	}
	r.u = r.u[:n]
	if r.syms != nil && len(x.dense) == len(r.oh) && len(r.oh) > 0 && &x.dense[0] == &r.oh[0] {
		r.s.symbolProducts(r.u, r.syms)
		return
	}
	r.s.inputProducts(tm, r.u, x.dense, steps, stop)
}

// single runs x on the one-lane buffers, with the trace LRP needs, from
// the zero state.
func (r *Runner) single(x Input) { r.singleFrom(x, nil, nil) }

// singleFrom is single from the initial states h0 and c0 (nil: zero; see
// ForwardFrom).
func (r *Runner) singleFrom(x Input, h0, c0 []float64) {
	steps := x.Len()
	if !r.one.fits(1, steps, true) {
		r.one = newLanes(r.s, 1, steps, true)
	}
	r.final = 0
	if r.syms == nil {
		r.prepare(x, nil, r.pass)
	} // one-hot: the lane reads W_ih's columns (lanes.cols), no products to make
	r.one.scale[0], r.one.occluded[0] = x.scale, -1
	r.one.stop = r.pass
	r.one.h0, r.one.c0, r.one.cols = h0, c0, r.syms
	r.one.forward(r.u, steps, 1)
	r.one.h0, r.one.c0, r.one.cols = nil, nil, nil
}

// withStop runs f with r's single passes ending soon after ctx is done,
// and returns f's error, or the context's when the pass was cut short.
func (r *Runner) withStop(ctx context.Context, f func() error) error {
	if r == nil || r.runnerState == nil {
		return f()
	}
	r.pass = r.passStop.start(ctx)
	defer func() {
		if r.one != nil {
			r.one.stop = nil
		}
		r.pass = nil
	}()
	err := f()
	if serr := r.pass.err(); serr != nil {
		return serr
	}
	return err
}

// ForwardContext is Forward that ends soon after ctx is done (it looks
// every fraction of a millisecond of work, stop.go) with an error wrapping ctx.Err().
func (r *Runner) ForwardContext(ctx context.Context, x Input) (logits []float64, err error) {
	err = r.withStop(ctx, func() error {
		logits, err = r.Forward(x)
		return err
	})
	if err != nil {
		return nil, err
	}
	return logits, nil
}

// GradientContext is Gradient that ends soon after ctx is done (it looks
// every fraction of a millisecond of work, stop.go) with an error wrapping ctx.Err().
func (r *Runner) GradientContext(ctx context.Context, x Input, class int, grad []float64) (logits []float64, err error) {
	err = r.withStop(ctx, func() error {
		logits, err = r.Gradient(x, class, grad)
		return err
	})
	if err != nil {
		return nil, err
	}
	return logits, nil
}

// LRPContext is LRP that ends soon after ctx is done (it looks every
// fraction of a millisecond of work, stop.go) with an error wrapping ctx.Err().
func (r *Runner) LRPContext(ctx context.Context, x Input, class int, eps, biasFactor float64, rel []float64) (out Relevance, err error) {
	err = r.withStop(ctx, func() error {
		out, err = r.LRP(x, class, eps, biasFactor, rel)
		return err
	})
	if err != nil {
		return Relevance{}, err
	}
	return out, nil
}

// Forward returns the logits of x. The slice belongs to r and is
// overwritten by the next call.
func (r *Runner) Forward(x Input) ([]float64, error) {
	if err := r.acquire(); err != nil {
		return nil, err
	}
	defer r.release()
	if err := r.input(&x); err != nil {
		return nil, err
	}
	r.single(x)
	r.final = x.Len()
	return r.one.logitsBuf[:r.s.c], nil
}

// ForwardFrom is Forward started from the initial states h⁽⁰⁾ = h0 and
// c⁽⁰⁾ = c0 instead of zero, in PyTorch's layout of h_0 and c_0: cell
// k·directions + d (layer k, direction d; a backward direction starts at
// the last step) at [(k·directions+d)·H : …+H], Layers·directions·H values
// each, all finite. It continues a sequence whose prefix ran before (see
// Final); LSTM layers only. The other methods start from the zero state.
func (r *Runner) ForwardFrom(x Input, h0, c0 []float64) ([]float64, error) {
	if err := r.acquire(); err != nil {
		return nil, err
	}
	defer r.release()
	if err := r.input(&x); err != nil {
		return nil, err
	}
	if err := r.s.checkState(h0, c0); err != nil {
		return nil, err
	}
	r.singleFrom(x, h0, c0)
	r.final = x.Len()
	return r.one.logitsBuf[:r.s.c], nil
}

// checkState checks ForwardFrom's initial states.
func (s *Model) checkState(h0, c0 []float64) error {
	if s.p.Kind != LayerLSTM {
		return errors.New("cell: ForwardFrom runs LSTM layers only")
	}
	n := len(s.cells) * s.h
	if len(h0) != n || len(c0) != n {
		return fmt.Errorf("cell: initial state has %d and %d values, want layers × directions × H = %d each", len(h0), len(c0), n)
	}
	for _, st := range []struct {
		name string
		v    []float64
	}{{"h0", h0}, {"c0", c0}} {
		for j, v := range st.v {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("cell: initial state %s[%d] is %v; it must be finite", st.name, j, v)
			}
		}
	}
	return nil
}

// Final writes the final states h_n and c_n of the last Forward or
// ForwardFrom to h and c, in PyTorch's layout (see ForwardFrom): each
// direction's state after the last step it processed (a backward
// direction's after the first step). It is an error when another call
// came between them, or the model's layers are not LSTM layers.
func (r *Runner) Final(h, c []float64) error {
	if err := r.acquire(); err != nil {
		return err
	}
	defer r.release()
	if r.s.p.Kind != LayerLSTM {
		return errors.New("cell: Final reads LSTM layers only")
	}
	n := len(r.s.cells) * r.s.h
	if len(h) != n || len(c) != n {
		return fmt.Errorf("cell: final state buffers have %d and %d values, want layers × directions × H = %d each", len(h), len(c), n)
	}
	steps := r.final
	if steps == 0 || r.one == nil {
		return errors.New("cell: Final without a Forward or ForwardFrom just before it")
	}
	hd := r.s.h
	for ci := range r.s.cells {
		t := steps - 1
		if r.s.cells[ci].reverse {
			t = 0
		}
		tr := &r.one.cells[ci]
		cs, hs := r.one.stateSlot(t), r.one.hSlot(t)
		copy(h[ci*hd:(ci+1)*hd], tr.hs[hs*hd:(hs+1)*hd])
		copy(c[ci*hd:(ci+1)*hd], tr.c[cs*hd:(cs+1)*hd])
	}
	return nil
}

// Logits writes the logits of x to y (C values). It keeps no trace: an
// input whose one-lane trace (TraceBytes) is past 16 MiB runs on
// checkpoints, in memory O(H·√T) per layer and direction.
func (r *Runner) Logits(x Input, y []float64) error {
	if err := r.acquire(); err != nil {
		return err
	}
	defer r.release()
	if err := r.input(&x); err != nil {
		return err
	}
	if len(y) != r.s.c {
		return fmt.Errorf("cell: logits buffer has %d elements, want C = %d", len(y), r.s.c)
	}
	r.logits(x, y)
	return nil
}

// logits is Logits of the checked input x.
func (r *Runner) logits(x Input, y []float64) {
	copy(y, r.forwardOne(x).logitsBuf[:r.s.c])
}

// forwardOne runs the forward pass of the checked input x on one lane and
// returns the lane: the whole trace when it fits logitsTraceMax, else a
// checkpointed lane (memory O(H·√T)), its state left for the caller
// (logits, the attention weights).
func (r *Runner) forwardOne(x Input) *lanes {
	steps := x.Len()
	if r.s.TraceBytes(steps) <= min(logitsTraceMax, fullTraceMax) {
		r.single(x)
		return r.one
	}
	seg, nseg := segments(steps)
	if !r.light.fitsCk(1, seg, nseg, false) {
		r.light = nil
		r.light = newCkLanes(r.s, 1, seg, nseg, false)
	}
	r.light.setInput(x.dense, steps, seg)
	r.light.scale[0], r.light.occluded[0] = x.scale, -1
	r.light.stop = r.pass
	r.light.forward(nil, steps, 1)
	r.light.stop = nil
	return r.light
}

// checkOut is input for a method writing T×E values of class to out.
func (r *Runner) checkOut(x *Input, class int, out []float64) error {
	if err := r.input(x); err != nil {
		return err
	}
	if err := checkClass(class, r.s.c); err != nil {
		return err
	}
	if want := x.Len() * r.s.in; len(out) != want {
		return fmt.Errorf("cell: output buffer has %d elements, want T×E = %d×%d = %d", len(out), x.Len(), r.s.in, want)
	}
	return nil
}

// Gradient writes ∂ŷ_class/∂x_{t,i} to grad[t*E+i] (T×E) and returns the
// logits of x (owned by r).
func (r *Runner) Gradient(x Input, class int, grad []float64) ([]float64, error) {
	if err := r.acquire(); err != nil {
		return nil, err
	}
	defer r.release()
	if err := r.checkOut(&x, class, grad); err != nil {
		return nil, err
	}
	r.single(x)
	clear(grad)
	r.gsink = gradSink{grad: grad}
	r.one.backward(x.Len(), 1, class, &r.gsink)
	r.gsink = gradSink{}
	return r.one.logitsBuf[:r.s.c], nil
}

// LRP writes the ε-rule relevance of x_{t,i} for class to rel[t*E+i], as
// Arras et al.'s LSTM_bidi.lrp computes it (github.com/ArrasL/LRP_for_LSTM),
// layer by layer from the top:
//
//   - every linear map z = W·a + b passes relevance by lrp_linear: a_i gets
//     Σ_j (w_ji·a_i + bf·(b_j + ε·sign(z_j))/N)·R_j/(z_j + ε·sign(z_j)),
//     N the number of inputs of the map, sign(0) = +1, bf the bias factor
//     biasFactor: 0 lets the biases and the stabilizer absorb their share,
//     1 conserves relevance;
//   - the decoder starts from ŷ_class on its class (bias included in the
//     denominator), N = its inputs: H·directions, or the hidden layer's
//     units, whose Linear layer (N = H·directions) follows the same rule;
//     ReLU and tanh pass relevance unchanged;
//   - the head hands the relevance of its output to the top layer's
//     outputs: hn, hn-bf and last to the states it read, max all of a
//     unit's relevance to its maximising step (ties: the earliest), mean
//     by the ε-rule of v_j = Σ_t h_{t,j}/T (N = T, no bias), see
//     head_pool.go;
//   - c_t = f⊙c_{t−1} + i⊙g splits the relevance of c_t (that of h_t added)
//     between c_{t−1} and g with the identity map and N = 2H; the gates i,
//     f, o take none;
//   - g's relevance goes to x_t and h_{t−1} through the rows of g, N = H +
//     the layer's input size;
//   - layer k+1's input relevance at step t is the relevance of layer k's
//     outputs there, split between its two directions.
//
// That is the rule LRPArras. A model built with LRPHao (the white-box
// networks) follows it through the LSTM but starts at the decoder with the
// denominator W_y·h⁽ᵀ⁾ ± ε (its bias left out), takes bias factor 0 only,
// and reports in Relevance.Bias the biases' share of g (see LRPRule).
func (r *Runner) LRP(x Input, class int, eps, biasFactor float64, rel []float64) (Relevance, error) {
	if err := r.acquire(); err != nil {
		return Relevance{}, err
	}
	defer r.release()
	if err := r.checkOut(&x, class, rel); err != nil {
		return Relevance{}, err
	}
	if err := r.s.checkLRP(eps, biasFactor); err != nil {
		return Relevance{}, err
	}
	r.single(x)
	return r.lrpTrace(x, class, eps, biasFactor, rel)
}

// lrpTrace is LRP's relevance of class over the trace single(x) left.
func (r *Runner) lrpTrace(x Input, class int, eps, biasFactor float64, rel []float64) (Relevance, error) {
	xs := x.dense
	if x.scale != 1 {
		xs = r.scaled(x)
	}
	out := r.one.lrp(xs, x.Len(), class, eps, biasFactor, rel)
	if r.s.p.LRP == LRPHao { // the rule's own message (finiteRelevance)
		if err := finiteRelevance(out, rel, eps); err != nil {
			return Relevance{}, err
		}
		return out, nil
	}
	if err := finite(rel, out); err != nil {
		return Relevance{}, fmt.Errorf("cell: LRP with epsilon %v: %w", eps, err)
	}
	return out, nil
}

// checkLRP checks LRP's ε and bias factor for s.
func (s *Model) checkLRP(eps, biasFactor float64) error {
	if s.p.Kind == LayerGRU && !gruLRP {
		return errGRU("LRP")
	}
	if !(eps >= 0 && eps <= MaxEpsilon) {
		return fmt.Errorf("cell: LRP epsilon %v must be in [0, %g]", eps, MaxEpsilon)
	}
	if !(biasFactor >= 0 && biasFactor <= 1) {
		return fmt.Errorf("cell: LRP bias factor %v must be in [0, 1]", biasFactor)
	}
	if s.p.LRP == LRPHao && biasFactor != 0 {
		return fmt.Errorf("cell: LRP bias factor %v: the LRP rule %v has bias factor 0 only", biasFactor, s.p.LRP)
	}
	return nil
}

// scaled returns the rows of x as the model reads them (scale applied).
func (r *Runner) scaled(x Input) []float64 {
	n := len(x.dense)
	if cap(r.xs) < n {
		r.xs = make([]float64, n)
	}
	r.xs = r.xs[:n]
	for i, v := range x.dense {
		r.xs[i] = x.feature(v)
	}
	return r.xs
}

// finite reports NaN or infinite relevances (ε = 0 on a zero denominator,
// or an overflow), of the inputs or of the bookkeeping.
func finite(v []float64, out Relevance) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return notFinite(fmt.Sprintf("the relevance of input value %d is %v (a zero denominator: use a positive epsilon)", i, x))
		}
	}
	for _, x := range []float64{out.Output, out.Bias, out.Initial} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return notFinite(fmt.Sprintf("the relevance of the biases or the initial state is %v (a zero denominator: use a positive epsilon)", x))
		}
	}
	return nil
}

// canceled wraps the context's error, if it has one.
func canceled(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cell: %w", err)
	}
	return nil
}

// optionsOf checks opt and fills in its defaults.
func optionsOf(opt RunOptions) (budget int64, workers, maxLanes int, err error) {
	if err := opt.check(); err != nil {
		return 0, 0, 0, err
	}
	l := limitsOf(opt)
	maxLanes = l.lanes
	if maxLanes == 0 || maxLanes > maxBatchLanes {
		maxLanes = maxBatchLanes
	}
	return l.budget, l.workers, maxLanes, nil
}

// maxBatchLanes caps the lanes of one batch.
const maxBatchLanes = 64

// progress serializes the Progress calls of the workers.
type progress struct {
	mu    sync.Mutex
	fn    func(done, total int)
	done  int
	total int
}

func (p *progress) add(n int) {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	p.done += n
	p.fn(p.done, p.total)
	p.mu.Unlock()
}

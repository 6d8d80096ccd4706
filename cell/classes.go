package cell

import (
	"context"
	"fmt"
)

// Every class at once. The single-trace methods (the gradient, LRP) keep
// the forward pass of x in the Workspace and run one backward pass per
// class from it: a backward pass reads the trace and writes only its own
// scratch, so class c's result has the bits of the single-class call on c.

// checkClasses checks that outs holds one buffer of size each for every
// one of C classes.
func checkClasses(outs [][]float64, c, size int, what string) error {
	if len(outs) != c {
		return fmt.Errorf("cell: %d %s buffers, want one per class, C = %d", len(outs), what, c)
	}
	for k, o := range outs {
		if len(o) != size {
			return fmt.Errorf("cell: the %s buffer of class %d has %d elements, want %d", what, k, len(o), size)
		}
	}
	return nil
}

// GradientAll writes ∂ŷ_c/∂x_{t,i} to grads[c][t*D+i] for every class c
// (C buffers of T×D) from one forward pass, and returns the logits of x
// (owned by ws). grads[c] has the bits of Gradient(ws, x, c, ·). It ends
// soon after ctx is done (nil: never) with an error wrapping ctx.Err().
func (n *Network) GradientAll(ctx context.Context, ws *Workspace, x Input, grads [][]float64) ([]float64, error) {
	if err := n.traceAll(ctx, ws, x, grads, "gradient"); err != nil {
		return nil, err
	}
	defer func() { ws.stop = nil }()
	for c, g := range grads {
		n.backward(ws, x.Len(), c, g, 0, nil)
	}
	if err := ws.stop.err(); err != nil {
		return nil, err
	}
	return ws.logits, nil
}

// LRPAll writes the ε-rule relevance of x for every class c to rels[c]
// (C buffers of T×D) and its bookkeeping to outs[c], from one forward
// pass, and returns the logits of x (owned by ws). Class c's results have
// the bits of LRP(ws, x, c, eps, ·); a NaN or infinite relevance of any
// class is an error, as there. It ends soon after ctx is done (nil:
// never) with an error wrapping ctx.Err().
func (n *Network) LRPAll(ctx context.Context, ws *Workspace, x Input, eps float64, rels [][]float64, outs []Relevance) ([]float64, error) {
	if !(eps >= 0 && eps <= MaxEpsilon) {
		return nil, fmt.Errorf("cell: LRP epsilon %v must be in [0, %g]", eps, MaxEpsilon)
	}
	if len(outs) != n.c {
		return nil, fmt.Errorf("cell: %d Relevance values, want one per class, C = %d", len(outs), n.c)
	}
	if err := n.traceAll(ctx, ws, x, rels, "relevance"); err != nil {
		return nil, err
	}
	defer func() { ws.stop = nil }()
	for c, rel := range rels {
		outs[c] = n.lrp(ws, x, c, eps, rel)
		if err := ws.stop.err(); err != nil {
			return nil, err
		}
		if err := finiteRelevance(outs[c], rel, eps); err != nil {
			return nil, fmt.Errorf("class %d: %w", c, err)
		}
	}
	return ws.logits, nil
}

// traceAll checks ws, x and the C output buffers, and runs the forward
// pass whose trace the backward passes share, with ws.stop set from ctx
// (the caller clears it).
func (n *Network) traceAll(ctx context.Context, ws *Workspace, x Input, outs [][]float64, what string) error {
	if err := ws.reserve(n, x); err != nil {
		return err
	}
	if err := checkClasses(outs, n.c, x.Len()*n.d, what); err != nil {
		return err
	}
	ws.stop = ws.stopBuf.start(ctx)
	n.forward(ws, x)
	if err := ws.stop.err(); err != nil {
		ws.stop = nil
		return err
	}
	return nil
}

// OcclusionAll writes to outs[c][t] the logit ŷ_c of x with row t set to
// zero, for every class c and step t (C buffers of T), from one batched
// pass per occluded copy: outs[c] has the bits of Occlusion(ctx, x, c, ·).
func (b *Batcher) OcclusionAll(ctx context.Context, x Input, outs [][]float64, opt BatchOptions) error {
	j, err := b.acquire()
	if err != nil {
		return err
	}
	defer b.release()
	if err := opt.check(); err != nil {
		return err
	}
	n := j.net
	if err := x.check(n.d); err != nil {
		return err
	}
	if err := checkClasses(outs, n.c, x.Len(), "occlusion"); err != nil {
		return err
	}
	if err := fitBudget(occlusionLaneBytes(j.shape()), limitsOf(opt)); err != nil {
		return err
	}
	j.reset(request{
		kind: jobOcclusion, x: x, outs: outs, progress: opt.Progress,
		items: x.Len(), plan: planOcclusion(j.shape(), x.Len(), limitsOf(opt)),
	})
	return j.run(ctx)
}

// IntegratedGradientsAll writes Σ_k weights[k]·∇ŷ_c(alphas[k]·x) to
// accs[c] (C buffers of T×D) for every class c, ŷ(x) to y and ŷ(0·x) to
// y0 (the bits of Logits); accs[c] has the bits of GradientSum with class
// c, for every option. Each batch of α-scaled copies runs forward once and
// backward once per class, each class into its own block sums (C times
// one class's memory, within opt.Budget); with a checkpointed plan each
// class recomputes every segment from its checkpoint, the last included.
func (b *Batcher) IntegratedGradientsAll(ctx context.Context, x Input, alphas, weights []float64, accs [][]float64, y, y0 []float64, opt BatchOptions) error {
	j, err := b.acquire()
	if err != nil {
		return err
	}
	defer b.release()
	if err := opt.check(); err != nil {
		return err
	}
	n := j.net
	if err := x.check(n.d); err != nil {
		return err
	}
	if err := checkClasses(accs, n.c, x.Len()*n.d, "gradient"); err != nil {
		return err
	}
	if len(y) != n.c || len(y0) != n.c {
		return fmt.Errorf("cell: logits have %d and %d elements, want C = %d", len(y), len(y0), n.c)
	}
	if len(alphas) != len(weights) {
		return fmt.Errorf("cell: %d alphas but %d weights", len(alphas), len(weights))
	}
	s := j.shape()
	s.sums = n.c
	if err := fitBudget(minIGBytes(s, x.Len(), max(1, len(alphas)), !x.IsOneHot()), limitsOf(opt)); err != nil {
		return err
	}
	if err := j.logits(x, y); err != nil {
		return err
	}
	if err := j.logits(x.Scaled(0), y0); err != nil {
		return err
	}
	for _, acc := range accs {
		clear(acc)
	}
	if len(alphas) == 0 {
		return nil
	}
	j.reset(request{
		kind: jobIG, x: x, accs: accs, alphas: alphas, wts: weights, progress: opt.Progress,
		items: len(alphas), plan: planIG(s, x.Len(), len(alphas), !x.IsOneHot(), limitsOf(opt)),
	})
	return j.run(ctx)
}

// sums is the number of gradient sums an IG job computes: C for
// IntegratedGradientsAll, 1 otherwise.
func (j *job) sums() int { return max(1, len(j.accs)) }

// sum is the output of the job's k-th gradient sum.
func (j *job) sum(k int) []float64 {
	if j.accs == nil {
		return j.acc
	}
	return j.accs[k]
}

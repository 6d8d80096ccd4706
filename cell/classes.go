package cell

import (
	"context"
	"fmt"
)

// Every class at once on a model: the gradient
// and LRP run one backward pass per class from the trace of one forward
// pass (r.one's); IG runs each batch of lanes forward once and backward
// once per class, into per-class block sums (igJob.chunk); occlusion reads
// every class's logit from the same occluded passes.

// classes is the number of classes the job sums: C for
// IntegratedGradientsAll, 1 for IntegratedGradients.
func (j *igJob) classes() int { return max(1, len(j.grads)) }

// classOf is the class of the job's k-th sum.
func (j *igJob) classOf(k int) int {
	if j.grads == nil {
		return j.class
	}
	return k
}

// sum is the output of the job's k-th sum.
func (j *igJob) sum(k int) []float64 {
	if j.grads == nil {
		return j.grad
	}
	return j.grads[k]
}

// GradientAll writes ∂ŷ_c/∂x_{t,i} to grads[c][t*E+i] for every class c
// (C buffers of T×E) from one forward pass, and returns the logits of x
// (owned by r). grads[c] has the bits of Gradient(x, c, ·). It ends soon
// after ctx is done (nil: never) with an error wrapping ctx.Err().
func (r *Runner) GradientAll(ctx context.Context, x Input, grads [][]float64) (logits []float64, err error) {
	if err := r.acquire(); err != nil {
		return nil, err
	}
	defer r.release()
	if err := r.input(&x); err != nil {
		return nil, err
	}
	if err := checkClasses(grads, r.s.c, x.Len()*r.s.in, "gradient"); err != nil {
		return nil, err
	}
	err = r.withStop(ctx, func() error {
		r.single(x)
		for c, grad := range grads {
			clear(grad)
			r.gsink = gradSink{grad: grad}
			r.one.backward(x.Len(), 1, c, &r.gsink)
		}
		r.gsink = gradSink{}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r.one.logitsBuf[:r.s.c], nil
}

// LRPAll writes the ε-rule relevance of x for every class c to rels[c]
// (C buffers of T×E) and its bookkeeping to outs[c], from one forward
// pass, and returns the logits of x (owned by r). Class c's results have
// the bits of LRP(x, c, eps, biasFactor, ·); a NaN or infinite relevance
// of any class is an error, as there.
func (r *Runner) LRPAll(ctx context.Context, x Input, eps, biasFactor float64, rels [][]float64, outs []Relevance) (logits []float64, err error) {
	if err := r.acquire(); err != nil {
		return nil, err
	}
	defer r.release()
	if err := r.input(&x); err != nil {
		return nil, err
	}
	if err := checkClasses(rels, r.s.c, x.Len()*r.s.in, "relevance"); err != nil {
		return nil, err
	}
	if len(outs) != r.s.c {
		return nil, fmt.Errorf("cell: %d Relevance values, want one per class, C = %d", len(outs), r.s.c)
	}
	if err := r.s.checkLRP(eps, biasFactor); err != nil {
		return nil, err
	}
	err = r.withStop(ctx, func() error {
		r.single(x)
		xs := x.dense
		if x.scale != 1 {
			xs = r.scaled(x)
		}
		for c, rel := range rels {
			outs[c] = r.one.lrp(xs, x.Len(), c, eps, biasFactor, rel)
			if r.pass.err() != nil {
				return nil // withStop returns the context's error
			}
			if r.s.p.LRP == LRPHao { // as LRP says it
				if err := finiteRelevance(outs[c], rel, eps); err != nil {
					return fmt.Errorf("class %d: %w", c, err)
				}
			} else if err := finite(rel, outs[c]); err != nil {
				return fmt.Errorf("cell: LRP with epsilon %v, class %d: %w", eps, c, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r.one.logitsBuf[:r.s.c], nil
}

// IntegratedGradientsAll writes Σ_k weights[k]·∇ŷ_c(alphas[k]·x) to
// grads[c] (C buffers of T×E) for every class c, the logits of x to y and
// those of the zero input to y0. Each batch of lanes runs forward once and
// backward once per class; grads[c] has the bits of IntegratedGradients
// with class c, for every option. The per-class block sums take C times
// the memory of one class's within opt.Budget (fewer lanes per batch when
// it is tight).
func (r *Runner) IntegratedGradientsAll(ctx context.Context, x Input, alphas, weights []float64, grads [][]float64, y, y0 []float64, opt RunOptions) error {
	if err := r.acquire(); err != nil {
		return err
	}
	defer r.release()
	if err := r.input(&x); err != nil {
		return err
	}
	if err := checkClasses(grads, r.s.c, x.Len()*r.s.in, "gradient"); err != nil {
		return err
	}
	return r.integratedGradients(ctx, x, nil, alphas, weights, nil, grads, y, y0, opt)
}

// OcclusionAll writes to outs[c][t] the logit ŷ_c of x with row t set to
// zero, for every class c and step t (C buffers of T), from one pass per
// occluded copy: outs[c] has the bits of Occlusion(ctx, x, c, ·).
func (r *Runner) OcclusionAll(ctx context.Context, x Input, outs [][]float64, opt RunOptions) error {
	if err := r.acquire(); err != nil {
		return err
	}
	defer r.release()
	if err := r.input(&x); err != nil {
		return err
	}
	if err := checkClasses(outs, r.s.c, x.Len(), "occlusion"); err != nil {
		return err
	}
	return r.occlusion(ctx, x, 0, nil, outs, nil, opt)
}

// integratedGradientsEach is IntegratedGradientsAll on checkpointed lanes:
// each class as IntegratedGradients computes it, one after another (the
// checkpointed sweeps keep one class's sums; sharing them would take C
// times their memory, which the budget was too small for).
func (r *Runner) integratedGradientsEach(ctx context.Context, x Input, alphas, weights []float64, grads [][]float64, y, y0 []float64, opt RunOptions) error {
	for c := range grads {
		class := func([]float64) (int, error) { return c, nil }
		if err := r.integratedGradients(ctx, x, class, alphas, weights, grads[c], nil, y, y0, opt); err != nil {
			return err
		}
	}
	return nil
}

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

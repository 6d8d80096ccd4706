package cell

import "context"

// The single passes with the class taken from the input's own logits.
// Saliency, G×I and LRP usually attribute the predicted class, which is
// known only after a forward pass; Gradient(x, choose(Forward(x))) runs
// that pass twice. These run it once and call choose between the forward
// and the backward half: the same bits, one forward pass fewer (the
// forward pass is 40 % of Saliency on sp-fsa at T = 4,096).

// GradientChosenContext writes ∂ŷ_c/∂x_{t,i} to grad[t*E+i] (T×E) for the
// class c = choose(y), y the logits of x, and returns y (owned by r) and
// c. An error of choose ends the call and is returned as it is; a class
// out of range is an error. Like GradientContext, it ends soon after ctx
// is done.
func (r *Runner) GradientChosenContext(ctx context.Context, x Input, choose func(y []float64) (int, error), grad []float64) (logits []float64, class int, err error) {
	err = r.withStop(ctx, func() error {
		logits, class, err = r.chosen(x, choose, grad, func(x Input, class int) error {
			clear(grad)
			r.gsink = gradSink{grad: grad}
			r.one.backward(x.Len(), 1, class, &r.gsink)
			r.gsink = gradSink{}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return logits, class, nil
}

// LRPChosenContext is LRPContext for the class c = choose(y), y the logits
// of x, which it returns (owned by r) with c and the relevance; see
// GradientChosenContext.
func (r *Runner) LRPChosenContext(ctx context.Context, x Input, choose func(y []float64) (int, error), eps, biasFactor float64, rel []float64) (logits []float64, class int, out Relevance, err error) {
	if err := r.s.checkLRP(eps, biasFactor); err != nil {
		return nil, 0, Relevance{}, err
	}
	err = r.withStop(ctx, func() error {
		logits, class, err = r.chosen(x, choose, rel, func(x Input, class int) error {
			out, err = r.lrpTrace(x, class, eps, biasFactor, rel)
			return err
		})
		return err
	})
	if err != nil {
		return nil, 0, Relevance{}, err
	}
	return logits, class, out, nil
}

// chosen checks x and the output buffer out (T×E), runs the forward pass
// of x, takes the class from choose and runs back on the trace, with x as
// the model reads it (a one-hot input's rows made dense, see input).
func (r *Runner) chosen(x Input, choose func(y []float64) (int, error), out []float64, back func(x Input, class int) error) (logits []float64, class int, err error) {
	if err := r.acquire(); err != nil {
		return nil, 0, err
	}
	defer r.release()
	if err := r.checkOut(&x, 0, out); err != nil {
		return nil, 0, err
	}
	r.single(x)
	logits = r.one.logitsBuf[:r.s.c]
	if r.pass.err() != nil { // cut short: the logits are not x's
		return nil, 0, nil
	}
	if class, err = choose(logits); err != nil {
		return nil, 0, err
	}
	if err := checkClass(class, r.s.c); err != nil {
		return nil, 0, err
	}
	return logits, class, back(x, class)
}

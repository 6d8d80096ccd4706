package cell

import (
	"context"
	"errors"
	"fmt"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// Contextual decomposition (Murdoch, Liu and Yu, ICLR 2018), as the
// authors' released CD() computes it (github.com/jamie-murdoch/
// ContextualDecomposition, train_model/sent_util.py), for a one-layer,
// one-direction LSTM whose last state feeds one Linear layer.
//
// For a span [start, stop] of positions (both included), every state is
// split in two, h_t = β_t + γ_t and c_t = β^c_t + γ^c_t: β is the part
// due to the span, γ the rest. Step t:
//
//   - The gate pre-activations split into a relevant part r = W_h·β_{t−1}
//     (+ W_x·x_t when t is in the span), an irrelevant part
//     q = W_h·γ_{t−1} (+ W_x·x_t otherwise) and the bias b. Each of i, f,
//     g is linearized over the three (the authors' decomp_three):
//     act(r+q+b) = R + Q + act(b) with
//     R = ½(act(r+b) − act(b) + act(r+q+b) − act(q+b)) and Q alike.
//   - β^c_t = R_i(R_g + B_g) + B_i·R_g + (R_f + B_f)·β^c_{t−1} and
//     γ^c_t = Q_i(R_g + Q_g + B_g) + (R_i + B_i)·Q_g
//     + (R_f + Q_f + B_f)·γ^c_{t−1} + Q_f·β^c_{t−1} (the forget terms from
//     the second step on, B = act(b)); the bias·bias term B_i·B_g goes to
//     β^c when start ≤ t < stop and to γ^c otherwise, so a single token
//     (start = stop) never gets it.
//   - The output gate is not decomposed: o = σ(W_x·x_t + W_h·(β_{t−1} +
//     γ_{t−1}) + b_o), and tanh is split in two (decomp_tanh_two):
//     β_t = o·½(tanh β^c + tanh(β^c + γ^c) − tanh γ^c), γ_t alike.
//
// The split is exact: β_t + γ_t = h_t and β^c_t + γ^c_t = c_t up to
// rounding, so W_y·β_T + W_y·γ_T + b_y are the logits. The span's score
// for class k is W_y[k]·β_T (the decoder's bias belongs to neither part);
// a token's score is its one-token span's, CD(start = t, stop = t).
//
// Only that architecture has the authors' definition: a model with
// more than one layer, two directions, a mean or max head or a hidden
// classifier layer is refused (CDSupported says why). The white-box
// networks run it on their one-hot rows made dense.

// CDSupported returns nil when contextual decomposition is defined for s
// (one layer, one direction, a head that reads the last state, one Linear
// layer), else an error that names what is not.
func CDSupported(s *Model) error {
	if s == nil {
		return errors.New("cell: contextual decomposition: nil model")
	}
	if s.p.Kind == LayerGRU {
		return ErrCDGRU
	}
	var why string
	switch {
	case s.p.Layers != 1:
		why = fmt.Sprintf("the model has %d layers; the authors define it for one", s.p.Layers)
	case s.dirs != 1:
		why = "the model is bidirectional; the authors define it for one direction"
	case s.p.Head == HeadMean || s.p.Head == HeadMax || s.p.Head == HeadAttention:
		why = fmt.Sprintf("the head %v pools every step; the authors define it on the last state (hn, last)", s.p.Head)
	case s.p.Act != ActNone:
		why = fmt.Sprintf("the classifier has a hidden layer (%v); the authors define it for one Linear layer", s.p.Act)
	}
	if why != "" {
		return fmt.Errorf("cell: contextual decomposition is for one-layer, one-direction LSTMs with a Linear layer on the last state: %s", why)
	}
	return nil
}

// cdLanes is the number of decompositions Tokens advances together: the
// spans of cdLanes consecutive tokens, whose steps share one pass over
// W_h (kernel.MulAddRows), plus the state before them. It changes time,
// never a bit.
const cdLanes = 32

// CDBytes is the memory a CDRunner keeps for an input of steps steps: the
// input products W_x·x_t (T×4H), the states of its lanes and the bias
// activations.
func (s *Model) CDBytes(steps int) int64 {
	return 8 * (int64(max(steps, 0))*4*int64(s.h) + ((cdLanes+1)*12+3)*int64(s.h) + int64(s.in))
}

// A CDRunner computes contextual decompositions on one model. It
// reuses its buffers from call to call and is for one goroutine at a time;
// the model may be shared.
type CDRunner struct {
	s   *Model
	xz  []float64 // T×4H: W_x·x_t
	row []float64 // E: one input row as the model reads it
	ab  []float64 // 3H: σ(b_i), σ(b_f), tanh(b_g), the bias parts
	l   cdLaneState
	st  stopper // the call's (stop.go)
}

// cdLaneState holds the decompositions of several spans, one per lane r:
// the states β, γ (h rows 2r, 2r+1) and β^c, γ^c (c rows 2r, 2r+1), each H,
// and the scratch of a step.
type cdLaneState struct {
	h, c       []float64 // 2L×H
	z          []float64 // 2L×3H: W_h·β and W_h·γ (+ W_x·x_t) for the gates i, f, g
	hsum, zo   []float64 // L×H: β + γ and W_h·(β + γ) for the output gate
	start, end []int     // L: each lane's span
}

func newCDLanes(l, h int) cdLaneState {
	return cdLaneState{h: make([]float64, 2*l*h), c: make([]float64, 2*l*h), z: make([]float64, 6*l*h),
		hsum: make([]float64, l*h), zo: make([]float64, l*h), start: make([]int, l), end: make([]int, l)}
}

// NewCDRunner returns a runner for s, or CDSupported's error.
func NewCDRunner(s *Model) (*CDRunner, error) {
	if err := CDSupported(s); err != nil {
		return nil, err
	}
	h, b := s.h, s.cells[0].b
	ab := make([]float64, 3*h)
	for j := range h {
		ab[j], ab[h+j], ab[2*h+j] = kernel.Sigmoid(b[j]), kernel.Sigmoid(b[h+j]), kernel.Tanh(b[2*h+j])
	}
	return &CDRunner{s: s, row: make([]float64, s.in), ab: ab, l: newCDLanes(cdLanes+1, s.h)}, nil
}

// Release drops the buffers that grow with the input; the runner stays
// usable.
func (r *CDRunner) Release() { r.xz = nil }

// prepare checks x and computes its input products, ending early once stop
// has (its error).
func (r *CDRunner) prepare(x Input, stop *stopper) error {
	if x.IsOneHot() && x.Len() > 0 {
		return errors.New("cell: contextual decomposition reads dense input (embed the tokens first)")
	}
	s := r.s
	if err := x.check(s.in); err != nil {
		return err
	}
	g := 4 * s.h
	steps := x.Len()
	if cap(r.xz) < steps*g {
		r.xz = make([]float64, steps*g)
	}
	r.xz = r.xz[:steps*g]
	clear(r.xz)
	c := &s.cells[0]
	for t := range steps {
		if stop.spend(g * s.in) {
			return stop.err()
		}
		for i := range r.row {
			r.row[i] = x.feature(x.dense[t*s.in+i])
		}
		kernel.AxpyRows(r.xz[t*g:(t+1)*g], c.wihT, g, r.row)
	}
	return nil
}

// Span computes the decomposition of x's logits for the span [start, stop]
// (positions from 0, both included): rel[k] = W_y[k]·β_T and irrel[k] =
// W_y[k]·γ_T for every class k (without the decoder's bias; rel and irrel
// must hold Classes() values). It ends soon after ctx is done.
func (r *CDRunner) Span(ctx context.Context, x Input, start, stop int, rel, irrel []float64) error {
	if err := checkSpan(start, stop, x.Len()); err != nil {
		return err
	}
	if len(rel) != r.s.c || len(irrel) != r.s.c {
		return fmt.Errorf("cell: contextual decomposition: %d and %d outputs for %d classes", len(rel), len(irrel), r.s.c)
	}
	st := r.st.start(ctx)
	defer r.st.end()
	if err := r.prepare(x, st); err != nil {
		return err
	}
	l, h := &r.l, r.s.h
	clear(l.h[:2*h])
	clear(l.c[:2*h])
	l.start[0], l.end[0] = start, stop
	work := r.stepWork(1)
	for t := range x.Len() {
		if st.spend(work) {
			return st.err()
		}
		r.step(t, 0, 1)
	}
	for k := range r.s.c {
		rel[k] = r.decode(k, l.h[:h])
		irrel[k] = r.decode(k, l.h[h:2*h])
	}
	return nil
}

// Tokens writes to scores[t] the score of token t for class, W_y[class]·β_T
// of the span [t, t]: the bits of Span(x, t, t). The steps before a token
// are shared by the spans that begin after it (lane 0 holds that state,
// the span not yet begun), so the T decompositions take T(T+1)/2 steps,
// run cdLanes spans at a time. It ends soon after ctx is done.
func (r *CDRunner) Tokens(ctx context.Context, x Input, class int, scores []float64) error {
	steps := x.Len()
	if class < 0 || class >= r.s.c {
		return fmt.Errorf("cell: class %d is out of range [0, %d)", class, r.s.c)
	}
	if len(scores) != steps {
		return fmt.Errorf("cell: contextual decomposition: %d scores for %d steps", len(scores), steps)
	}
	st := r.st.start(ctx)
	defer r.st.end()
	if err := r.prepare(x, st); err != nil {
		return err
	}
	l, h := &r.l, r.s.h
	// Lane 0: outside every span so far (the test t ≥ start fails, so no
	// bias term reaches β), which is each span's state before it begins.
	clear(l.h[:2*h])
	clear(l.c[:2*h])
	l.start[0], l.end[0] = steps, steps
	for t0 := 0; t0 < steps; t0 += cdLanes {
		n := min(cdLanes, steps-t0) // lanes 1..n: the spans [t0+k-1, t0+k-1]
		for t := t0; t < steps; t++ {
			if st.spend(r.stepWork(n + 1)) {
				return st.err()
			}
			hi := min(t-t0+1, n) + 1 // lanes below hi have begun
			if k := t - t0 + 1; k <= n {
				copy(l.h[2*k*h:2*(k+1)*h], l.h[:2*h])
				copy(l.c[2*k*h:2*(k+1)*h], l.c[:2*h])
				l.start[k], l.end[k] = t, t
			}
			lo := 0
			if t >= t0+n {
				lo = 1 // lane 0 is needed up to the next block's first step
			}
			r.step(t, lo, hi)
		}
		for k := 1; k <= n; k++ {
			scores[t0+k-1] = r.decode(class, l.h[2*k*h:(2*k+1)*h])
		}
	}
	return nil
}

// stepWork is the work of a step of l lanes (step): the products with
// W_h of β, γ and their sum, 7H² multiply-adds a lane, and the gates'
// decompositions, some 30 activations a unit.
func (r *CDRunner) stepWork(l int) int {
	h := r.s.h
	return l * h * (7*h + 30*16)
}

// checkSpan validates the span [start, stop] of an input of steps steps.
func checkSpan(start, stop, steps int) error {
	if start < 0 || stop < start || stop >= steps {
		return fmt.Errorf("cell: contextual decomposition: span %d:%d is not within the input's %d positions (0 ≤ start ≤ stop ≤ %d)", start, stop, steps, steps-1)
	}
	return nil
}

// decode is W_y[k]·v, summed in order of the units.
func (r *CDRunner) decode(k int, v []float64) float64 {
	w := r.s.wy[k*r.s.h : (k+1)*r.s.h]
	sum := 0.0
	for j, x := range v {
		sum += float64(w[j] * x)
	}
	return sum
}

// step advances lanes lo … hi−1 by step t of the decomposition of each
// lane's span, as the authors' CD() does (see the top of this file). The
// products with W_h are kernel.MulAddRows, whose every row has the bits of
// kernel.AxpyRows, so a lane's bits do not depend on the others. Products
// are rounded before they are added (float64(a*b)), so that no build fuses
// them: the same bits on every architecture.
func (r *CDRunner) step(t, lo, hi int) {
	s, l := r.s, &r.l
	h, g := s.h, 4*s.h
	c := &s.cells[0]
	xz := r.xz[t*g : (t+1)*g]
	// W_h·β and W_h·γ for the gates i, f, g (the first 3H rows), every lane.
	z := l.z[2*lo*3*h : 2*hi*3*h]
	clear(z)
	kernel.MulAddRows(z, 3*h, c.whhT, g, l.h[2*lo*h:2*hi*h], h, h)
	// The output gate reads the whole state: W_h·(β + γ).
	for k := lo; k < hi; k++ {
		rel, irr, sum := l.h[2*k*h:(2*k+1)*h], l.h[(2*k+1)*h:(2*k+2)*h], l.hsum[k*h:(k+1)*h]
		for j := range h {
			sum[j] = rel[j] + irr[j]
		}
	}
	zo := l.zo[lo*h : hi*h]
	clear(zo)
	kernel.MulAddRows(zo, h, c.whhT[3*h:], g, l.hsum[lo*h:hi*h], h, h)
	b, ab := c.b, r.ab
	for k := lo; k < hi; k++ {
		zr, zq := l.z[2*k*3*h:(2*k+1)*3*h], l.z[(2*k+1)*3*h:(2*k+2)*3*h]
		relC, irrC := l.c[2*k*h:(2*k+1)*h], l.c[(2*k+1)*h:(2*k+2)*h]
		relH, irrH := l.h[2*k*h:(2*k+1)*h], l.h[(2*k+1)*h:(2*k+2)*h]
		zo := l.zo[k*h : (k+1)*h]
		if t >= l.start[k] && t <= l.end[k] {
			for j := range zr {
				zr[j] += xz[j]
			}
		} else {
			for j := range zq {
				zq[j] += xz[j]
			}
		}
		biasToRel := t >= l.start[k] && t < l.end[k]
		for j := range h {
			bi, bg := ab[j], ab[2*h+j]
			ri, qi := decompThree(zr[j], zq[j], b[j], bi, kernel.Sigmoid)
			rg, qg := decompThree(zr[2*h+j], zq[2*h+j], b[2*h+j], bg, kernel.Tanh)
			rel := float64(ri*(rg+bg)) + float64(bi*rg)
			irr := float64(qi*((rg+qg)+bg)) + float64((ri+bi)*qg)
			if biasToRel {
				rel += float64(bi * bg)
			} else {
				irr += float64(bi * bg)
			}
			if t > 0 {
				bf := ab[h+j]
				rf, qf := decompThree(zr[h+j], zq[h+j], b[h+j], bf, kernel.Sigmoid)
				rel += float64((rf + bf) * relC[j])
				irr += float64(((rf+qf)+bf)*irrC[j]) + float64(qf*relC[j])
			}
			relC[j], irrC[j] = rel, irr
			o := kernel.Sigmoid((xz[3*h+j] + zo[j]) + b[3*h+j])
			nr, nq := decompTanhTwo(rel, irr)
			relH[j], irrH[j] = float64(o*nr), float64(o*nq)
		}
	}
}

// decompThree linearizes act(a + b + c) over a (relevant), b (irrelevant)
// and c (the bias), the authors' decomp_three: it returns a's and b's
// contributions, which add up to act(a + b + c) with cc = act(c).
func decompThree(a, b, c, cc float64, act func(float64) float64) (ac, bc float64) {
	ab := act((a + b) + c)
	ac = float64(0.5 * (((act(a+c) - cc) + ab) - act(b+c)))
	bc = float64(0.5 * (((act(b+c) - cc) + ab) - act(a+c)))
	return ac, bc
}

// decompTanhTwo splits tanh(a + b) into a's and b's shares, the authors'
// decomp_tanh_two.
func decompTanhTwo(a, b float64) (float64, float64) {
	ab := kernel.Tanh(a + b)
	return float64(0.5 * (kernel.Tanh(a) + (ab - kernel.Tanh(b)))), float64(0.5 * (kernel.Tanh(b) + (ab - kernel.Tanh(a))))
}

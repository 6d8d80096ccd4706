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
// Only that architecture has the authors' definition: a Stacked model with
// more than one layer, two directions, a mean or max head or a hidden
// classifier layer is refused (CDSupported says why). The white-box
// networks run it as Network.AsStacked.

// CDSupported returns nil when contextual decomposition is defined for s
// (one layer, one direction, a head that reads the last state, one Linear
// layer), else an error that names what is not.
func CDSupported(s *Stacked) error {
	if s == nil {
		return errors.New("cell: contextual decomposition: nil Stacked model")
	}
	var why string
	switch {
	case s.p.Layers != 1:
		why = fmt.Sprintf("the model has %d layers; the authors define it for one", s.p.Layers)
	case s.dirs != 1:
		why = "the model is bidirectional; the authors define it for one direction"
	case s.p.Head == HeadMean || s.p.Head == HeadMax:
		why = fmt.Sprintf("the head %v pools every step; the authors define it on the last state (hn, last)", s.p.Head)
	case s.p.Act != ActNone:
		why = fmt.Sprintf("the classifier has a hidden layer (%v); the authors define it for one Linear layer", s.p.Act)
	}
	if why != "" {
		return fmt.Errorf("cell: contextual decomposition is for one-layer, one-direction LSTMs with a Linear layer on the last state: %s", why)
	}
	return nil
}

// CDBytes is the memory a CDRunner keeps for an input of steps steps: the
// input products W_x·x_t (T×4H) and its state vectors.
func (s *Stacked) CDBytes(steps int) int64 {
	return 8 * (int64(max(steps, 0))*4*int64(s.h) + 14*int64(s.h) + int64(s.in))
}

// A CDRunner computes contextual decompositions on one Stacked model. It
// reuses its buffers from call to call and is for one goroutine at a time;
// the model may be shared.
type CDRunner struct {
	s    *Stacked
	xz   []float64 // T×4H: W_x·x_t
	row  []float64 // E: one input row as the model reads it
	cur  cdState   // the decomposition being run
	pre  cdState   // Tokens: the states before the token, the span not yet begun
	zr   []float64 // 3H: the relevant pre-activations of i, f, g
	zq   []float64 // 3H: the irrelevant ones
	hsum []float64 // H: β + γ, the output gate's input
	zo   []float64 // H: the output gate's pre-activation
}

// cdState is the decomposition after some step: β^c, γ^c, β, γ.
type cdState struct {
	relC, irrC, relH, irrH []float64
}

func newCDState(h int) cdState {
	v := make([]float64, 4*h)
	return cdState{relC: v[:h:h], irrC: v[h : 2*h : 2*h], relH: v[2*h : 3*h : 3*h], irrH: v[3*h:]}
}

func (st cdState) copyFrom(o cdState) {
	copy(st.relC, o.relC)
	copy(st.irrC, o.irrC)
	copy(st.relH, o.relH)
	copy(st.irrH, o.irrH)
}

func (st cdState) reset() {
	clear(st.relC)
	clear(st.irrC)
	clear(st.relH)
	clear(st.irrH)
}

// NewCDRunner returns a runner for s, or CDSupported's error.
func NewCDRunner(s *Stacked) (*CDRunner, error) {
	if err := CDSupported(s); err != nil {
		return nil, err
	}
	h := s.h
	return &CDRunner{s: s, row: make([]float64, s.in), cur: newCDState(h), pre: newCDState(h),
		zr: make([]float64, 3*h), zq: make([]float64, 3*h), hsum: make([]float64, h), zo: make([]float64, h)}, nil
}

// Release drops the buffers that grow with the input; the runner stays
// usable.
func (r *CDRunner) Release() { r.xz = nil }

// prepare checks x and computes its input products.
func (r *CDRunner) prepare(x Input) error {
	if x.IsOneHot() && x.Len() > 0 {
		return errors.New("cell: a Stacked model reads dense input (embed the tokens first)")
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
	if err := r.prepare(x); err != nil {
		return err
	}
	r.cur.reset()
	for t := range x.Len() {
		if err := ctx.Err(); err != nil {
			return err
		}
		r.step(r.cur, t, start, stop)
	}
	for k := range r.s.c {
		rel[k] = r.decode(k, r.cur.relH)
		irrel[k] = r.decode(k, r.cur.irrH)
	}
	return nil
}

// Tokens writes to scores[t] the score of token t for class, W_y[class]·β_T
// of the span [t, t]: the bits of Span(x, t, t). The steps before a token
// are shared by the spans that begin after it, so the T decompositions take
// T(T+1)/2 steps. It ends soon after ctx is done.
func (r *CDRunner) Tokens(ctx context.Context, x Input, class int, scores []float64) error {
	steps := x.Len()
	if class < 0 || class >= r.s.c {
		return fmt.Errorf("cell: class %d is out of range [0, %d)", class, r.s.c)
	}
	if len(scores) != steps {
		return fmt.Errorf("cell: contextual decomposition: %d scores for %d steps", len(scores), steps)
	}
	if err := r.prepare(x); err != nil {
		return err
	}
	r.pre.reset()
	for t := range steps {
		r.cur.copyFrom(r.pre)
		for i := t; i < steps; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			r.step(r.cur, i, t, t)
		}
		scores[t] = r.decode(class, r.cur.relH)
		// Step t of every span that begins after t: outside the span, no
		// bias term in β (the test t ≥ start fails).
		r.step(r.pre, t, t+1, t+1)
	}
	return nil
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

// step advances st by step t of the decomposition for the span
// [start, stop], as the authors' CD() does (see the top of this file).
// Products are rounded before they are added (float64(a*b)), so that no
// build fuses them: the same bits on every architecture.
func (r *CDRunner) step(st cdState, t, start, stop int) {
	s := r.s
	h, g := s.h, 4*s.h
	c := &s.cells[0]
	xz := r.xz[t*g : (t+1)*g]
	// W_h·β and W_h·γ for the gates i, f, g (the first 3H rows).
	clear(r.zr)
	clear(r.zq)
	kernel.AxpyRows(r.zr, c.whhT, g, st.relH)
	kernel.AxpyRows(r.zq, c.whhT, g, st.irrH)
	inSpan := t >= start && t <= stop
	if inSpan {
		for j := range r.zr {
			r.zr[j] += xz[j]
		}
	} else {
		for j := range r.zq {
			r.zq[j] += xz[j]
		}
	}
	// The output gate reads the whole state: W_h·(β + γ).
	for j := range h {
		r.hsum[j] = st.relH[j] + st.irrH[j]
	}
	clear(r.zo)
	kernel.AxpyRows(r.zo, c.whhT[3*h:], g, r.hsum)
	biasToRel := t >= start && t < stop
	b := c.b
	for j := range h {
		ri, qi, bi := decompThree(r.zr[j], r.zq[j], b[j], kernel.Sigmoid)
		rg, qg, bg := decompThree(r.zr[2*h+j], r.zq[2*h+j], b[2*h+j], kernel.Tanh)
		rel := float64(ri*(rg+bg)) + float64(bi*rg)
		irr := float64(qi*((rg+qg)+bg)) + float64((ri+bi)*qg)
		if biasToRel {
			rel += float64(bi * bg)
		} else {
			irr += float64(bi * bg)
		}
		if t > 0 {
			rf, qf, bf := decompThree(r.zr[h+j], r.zq[h+j], b[h+j], kernel.Sigmoid)
			rel += float64((rf + bf) * st.relC[j])
			irr += float64(((rf+qf)+bf)*st.irrC[j]) + float64(qf*st.relC[j])
		}
		st.relC[j], st.irrC[j] = rel, irr
		o := kernel.Sigmoid((xz[3*h+j] + r.zo[j]) + b[3*h+j])
		nr, nq := decompTanhTwo(rel, irr)
		st.relH[j], st.irrH[j] = float64(o*nr), float64(o*nq)
	}
}

// decompThree linearizes act(a + b + c) over a (relevant), b (irrelevant)
// and c (the bias), the authors' decomp_three: it returns a's and b's
// contributions and act(c), which add up to act(a + b + c).
func decompThree(a, b, c float64, act func(float64) float64) (ac, bc, cc float64) {
	cc = act(c)
	ab := act((a + b) + c)
	ac = float64(0.5 * (((act(a+c) - cc) + ab) - act(b+c)))
	bc = float64(0.5 * (((act(b+c) - cc) + ab) - act(a+c)))
	return ac, bc, cc
}

// decompTanhTwo splits tanh(a + b) into a's and b's shares, the authors'
// decomp_tanh_two.
func decompTanhTwo(a, b float64) (float64, float64) {
	ab := kernel.Tanh(a + b)
	return float64(0.5 * (kernel.Tanh(a) + (ab - kernel.Tanh(b)))), float64(0.5 * (kernel.Tanh(b) + (ab - kernel.Tanh(a))))
}

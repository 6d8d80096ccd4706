package cell

import (
	"context"
	"fmt"
	"math"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// DeepLIFT (Shrikumar et al. 2017) through a model: the input x
// and a reference input x₀ of the same length run through the model, both
// traces kept, and multipliers m (Δŷ_c = Σ m·Δ, Δ = a quantity's value on
// x minus its value on x₀) go backward from the logit of class c to the
// input, through the classifier, the head, every layer and both
// directions, by one exact definition:
//
//   - every sigmoid, tanh (tanh(c) included) and ReLU y = f(z) gets the
//     Rescale multiplier m_z = m_y·(f(z) − f(z₀))/(z − z₀), or
//     m_y·f′((z + z₀)/2) where |z − z₀| < 1e-6;
//   - every product y = a·b of two varying quantities (f⊙c_{t−1}, i⊙g,
//     o⊙tanh c) splits symmetrically (the Shapley values of the two
//     factors): m_a = m_y·(b₀ + Δb/2), m_b = m_y·(a₀ + Δa/2), which is
//     exact, since Δ(a·b) = (b₀ + Δb/2)·Δa + (a₀ + Δa/2)·Δb;
//   - Linear layers, sums, the selections of the heads hn, hn-bf and last
//     and the mean head pass multipliers as gradients do (m_a = Wᵀ·m_z;
//     mean: m_v/T to every step);
//   - the max head's unit j, v_j = max_t h_{t,j}, with a the maximising
//     step of x and b that of x₀ (ties: the earliest, as the forward pass),
//     passes m_v to h_a alone when a = b, else λ·m_v to h_a and
//     (1 − λ)·m_v to h_b, λ = (h_a − h_b)/((h_a − h_b) + (h₀_b − h₀_a)).
//     Both gaps are ≥ 0 and their sum is > 0 when a ≠ b, so λ ∈ [0, 1], and
//     Δv_j = h_a − h₀_b = λ·Δh_a + (1 − λ)·Δh_b exactly: max pooling is
//     split, like Rescale, so that the multipliers sum to the change of
//     the maximum (a gradient's one-hot multiplier would not);
//   - the score of input feature (t, i) is (x − x₀)_{t,i}·m_{t,i}; a token's
//     score is the sum over its features.
//
// Every rule is exact, so the scores sum to ŷ_c(x) − ŷ_c(x₀) (the
// summation-to-delta property) up to rounding and the midpoint rule's
// error where |z − z₀| < 1e-6 (below 1e-12 of a multiplier). Captum's
// DeepLift is not this method on an LSTM: it applies its rules to
// nonlinear modules only, so inside nn.LSTM it passes the gradient, and on
// an unrolled LSTM it takes the gradient at the gate products, which does
// not sum to delta; model/testdata/deeplift/gen_deeplift.py is this
// definition's independent reference. GRU layers take these rules
// through their own step (layer_gru_deeplift.go; gen_gru.py is its
// reference); the attention head's rules are head_attention_deeplift.go's.

// deepLIFTState is a runner's DeepLIFT buffers: the two traced passes and
// the multipliers.
type deepLIFTState struct {
	x, ref   *lanes    // one lane each, pre-activations kept
	ux, uref []float64 // layer 0's input products of x and of x₀
	mx       []float64 // T×E: the multipliers of layer 0's input
	ma       []float64 // Units: the classifier's hidden layer
	all      *deepLIFTLanes
	att      *attnDeepLIFT // the attention head's scratch
}

// DeepLIFTBytes is the memory of a DeepLIFT pass over an input of steps
// steps: the traces of the input and of the reference, with their
// pre-activations, their input products and the input's multipliers.
func (s *Model) DeepLIFTBytes(steps int) int64 {
	g := 4 * int64(s.h)
	trace := s.laneBytes(1, steps, false) + 8*int64(len(s.cells))*int64(steps)*g
	return 2*trace + 2*8*int64(s.dirs)*int64(steps)*g + 8*int64(steps)*int64(s.in) + 8*int64(s.p.Units) + s.attnDeepLIFTBytes(steps, 1)
}

// attnDeepLIFTBytes is the attention head's DeepLIFT scratch for l
// classes (0 for the other heads).
func (s *Model) attnDeepLIFTBytes(steps, l int) int64 {
	if s.p.Head != HeadAttention {
		return 0
	}
	t, a := int64(steps), int64(max(s.p.attnUnits(), 1))
	return 8 * (3*t + 2*int64(s.h*s.dirs) + 3*a + int64(l)*(t+2+a))
}

// DeepLIFTContext is DeepLIFT that ends soon after ctx is done (it looks
// every fraction of a millisecond of work, stop.go) with an error wrapping ctx.Err().
func (r *Runner) DeepLIFTContext(ctx context.Context, x, ref Input, class int, contrib []float64) (logits, refLogits []float64, err error) {
	return r.DeepLIFTChoose(ctx, x, ref, nil, class, contrib)
}

// DeepLIFT writes the DeepLIFT score of input feature (t, i) of x for
// class against the reference input ref (as long as x; the zero rows are
// the usual reference) to contrib[t*E+i] (T×E), by the rules of this
// file's comment, and returns the logits of x and of ref (owned by r,
// overwritten by the next call). The scores sum to
// logits[class] − refLogits[class] up to rounding.
func (r *Runner) DeepLIFT(x, ref Input, class int, contrib []float64) (logits, refLogits []float64, err error) {
	return r.DeepLIFTChoose(context.Background(), x, ref, nil, class, contrib)
}

// DeepLIFTChoose is DeepLIFTContext whose class, when choose is not nil,
// is choose(ŷ(x)), called once the logits of x are known (the predicted
// class without a pass of its own); its error ends the call.
func (r *Runner) DeepLIFTChoose(ctx context.Context, x, ref Input, choose func(logits []float64) (int, error), class int, contrib []float64) (logits, refLogits []float64, err error) {
	err = r.withStop(ctx, func() error {
		logits, refLogits, err = r.deepLIFT(x, ref, choose, class, contrib)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return logits, refLogits, nil
}

func (r *Runner) deepLIFT(x, ref Input, choose func([]float64) (int, error), class int, contrib []float64) (logits, refLogits []float64, err error) {
	if err := r.acquire(); err != nil {
		return nil, nil, err
	}
	defer r.release()
	if r.s.p.Kind == LayerGRU && !gruDeepLIFT {
		return nil, nil, errGRU("DeepLIFT")
	}
	if choose != nil {
		class = 0 // checked after the choice
	}
	if err := r.check(x); err != nil { // dense rows only
		return nil, nil, err
	}
	if err := r.checkOut(&x, class, contrib); err != nil {
		return nil, nil, err
	}
	d, err := r.deepLIFTInput(x, ref)
	if err != nil {
		return nil, nil, err
	}
	defer func() { d.x.stop, d.ref.stop = nil, nil }()
	if choose != nil {
		if class, err = choose(d.x.logitsBuf[:r.s.c]); err != nil {
			return nil, nil, err
		}
		if err := checkClass(class, r.s.c); err != nil {
			return nil, nil, err
		}
	}
	d.ref.forward(d.uref, x.Len(), 1)
	if err := d.scores(x, ref, class, contrib); err != nil {
		return nil, nil, err
	}
	return d.x.logitsBuf[:r.s.c], d.ref.logitsBuf[:r.s.c], nil
}

// deepLIFTInput checks the reference against x, computes both inputs'
// products and runs x's traced pass (the reference's is the caller's, after
// any choice of class); the caller resets the lanes' stop.
func (r *Runner) deepLIFTInput(x, ref Input) (*deepLIFTState, error) {
	if err := r.check(ref); err != nil {
		return nil, fmt.Errorf("cell: DeepLIFT reference: %w", err)
	}
	if ref.Len() != x.Len() {
		return nil, fmt.Errorf("cell: DeepLIFT reference has %d steps, the input %d", ref.Len(), x.Len())
	}
	s, steps := r.s, x.Len()
	d := r.deepLIFTBuffers(steps)
	d.x.stop, d.ref.stop = r.pass, r.pass
	n := s.dirs * steps * 4 * s.h
	d.ux, d.uref = d.ux[:n], d.uref[:n]
	s.inputProducts(nil, d.ux, x.dense, steps, r.pass)
	s.inputProducts(nil, d.uref, ref.dense, steps, r.pass)
	d.x.scale[0], d.x.occluded[0] = x.scale, -1
	d.ref.scale[0], d.ref.occluded[0] = ref.scale, -1
	d.x.forward(d.ux, steps, 1)
	return d, nil
}

// scores runs the multiplier pass of class over the traces of the last
// passes of x and ref and writes the scores (x − x₀)·m to contrib (T×E).
func (d *deepLIFTState) scores(x, ref Input, class int, contrib []float64) error {
	steps, e := x.Len(), d.x.s.in
	mx := d.mx[:steps*e]
	clear(mx)
	d.backward(steps, class, mx)
	for k, m := range mx {
		dx := x.feature(x.dense[k]) - ref.feature(ref.dense[k])
		contrib[k] = float64(dx * m)
	}
	for k, v := range contrib {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("cell: the DeepLIFT score of input value %d is %v", k, v)
		}
	}
	return nil
}

// deepLIFTBuffers returns r's DeepLIFT buffers, grown to T steps.
func (r *Runner) deepLIFTBuffers(steps int) *deepLIFTState {
	s := r.s
	d := r.dl
	if d == nil || !d.x.fits(1, steps, false) {
		d = &deepLIFTState{x: newLanes(s, 1, steps, false), ref: newLanes(s, 1, steps, false)}
		for _, l := range []*lanes{d.x, d.ref} {
			for ci := range l.cells {
				l.cells[ci].pre = make([]float64, steps*4*s.h)
			}
		}
		n := s.dirs * steps * 4 * s.h
		d.ux, d.uref = make([]float64, n), make([]float64, n)
		d.mx = make([]float64, steps*s.in)
		d.ma = make([]float64, s.p.Units)
		r.dl = d
	}
	return d
}

// backward propagates the multipliers of ŷ_class from the logits to layer
// 0's input, adding them to mx (T×E), over the traces of the last passes.
func (d *deepLIFTState) backward(steps, class int, mx []float64) {
	x, x0 := d.x, d.ref
	s := x.s
	h, g, dirs, e := s.h, 4*s.h, s.dirs, s.in
	top := s.p.Layers - 1
	mv := d.headMultipliers(class)
	for k := top; k >= 0; k-- {
		var above, below []float64
		if k < top {
			above = x.dOut[k&1][:steps*h*dirs]
		} else if s.p.Head.dense() {
			above = x.dOut[k&1][:steps*h*dirs]
			d.headSequence(mv, above, steps)
		}
		if k > 0 {
			below = x.dOut[(k-1)&1][:steps*h*dirs]
			clear(below)
		}
		for dir := range dirs {
			ci := k*dirs + dir
			cl, tr, tr0 := &s.cells[ci], &x.cells[ci], &x0.cells[ci]
			mh, mc, mcPrev, mz := x.dh[:h], x.dc[:h], x.dcPrev[:h], x.dz[:g]
			clear(mh)
			clear(mc)
			if k == top {
				x.headSeed(mv, mh, dir, 1)
			}
			work := s.stepWork(ci, 1)
			for i := steps - 1; i >= 0; i-- {
				if x.stop.spend(work) {
					return
				}
				t := order(cl.reverse, i, steps)
				if above != nil {
					for j, v := range above[(t*dirs+dir)*h : (t*dirs+dir+1)*h] {
						mh[j] += v
					}
				}
				cPrev, cPrev0 := x.zero[:h], x0.zero[:h]
				if i > 0 {
					tp := order(cl.reverse, i-1, steps)
					cPrev, cPrev0 = tr.c[tp*h:(tp+1)*h], tr0.c[tp*h:(tp+1)*h]
				}
				if s.p.Kind == LayerGRU {
					gruMultipliersLanes(mz, mcPrev, mh, mc, stepOf(tr, t, h), stepOf(tr0, t, h), cPrev, cPrev0, 1)
				} else {
					gateMultipliers(mz, mcPrev, mh, mc, stepOf(tr, t, h), stepOf(tr0, t, h), cPrev, cPrev0)
				}
				if k > 0 {
					mulAddLanes(below[t*dirs*h:(t+1)*dirs*h], cl.wihT, cl.wih, s.nonzero, cl.in, g, g, 0, mz, 1)
				} else {
					kernel.AxpyRows(mx[t*e:(t+1)*e], cl.wih, e, mz)
				}
				if i > 0 {
					clear(mh)
					mulAddLanes(mh, cl.whhT, cl.whh, s.nonzero, h, g, g, 0, mz, 1)
				}
				mc, mcPrev = mcPrev, mc
			}
		}
	}
}

// cellStep is one step of a one-lane trace: pre-activations, activations,
// c and tanh(c).
type cellStep struct{ pre, act, c, tc []float64 }

func stepOf(tr *cellTrace, t, h int) cellStep {
	g := 4 * h
	return cellStep{pre: tr.pre[t*g : (t+1)*g], act: tr.z[t*g : (t+1)*g], c: tr.c[t*h : (t+1)*h], tc: tr.tc[t*h : (t+1)*h]}
}

// gateMultipliers is one LSTM step backward for the multipliers: given
// those of h_t (mh) and of c_t through c_{t+1} (mc), it writes those of the
// pre-activations z_t (mz, 4H) and of c_{t−1} (mcPrev), x being the step's
// trace on the input, x0 on the reference. Every product is rounded on its
// own (float64(a*b)): the same bits on every CPU, fused or not.
func gateMultipliers(mz, mcPrev, mh, mc []float64, x, x0 cellStep, cPrev, cPrev0 []float64) {
	h := len(mh)
	for j := range h {
		i, f, g, o := x.act[j], x.act[h+j], x.act[2*h+j], x.act[3*h+j]
		i0, f0, g0, o0 := x0.act[j], x0.act[h+j], x0.act[2*h+j], x0.act[3*h+j]
		// h = o⊙tanh(c): the product split.
		mo := float64(mh[j] * shapley(x0.tc[j], x.tc[j]))
		mtc := float64(mh[j] * shapley(o0, o))
		// tanh(c): Rescale; c's multiplier adds the one through c_{t+1}.
		m := mc[j] + float64(mtc*rescale(x.c[j], x0.c[j], x.tc[j], x0.tc[j], tanhPrime))
		// c = f⊙c_{t−1} + i⊙g: two product splits.
		mf := float64(m * shapley(cPrev0[j], cPrev[j]))
		mcPrev[j] = float64(m * shapley(f0, f))
		mi := float64(m * shapley(g0, g))
		mg := float64(m * shapley(i0, i))
		// The gates: Rescale.
		mz[j] = float64(mi * rescale(x.pre[j], x0.pre[j], i, i0, sigmoidPrime))
		mz[h+j] = float64(mf * rescale(x.pre[h+j], x0.pre[h+j], f, f0, sigmoidPrime))
		mz[2*h+j] = float64(mg * rescale(x.pre[2*h+j], x0.pre[2*h+j], g, g0, tanhPrime))
		mz[3*h+j] = float64(mo * rescale(x.pre[3*h+j], x0.pre[3*h+j], o, o0, sigmoidPrime))
	}
}

// shapley is the multiplier one factor of a product a·b gets: the other
// factor's b₀ + Δb/2.
func shapley(b0, b float64) float64 { return b0 + (b-b0)/2 }

// rescaleEps is the |z − z₀| below which Rescale takes the derivative at
// the midpoint instead of the difference quotient.
const rescaleEps = 1e-6

// rescale is the Rescale multiplier of y = f(z): (f(z) − f(z₀))/(z − z₀),
// or f′((z + z₀)/2) where |z − z₀| < 1e-6; fz and fz0 are the traced
// values.
func rescale(z, z0, fz, fz0 float64, prime func(float64) float64) float64 {
	dz := z - z0
	if math.Abs(dz) < rescaleEps {
		return prime((z + z0) / 2)
	}
	return (fz - fz0) / dz
}

func sigmoidPrime(z float64) float64 {
	s := kernel.Sigmoid(z)
	return float64(s * (1 - s))
}

func tanhPrime(z float64) float64 {
	t := kernel.Tanh(z)
	return 1 - float64(t*t)
}

func reluPrime(z float64) float64 {
	if z > 0 {
		return 1
	}
	return 0
}

// headMultipliers writes the multipliers of the head's output v for class
// (D values, in x's r.dv) and returns them: W_y's row c, or through a
// hidden layer W_1ᵀ·(Rescale(a)⊙W_y[c]).
func (d *deepLIFTState) headMultipliers(class int) []float64 {
	x, x0 := d.x, d.ref
	s := x.s
	dd := s.h * s.dirs
	mv := x.dv[:dd]
	if s.p.Act == ActNone {
		copy(mv, s.wy[class*dd:(class+1)*dd])
		return mv
	}
	units := s.p.Units
	prime := tanhPrime
	if s.p.Act == ActReLU {
		prime = reluPrime
	}
	ma := d.ma[:units]
	for m, w := range s.wy[class*units : (class+1)*units] {
		ma[m] = float64(w * rescale(x.a[m], x0.a[m], x.u[m], x0.u[m], prime))
	}
	clear(mv)
	mulAddLanes(mv, s.w1T, s.w1, s.nonzero, dd, units, units, 0, ma, 1)
	return mv
}

// headSequence writes to seq (T×dirs×H) the multipliers of the top layer's
// outputs that a dense head sends them: as gradients for last and mean,
// by the split of max pooling for max (see the file's comment).
func (d *deepLIFTState) headSequence(mv, seq []float64, steps int) {
	x, x0 := d.x, d.ref
	s := x.s
	if s.p.Head == HeadAttention {
		d.attnSequence(mv, seq, steps, 1)
		return
	}
	if s.p.Head != HeadMax {
		x.headSequence(mv, seq, steps, 1)
		return
	}
	h, dirs := s.h, s.dirs
	clear(seq)
	for dir := range dirs {
		hs, hs0 := x.topTrace(dir).hs, x0.topTrace(dir).hs
		for j := range h {
			u := dir*h + j
			a, b := x.argmax[u], x0.argmax[u]
			if a == b {
				seq[(a*dirs+dir)*h+j] = mv[u]
				continue
			}
			gap := hs[a*h+j] - hs[b*h+j]    // ≥ 0: a maximises h
			gap0 := hs0[b*h+j] - hs0[a*h+j] // ≥ 0: b maximises h₀
			lambda := gap / (gap + gap0)    // gap + gap0 > 0 as a ≠ b
			seq[(a*dirs+dir)*h+j] = float64(lambda * mv[u])
			seq[(b*dirs+dir)*h+j] = float64((1 - lambda) * mv[u])
		}
	}
}

package cell

import (
	"fmt"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// The attention head (HeadAttention): attention pooling over the top
// layer's outputs out_t (D = H·dirs values, both directions concatenated,
// forward first), PyTorch's
//
//	e = score(output)            # B×T×1
//	α = torch.softmax(e, dim=1)
//	v = (α * output).sum(dim=1)
//
// with score one Linear(D, 1) or Linear(D, A) → tanh → Linear(A, 1), each
// with or without bias.
//
// Forward. e_t is computed step by step in the order t = 0…T−1 and the
// softmax and the pooled sum run online: m the running maximum of e, S =
// Σ exp(e_t − m) and U = Σ exp(e_t − m)·out_t, both rescaled by exp(m −
// e_t) when e_t exceeds m; v = U/S and α_t = exp(e_t − m)/S with the final
// m. One pass over the steps, so the checkpointed passes (which recompute
// the top layer's segments in the same order) give the same bits as the
// whole-trace ones. e_t and α_t are kept per lane (T values each).
//
// Backward. With g = ∂ŷ_c/∂v: ∂ŷ_c/∂out_t = α_t·g + δ_t·∂e_t/∂out_t, δ_t =
// α_t·(g·out_t − g·v) (the softmax's Jacobian), ∂e_t/∂out_t = w (one
// Linear layer) or W_1ᵀ·(w_2 ⊙ (1 − tanh²(W_1·out_t + b_1))), the hidden
// layer recomputed from out_t.
//
// LRP. The attention weights are constants (as the gates are in Arras et
// al.'s rule): v_j = Σ_t α_t·out_{t,j} is a linear map of the T·D outputs
// without bias, and the ε-rule gives out_{t,j} the relevance (α_t·out_{t,j}
// + bf·ε·sign(v_j)/T)·R_j/(v_j + ε·sign(v_j)); no relevance enters the
// scoring layers. With bf = 1 it conserves relevance.
//
// DeepLIFT: head_attention_deeplift.go. Contextual decomposition is
// not defined for it and is refused.

// Attention is the scoring layers of an attention head. With Units = 0 it
// is one Linear(D, 1): W1 is 1×D, B1 one value or nil (no bias). With Units
// = A > 0 it is Linear(D, A) → tanh → Linear(A, 1): W1 is A×D, B1 A values
// or nil, W2 1×A, B2 one value or nil. D = H·dirs.
type Attention struct {
	Units  int
	W1, B1 []float64
	W2, B2 []float64
}

// attnHead is an Attention packed: rows of W1 (A×D; A = 1 for one layer).
type attnHead struct {
	units int // 0: one Linear layer
	a     int // rows of w1: max(units, 1)
	w1    []float64
	b1    []float64 // a values (zeros without bias)
	w2    []float64 // units values
	b2    float64
}

// checkAttention validates p's attention weights (d = H·dirs): required
// for HeadAttention, checked when present for any head.
func checkAttention(p Params, d int) error {
	at := p.Attention
	if at == nil {
		if p.Head == HeadAttention {
			return fmt.Errorf("cell: the attention head needs its scoring layers (Params.Attention)")
		}
		return nil
	}
	if at.Units < 0 {
		return fmt.Errorf("cell: attention units %d < 0", at.Units)
	}
	if at.Units == 0 {
		if at.W2 != nil || at.B2 != nil {
			return fmt.Errorf("cell: an attention score of one Linear layer (Units=0) takes no W2, B2")
		}
		if err := checkWeights("attention weight", at.W1, d, fmt.Sprintf("1×(H·directions) = 1×%d", d)); err != nil {
			return err
		}
		if at.B1 != nil {
			return checkWeights("attention bias", at.B1, 1, "1")
		}
		return nil
	}
	if err := checkWeights("attention weight", at.W1, at.Units*d, fmt.Sprintf("A×(H·directions) = %d×%d", at.Units, d)); err != nil {
		return err
	}
	if at.B1 != nil {
		if err := checkWeights("attention bias", at.B1, at.Units, fmt.Sprintf("A = %d", at.Units)); err != nil {
			return err
		}
	}
	if err := checkWeights("attention second weight", at.W2, at.Units, fmt.Sprintf("1×A = 1×%d", at.Units)); err != nil {
		return err
	}
	if at.B2 != nil {
		return checkWeights("attention second bias", at.B2, 1, "1")
	}
	return nil
}

// setAttention packs p's checked attention weights into s.
func (s *Model) setAttention(p Params) {
	at := p.Attention
	if at == nil {
		return
	}
	c := &Attention{Units: at.Units, W1: clone(at.W1), B1: clone(at.B1), W2: clone(at.W2), B2: clone(at.B2)}
	s.p.Attention = c
	a := max(at.Units, 1)
	h := &attnHead{units: at.Units, a: a, w1: clone(at.W1), b1: make([]float64, a), w2: clone(at.W2)}
	copy(h.b1, at.B1)
	for i := range h.b1 {
		h.b1[i] += 0
	}
	if at.B2 != nil {
		h.b2 = at.B2[0] + 0
	}
	s.att = h
}

// attnWeights is the number of the attention layers' weights.
func (p *Params) attnWeights() int {
	if p.Attention == nil {
		return 0
	}
	a := p.Attention
	return len(a.W1) + len(a.B1) + len(a.W2) + len(a.B2)
}

// Attention returns a copy of the model's attention scoring layers (nil
// if it has none).
func (s *Model) Attention() *Attention {
	a := s.p.Attention
	if a == nil {
		return nil
	}
	return &Attention{Units: a.Units, W1: clone(a.W1), B1: clone(a.B1), W2: clone(a.W2), B2: clone(a.B2)}
}

// attnStepWords is the float64s per lane the attention head keeps for T
// steps (e and α).
func (s *Model) attnStepWords(steps int) int64 {
	if s.p.Head != HeadAttention {
		return 0
	}
	return 2*int64(steps) + 4 + 2*int64(max(s.p.attnUnits(), 1))
}

func (p *Params) attnUnits() int {
	if p.Attention == nil {
		return 0
	}
	return p.Attention.Units
}

// attnLanes is the attention head's per-lane state.
type attnLanes struct {
	e, alpha []float64 // T×l
	m, sum   []float64 // l: running maximum, Σ exp(e − m)
	hid      []float64 // A×l: the hidden layer's tanh (or the score itself)
	g, de    []float64 // l: g·v and δ_t
	es       []float64 // l: scratch
}

// attn returns r's attention state for T steps, grown if needed.
func (r *lanes) attn(steps int) *attnLanes {
	l := r.l
	if r.att == nil {
		a := max(r.s.p.attnUnits(), 1)
		r.att = &attnLanes{m: make([]float64, l), sum: make([]float64, l), hid: make([]float64, a*l), g: make([]float64, l), de: make([]float64, l), es: make([]float64, l)}
	}
	if len(r.att.e) < steps*l {
		r.att.e, r.att.alpha = make([]float64, steps*l), make([]float64, steps*l)
	}
	return r.att
}

// attnScore writes e = score(out) of l lanes to e (l values); out is
// cat(seg0, seg1), each H×l. The hidden layer's tanh is left in at.hid.
func (r *lanes) attnScore(at *attnLanes, seg0, seg1, e []float64, l int) {
	s := r.s
	ah, h := s.att, s.h
	d := h * s.dirs
	hid := at.hid[:ah.a*l]
	for m := range ah.a {
		row := ah.w1[m*d : (m+1)*d]
		dst := hid[m*l : (m+1)*l]
		for q := range dst {
			dst[q] = ah.b1[m]
		}
		for i, w := range row {
			src := seg0
			k := i
			if i >= h {
				src, k = seg1, i-h
			}
			x := src[k*l : (k+1)*l]
			for q := range dst {
				dst[q] += float64(w * x[q])
			}
		}
	}
	if ah.units == 0 {
		copy(e, hid[:l])
		return
	}
	for q := range l {
		e[q] = ah.b2
	}
	for m, w := range ah.w2 {
		src := hid[m*l : (m+1)*l]
		for q := range src {
			src[q] = kernel.Tanh(src[q])
			e[q] += float64(w * src[q])
		}
	}
}

// attnOut computes the attention head's output v for l lanes over T steps
// into r.v; out(t) returns the top layer's output segments at step t.
func (r *lanes) attnOut(steps, l int, out func(t int) (seg0, seg1 []float64)) (seg [2][]float64) {
	s := r.s
	hl, dirs := s.h*l, s.dirs
	at := r.attn(steps)
	v := r.v[:dirs*hl]
	m, sum := at.m[:l], at.sum[:l]
	for t := range steps {
		s0, s1 := out(t)
		e := at.e[t*l : (t+1)*l]
		r.attnScore(at, s0, s1, e, l)
		segs := [2][]float64{s0, s1}
		for q := range l {
			if t == 0 {
				m[q], sum[q] = e[q], 1
				for k := range dirs {
					for i := range s.h {
						v[k*hl+i*l+q] = segs[k][i*l+q]
					}
				}
				continue
			}
			if e[q] > m[q] {
				sc := kernel.Exp(m[q] - e[q])
				m[q] = e[q]
				sum[q] = float64(sum[q]*sc) + 1
				for k := range dirs {
					for i := range s.h {
						j := k*hl + i*l + q
						v[j] = float64(v[j]*sc) + segs[k][i*l+q]
					}
				}
				continue
			}
			w := kernel.Exp(e[q] - m[q])
			sum[q] += w
			for k := range dirs {
				for i := range s.h {
					j := k*hl + i*l + q
					v[j] += float64(w * segs[k][i*l+q])
				}
			}
		}
	}
	for k := range dirs {
		for i := range s.h {
			for q := range l {
				v[k*hl+i*l+q] /= sum[q]
			}
		}
	}
	for t := range steps {
		e, a := at.e[t*l:(t+1)*l], at.alpha[t*l:(t+1)*l]
		for q := range l {
			a[q] = kernel.Exp(e[q]-m[q]) / sum[q]
		}
	}
	for k := range dirs {
		seg[k] = v[k*hl : (k+1)*hl]
	}
	return seg
}

// attnOutTrace is attnOut on a whole trace.
func (r *lanes) attnOutTrace(steps, l int) [2][]float64 {
	s := r.s
	hl := s.h * l
	return r.attnOut(steps, l, func(t int) (a, b []float64) {
		th := r.hSlot(t)
		a = r.topTrace(0).hs[th*hl : (th+1)*hl]
		if s.dirs == 2 {
			b = r.topTrace(1).hs[th*hl : (th+1)*hl]
		}
		return a, b
	})
}

// attnOutCk is attnOut on checkpointed lanes: the top layer's segments
// recomputed in order.
func (r *lanes) attnOutCk(l int) [2][]float64 {
	s, ck := r.s, r.ck
	hl := s.h * l
	top := len(s.cells) - s.dirs
	return r.attnOut(ck.steps, l, func(t int) (a, b []float64) {
		sg := t / ck.seg
		for d := range s.dirs {
			r.ensure(top+d, sg, l)
		}
		j := r.hSlot(t - sg*ck.seg)
		a = r.cells[top].hs[j*hl : (j+1)*hl]
		if s.dirs == 2 {
			b = r.cells[top+1].hs[j*hl : (j+1)*hl]
		}
		return a, b
	})
}

// attnGV writes g·v per lane to at.g (dv the head's gradient, D×l).
func (r *lanes) attnGV(at *attnLanes, dv []float64, l int) {
	d := r.s.h * r.s.dirs
	g := at.g[:l]
	clear(g)
	for i := range d {
		for q := range l {
			g[q] += float64(dv[i*l+q] * r.v[i*l+q])
		}
	}
}

// attnSeqStep writes the gradient of the top layer's outputs at step t
// (dirs×H×l; seg0, seg1 the outputs there) to dst, given dv and at.g.
func (r *lanes) attnSeqStep(at *attnLanes, dv, dst, seg0, seg1 []float64, t, l int) {
	s := r.s
	ah, h := s.att, s.h
	d := h * s.dirs
	alpha := at.alpha[t*l : (t+1)*l]
	de := at.de[:l]
	clear(de)
	for i := range d {
		src, k := seg0, i
		if i >= h {
			src, k = seg1, i-h
		}
		for q := range l {
			de[q] += float64(dv[i*l+q] * src[k*l+q])
		}
	}
	for q := range l {
		de[q] = float64(alpha[q] * (de[q] - at.g[q]))
	}
	for i := range d {
		for q := range l {
			dst[i*l+q] = float64(alpha[q] * dv[i*l+q])
		}
	}
	// δ_t through the scoring layers: the hidden layer's ∂/∂a into at.hid.
	hid := at.hid[:ah.a*l]
	if ah.units == 0 {
		copy(hid, de)
	} else {
		r.attnScore(at, seg0, seg1, at.es[:l], l) // recompute tanh into at.hid
		for m, w := range ah.w2 {
			row := hid[m*l : (m+1)*l]
			for q, y := range row {
				row[q] = float64(float64(de[q]*w) * float64(1-float64(y*y)))
			}
		}
	}
	for m := range ah.a {
		row := ah.w1[m*d : (m+1)*d]
		gm := hid[m*l : (m+1)*l]
		for i, w := range row {
			for q := range l {
				dst[i*l+q] += float64(w * gm[q])
			}
		}
	}
}

// AttentionWeights writes the attention weights α_t of x (T values,
// summing to 1; they do not depend on the class) to alpha. It is an error
// for a model whose head is not HeadAttention.
func (r *Runner) AttentionWeights(x Input, alpha []float64) error {
	if r.s.p.Head != HeadAttention {
		return fmt.Errorf("cell: attention weights: the head is %v, not attention", r.s.p.Head)
	}
	if err := r.acquire(); err != nil {
		return err
	}
	defer r.release()
	if err := r.input(&x); err != nil {
		return err
	}
	steps := x.Len()
	if len(alpha) != steps {
		return fmt.Errorf("cell: attention weights buffer has %d elements, want T = %d", len(alpha), steps)
	}
	// The checkpointed lane of a long input computes α too (attnOutCk):
	// the weights cost T values beside the logits' memory.
	copy(alpha, r.forwardOne(x).attn(steps).alpha[:steps])
	return nil
}

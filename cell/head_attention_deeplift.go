package cell

import (
	"math"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// DeepLIFT through the attention head (HeadAttention): the rules of
// deeplift.go applied to e_t = score(out_t), α = softmax(e), v =
// Σ_t α_t·out_t, with Δ the change from the reference x₀ to the input x:
//
//   - v = Σ_t α_t·out_t: each product of two varying factors splits
//     symmetrically, out_t gets m_v·(α₀_t + Δα_t/2) and α_t gets
//     m_α_t = m_v·(out₀_t + Δout_t/2) (a dot product over the D units);
//   - α_t = exp(u_t), u_t = e_t − L, L = log Σ_s exp(e_s): Rescale at exp,
//     m_u_t = m_α_t·(α_t − α₀_t)/(u_t − u₀_t); L's change is split over the
//     e_s by Rescale at each exp(e_s) and at the log of their sum,
//     ΔL = Σ_s ρ_s·Δe_s, ρ_s = (L − L₀)/(S − S₀) · (exp(e_s) − exp(e₀_s))/
//     (e_s − e₀_s), S = Σ_s exp(e_s) (computed as exp(e_s − c) with c the
//     largest score of x and x₀, which cancels in ρ); so m_e_s = m_u_s −
//     ρ_s·Σ_t m_u_t, and Σ_t m_α_t·Δα_t = Σ_s m_e_s·Δe_s exactly;
//   - the score: Linear layers pass multipliers as gradients, the tanh of
//     a two-layer score takes Rescale.
//
// Each Rescale takes the derivative at the midpoint where |z − z₀| < 1e-6,
// as everywhere. Every rule is exact, so the scores still sum to
// ŷ_c(x) − ŷ_c(x₀) up to rounding. gen_attention.py is the reference.

// attnDeepLIFT is the attention head's DeepLIFT scratch.
type attnDeepLIFT struct {
	abar, ru, rho []float64 // T: α₀ + Δα/2, Rescale at exp(u), ρ
	mu            []float64 // T×l: m_u
	msum, me      []float64 // l: Σ_t m_u_t, m_e_t
	out, out0     []float64 // D: out_t of x and of x₀, then out₀ + Δout/2
	a, a0, ra     []float64 // A: the score's hidden pre-activations, Rescale at tanh
	ma            []float64 // A×l
}

func (d *deepLIFTState) attnBuffers(steps, l int) *attnDeepLIFT {
	s := d.x.s
	dd, a := s.h*s.dirs, max(s.p.attnUnits(), 1)
	b := d.att
	if b == nil || len(b.abar) < steps || len(b.msum) < l || len(b.mu) < steps*l {
		b = &attnDeepLIFT{abar: make([]float64, steps), ru: make([]float64, steps), rho: make([]float64, steps),
			mu: make([]float64, steps*l), msum: make([]float64, l), me: make([]float64, l),
			out: make([]float64, dd), out0: make([]float64, dd),
			a: make([]float64, a), a0: make([]float64, a), ra: make([]float64, a), ma: make([]float64, a*l)}
		d.att = b
	}
	return b
}

// attnOutRow copies the top layer's output at step t of a one-lane trace
// to dst (D values).
func (r *lanes) attnOutRow(t int, dst []float64) {
	s := r.s
	h := s.h
	th := r.hSlot(t)
	for dir := range s.dirs {
		copy(dst[dir*h:(dir+1)*h], r.topTrace(dir).hs[th*h:(th+1)*h])
	}
}

// attnPre writes the score's hidden pre-activations W_1·out + b_1 (A
// values; the score itself for one Linear layer) to dst.
func (s *Model) attnPre(out, dst []float64) {
	ah := s.att
	d := len(out)
	for m := range ah.a {
		v := ah.b1[m]
		for i, w := range ah.w1[m*d : (m+1)*d] {
			v += float64(w * out[i])
		}
		dst[m] = v
	}
}

// attnSequence writes to seq (T×D×l, the layout of dOut) the multipliers
// of the top layer's outputs that the attention head sends them, given
// those of v (mv, D×l), by the rules above. Each lane's multipliers are
// computed by the same operations whatever l is.
func (d *deepLIFTState) attnSequence(mv, seq []float64, steps, l int) {
	x, x0 := d.x, d.ref
	s := x.s
	ah := s.att
	dd := s.h * s.dirs
	at, at0 := x.attn(steps), x0.attn(steps)
	e, e0 := at.e[:steps], at0.e[:steps]
	alpha, alpha0 := at.alpha[:steps], at0.alpha[:steps]
	b := d.attnBuffers(steps, l)
	// The softmax's factors: ρ_s and Rescale at exp(u_t).
	c := math.Inf(-1)
	for t := range steps {
		c = max(c, e[t], e0[t])
	}
	sx, s0 := 0.0, 0.0
	for t := range steps {
		sx += kernel.Exp(e[t] - c)
		s0 += kernel.Exp(e0[t] - c)
	}
	lx, l0 := math.Log(sx), math.Log(s0)
	rlog := rescale(sx, s0, lx, l0, func(z float64) float64 { return 1 / z })
	expc := func(z float64) float64 { return kernel.Exp(z - c) }
	for t := range steps {
		b.rho[t] = float64(rlog * rescale(e[t], e0[t], kernel.Exp(e[t]-c), kernel.Exp(e0[t]-c), expc))
		b.ru[t] = rescale(e[t]-c-lx, e0[t]-c-l0, alpha[t], alpha0[t], kernel.Exp)
		b.abar[t] = shapley(alpha0[t], alpha[t])
	}
	// m_u_t = (m_v·(out₀_t + Δout_t/2))·Rescale, and their sum.
	msum := b.msum[:l]
	clear(msum)
	out, out0 := b.out, b.out0
	for t := range steps {
		x.attnOutRow(t, out)
		x0.attnOutRow(t, out0)
		mu := b.mu[t*l : (t+1)*l]
		clear(mu)
		for i := range dd {
			sh := shapley(out0[i], out[i])
			for q := range l {
				mu[q] += float64(mv[i*l+q] * sh)
			}
		}
		for q := range l {
			mu[q] = float64(mu[q] * b.ru[t])
			msum[q] += mu[q]
		}
	}
	me := b.me[:l]
	for t := range steps {
		for q := range l {
			me[q] = b.mu[t*l+q] - float64(b.rho[t]*msum[q])
		}
		dst := seq[t*dd*l : (t+1)*dd*l]
		for i := range dd {
			for q := range l {
				dst[i*l+q] = float64(mv[i*l+q] * b.abar[t])
			}
		}
		// through the score
		ma := b.ma[:ah.a*l]
		if ah.units == 0 {
			copy(ma, me)
		} else {
			x.attnOutRow(t, out)
			x0.attnOutRow(t, out0)
			s.attnPre(out, b.a)
			s.attnPre(out0, b.a0)
			for m, w := range ah.w2 {
				r := rescale(b.a[m], b.a0[m], kernel.Tanh(b.a[m]), kernel.Tanh(b.a0[m]), tanhPrime)
				for q := range l {
					ma[m*l+q] = float64(float64(me[q]*w) * r)
				}
			}
		}
		for m := range ah.a {
			for i, w := range ah.w1[m*dd : (m+1)*dd] {
				for q := range l {
					dst[i*l+q] += float64(w * ma[m*l+q])
				}
			}
		}
	}
}

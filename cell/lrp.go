package cell

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// DefaultEpsilon is the LRP stabilizer the paper uses.
const DefaultEpsilon = 0.001

// MaxEpsilon is the largest LRP stabilizer ε accepted: beyond it ε + |z|
// could overflow. Every check of ε (the engines, attrib, the -eps flag)
// uses it, so that a value one accepts no other refuses.
const MaxEpsilon = 1e300

// Relevance is the bookkeeping of one LRP pass besides the input relevances.
// With ε → 0, Output = Σ input relevances + Bias + Initial: the rest is what
// the stabilizer absorbed.
type Relevance struct {
	Output  float64 // ŷ_class, the relevance the pass started from
	Bias    float64 // the share of the biases of g, Σ_t Σ_j b_gj·q_j
	Initial float64 // the share of the initial state h⁽⁰⁾, c⁽⁰⁾ (0 for the zero state)
}

// LRP writes the ε-rule relevance of x_{t,i} for class to rel[t*D+i]: relevance
// starts as ŷ_class on that class; the decoder passes it to h⁽ᵀ⁾ with
// z = W_y h⁽ᵀ⁾ (its bias left out); the relevance of h⁽ᵗ⁾ passes unchanged to
// c⁽ᵗ⁾; c⁽ᵗ⁾ = f⊙c⁽ᵗ⁻¹⁾ + i⊙g splits it with denominator c⁽ᵗ⁾ ± ε; the gates
// take none; g sends its share to x⁽ᵗ⁾ and h⁽ᵗ⁻¹⁾ through W_gx and W_gh with
// denominator z_g ± ε (bias included). sign(0) = +1 throughout. A pass
// that would give a NaN or infinite relevance (with ε = 0, any zero
// denominator) returns an error instead.
func (n *Network) LRP(ws *Workspace, x Input, class int, eps float64, rel []float64) (Relevance, error) {
	if err := n.checkGradient(ws, x, class, rel); err != nil {
		return Relevance{}, err
	}
	if !(eps >= 0 && eps <= MaxEpsilon) {
		return Relevance{}, fmt.Errorf("cell: LRP epsilon %v must be in [0, %g]", eps, MaxEpsilon)
	}
	n.forward(ws, x)
	out := n.lrp(ws, x, class, eps, rel)
	if err := finiteRelevance(out, rel[:x.Len()*n.d], eps); err != nil {
		return Relevance{}, err
	}
	return out, nil
}

// LRPContext is LRP that ends soon after ctx is done (it looks every
// fraction of a millisecond of work, stop.go) with an error wrapping ctx.Err().
func (n *Network) LRPContext(ctx context.Context, ws *Workspace, x Input, class int, eps float64, rel []float64) (Relevance, error) {
	if ws == nil {
		return n.LRP(ws, x, class, eps, rel)
	}
	ws.stop = ws.stopBuf.start(ctx)
	defer func() { ws.stop = nil }()
	out, err := n.LRP(ws, x, class, eps, rel)
	if err := ws.stop.err(); err != nil {
		return Relevance{}, err
	}
	return out, err
}

// finiteRelevance returns an error when the pass produced a NaN or an
// infinity: with ε = 0 a zero denominator (a zero logit pre-activation, cell
// state or g pre-activation) divides by zero, and with ε > 0 an overflow may.
func finiteRelevance(out Relevance, rel []float64, eps float64) error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	where := ""
	switch {
	case bad(out.Output), bad(out.Bias), bad(out.Initial):
		where = "the bookkeeping (output, bias or initial share)"
	default:
		for k, v := range rel {
			if bad(v) {
				where = fmt.Sprintf("rel[%d]", k)
				break
			}
		}
	}
	if where == "" {
		return nil
	}
	if eps == 0 {
		return notFinite(fmt.Sprintf("cell: LRP with epsilon 0 gives a NaN or infinite relevance in %s: a denominator (z_c, c⁽ᵗ⁾ or z_g) is zero; use epsilon > 0", where))
	}
	return notFinite(fmt.Sprintf("cell: LRP with epsilon %v gives a NaN or infinite relevance in %s", eps, where))
}

// ErrNotFinite is what the errors of a pass whose result is NaN or
// infinite (LRP's relevances: a zero denominator with ε = 0, or an
// overflow) match with errors.Is, whatever their message, so that a
// caller can look for the cause (package attrib: a logit that overflowed).
var ErrNotFinite = errors.New("cell: a result is not finite")

// notFinite is an error with its own message that matches ErrNotFinite.
type notFinite string

func (e notFinite) Error() string        { return string(e) }
func (e notFinite) Is(target error) bool { return target == ErrNotFinite }

func (n *Network) lrp(ws *Workspace, x Input, class int, eps float64, rel []float64) Relevance {
	h, d, g, steps := n.h, n.d, n.gates, x.Len()
	out := Relevance{Output: ws.logits[class]}

	// The decoder: r_j = (w_cj·h_j)·ŷ_c/(z_c ± ε).
	rc, rcPrev, qg := ws.dh, ws.dcPrev, ws.dz[:h]
	_, hT := ws.state(steps)
	wc := n.p.Wy[class*h : (class+1)*h]
	s := out.Output / stabilize(ws.lin[class], eps)
	for j := range rc {
		rc[j] = float64(wc[j]*hT[j]) * s
	}

	wgx, wgh, bg := n.wx[2*h*d:3*h*d], n.wh[2*h*h:3*h*h], n.p.B[2*h:3*h]
	for t := steps - 1; t >= 0; t-- {
		if ws.stop.spend(n.stepWork()) {
			return out
		}
		cPrev, hPrev := ws.state(t)
		c, _ := ws.state(t + 1)
		kernel.LRPCell(rcPrev, qg, rc, ws.gates[t*g:(t+1)*g], ws.zg[t*h:(t+1)*h], c, cPrev, eps)

		// x⁽ᵗ⁾: r_i = x_i·Σ_j w_ji·q_j.
		rt := rel[t*d : (t+1)*d]
		clear(rt)
		kernel.LRPLinear(rt, ws.accD, ws.inputRow(x, t), wgx, d, qg)
		// h⁽ᵗ⁻¹⁾'s share joins what c⁽ᵗ⁻¹⁾ gets through the forget gate.
		copy(rc, rcPrev)
		kernel.LRPLinear(rc, ws.accH, hPrev, wgh, h, qg)
		for j, b := range bg {
			out.Bias += float64(b * qg[j])
		}
	}
	for _, r := range rc {
		out.Initial += r
	}
	return out
}

// stabilize is kernel.Stabilize: z + ε·sign(z) with sign(0) = +1.
func stabilize(z, eps float64) float64 { return kernel.Stabilize(z, eps) }

package cell

import (
	"errors"
	"fmt"
	"math"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// DefaultEpsilon is the LRP stabilizer the paper uses.
const DefaultEpsilon = 0.001

// MaxEpsilon is the largest LRP stabilizer ε accepted: beyond it ε + |z|
// could overflow. Every check of ε (the engine, attrib, the -eps flag)
// uses it, so that a value one accepts no other refuses.
const MaxEpsilon = 1e300

// LRPRule chooses the rules LRP follows where its published variants
// differ: the decoder's denominator, the bias factor, and what
// Relevance.Bias holds. It is a model's (Params.LRP): the white-box
// networks (package whitebox) carry LRPHao, every other model LRPArras.
type LRPRule int

const (
	// LRPArras is Arras et al.'s LSTM_bidi.lrp (the zero value): the
	// decoder's denominator is ŷ_c's pre-activation with its bias,
	// z_c = W_y·v + b_c; the bias factor is the caller's, in [0, 1]; and
	// Relevance.Bias is what neither the inputs nor the initial state got,
	// Output − Σ inputs − Initial.
	LRPArras LRPRule = iota
	// LRPHao is the rule of the paper the white-box networks come from
	// (Hao 2020, "Evaluating Attribution Methods using White-Box LSTMs"):
	// relevance starts as ŷ_c and the decoder passes it to h⁽ᵀ⁾ with the
	// denominator z_c = W_y·h⁽ᵀ⁾ ± ε, its bias left out; the bias factor
	// is 0 (a call with another is refused); and Relevance.Bias is the
	// biases' share of g, Σ_t Σ_j b_gj·q_j, q_j the relevance g_j passes on
	// per unit of pre-activation. Through the LSTM it is LRPArras's rule.
	// One layer, one direction, head hn and a single Linear classifier.
	LRPHao
)

// String returns the rule's name: arras or hao.
func (r LRPRule) String() string {
	switch r {
	case LRPArras:
		return "arras"
	case LRPHao:
		return "hao"
	}
	return fmt.Sprintf("LRPRule(%d)", int(r))
}

// Relevance is the bookkeeping of one LRP pass besides the input relevances.
// With ε → 0, Output = Σ input relevances + Bias + Initial: the rest is what
// the stabilizer absorbed.
type Relevance struct {
	Output  float64 // ŷ_class, the relevance the pass started from
	Bias    float64 // the biases' share (LRPRule says how it is counted)
	Initial float64 // the share of the initial state h⁽⁰⁾, c⁽⁰⁾ (0 for the zero state)
}

// finiteRelevance returns an error when an LRPHao pass produced a NaN or
// an infinity: with ε = 0 a zero denominator (a zero logit pre-activation,
// cell state or g pre-activation) divides by zero, and with ε > 0 an
// overflow may.
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

// stabilize is kernel.Stabilize: z + ε·sign(z) with sign(0) = +1.
func stabilize(z, eps float64) float64 { return kernel.Stabilize(z, eps) }

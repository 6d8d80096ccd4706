package attrib

import (
	"fmt"
	"strings"
)

// Quadrature names a rule for integrating over α ∈ [0,1].
//
// The rules are Captum's (captum/attr/_utils/approximation_methods.py, the
// integral approximations of its IntegratedGradients), so that scores can
// be compared with Captum's one for one. That includes RiemannTrapezoid's
// weights: 1/n, halved at both ends, whose sum is 1 − 1/n (the textbook
// rule would weight the n−1 intervals by 1/(n−1)). Two differences remain:
// Captum builds Riemann nodes with torch.linspace in the default dtype
// (float32 unless set to float64) and rejects n = 1 for every Riemann rule;
// here nodes are the correctly rounded float64 values and n = 1 is accepted
// wherever the rule is defined (all but RiemannTrapezoid, which needs both
// end points).
type Quadrature int

const (
	GaussLegendre    Quadrature = iota // default; Captum "gausslegendre"
	RiemannLeft                        // α_k = k/n, w_k = 1/n
	RiemannRight                       // α_k = (k+1)/n, w_k = 1/n
	RiemannMiddle                      // α_k = (k+1/2)/n, w_k = 1/n
	RiemannTrapezoid                   // α_k = k/(n−1), w_k = 1/n, halved at the ends (Captum's)
)

var quadratureNames = [...]string{
	GaussLegendre:    "gauss-legendre",
	RiemannLeft:      "riemann-left",
	RiemannRight:     "riemann-right",
	RiemannMiddle:    "riemann-middle",
	RiemannTrapezoid: "riemann-trapezoid",
}

// captumNames are Captum's spellings, accepted by ParseQuadrature so that
// method names can be carried over from Python unchanged.
var captumNames = [...]string{
	GaussLegendre:    "gausslegendre",
	RiemannLeft:      "riemann_left",
	RiemannRight:     "riemann_right",
	RiemannMiddle:    "riemann_middle",
	RiemannTrapezoid: "riemann_trapezoid",
}

// String returns the rule's name (gauss-legendre, riemann-left, …).
func (q Quadrature) String() string {
	if q >= 0 && int(q) < len(quadratureNames) {
		return quadratureNames[q]
	}
	return fmt.Sprintf("Quadrature(%d)", int(q))
}

// ParseQuadrature is the inverse of String. It also accepts Captum's names
// ("gausslegendre", "riemann_left", …).
func ParseQuadrature(s string) (Quadrature, error) {
	for q, name := range quadratureNames {
		if s == name || s == captumNames[q] {
			return Quadrature(q), nil
		}
	}
	return 0, fmt.Errorf("attrib: unknown quadrature %q (valid: %s)", s, strings.Join(quadratureNames[:], ", "))
}

// Rule writes n nodes α_k ∈ [0,1] and weights w_k (Σ w_k ≈ 1) into
// alphas[:n], weights[:n]; returns an error for n < 1, for an unknown rule,
// or when the slices are shorter than n (never panics).
//
// Nodes are in ascending order. Rule allocates nothing, and its output is a
// pure function of (q, n).
func Rule(q Quadrature, n int, alphas, weights []float64) error {
	if q < 0 || int(q) >= len(quadratureNames) {
		return fmt.Errorf("attrib: unknown quadrature %v", q)
	}
	if n < 1 {
		return fmt.Errorf("attrib: %v rule needs at least 1 point, got n = %d", q, n)
	}
	if len(alphas) < n || len(weights) < n {
		return fmt.Errorf("attrib: %v rule with n = %d needs slices of length ≥ %d, got %d alphas and %d weights",
			q, n, n, len(alphas), len(weights))
	}
	alphas, weights = alphas[:n], weights[:n]
	fn := float64(n)
	switch q {
	case GaussLegendre:
		gaussLegendre(n, alphas, weights)
	case RiemannLeft, RiemannRight, RiemannMiddle:
		// α_k = (2k + c)/(2n) with c = 0, 2, 1: one correctly rounded
		// division of exact integers (2k formed as an integer: no product
		// that could fuse with the sum).
		c := 0.0
		switch q {
		case RiemannRight:
			c = 2
		case RiemannMiddle:
			c = 1
		}
		for k := range alphas {
			alphas[k] = (float64(2*k) + c) / (2 * fn)
			weights[k] = 1 / fn
		}
	case RiemannTrapezoid:
		if n < 2 {
			return fmt.Errorf("attrib: %v rule needs at least 2 points (both end points), got n = %d", q, n)
		}
		h := 1 / fn
		for k := range alphas {
			alphas[k] = float64(k) / (fn - 1)
			weights[k] = h
		}
		weights[0], weights[n-1] = h/2, h/2
	}
	return nil
}

package faithfulness

import "math"

// KendallTauB returns Kendall's τ-b of x and y (equal lengths), values
// within rounding of each other counting as tied (see Tied):
// (n_c − n_d) / √((n_0 − n_1)(n_0 − n_2)), where n_c and n_d count the
// concordant and discordant pairs, n_0 = n(n−1)/2 and n_1, n_2 the pairs
// tied in x and in y. It is NaN when either is constant (or n < 2).
func KendallTauB(x, y []float64) float64 {
	var nc, nd, tx, ty, n0 float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			n0++
			a, b := compare(x[i], x[j]), compare(y[i], y[j])
			switch {
			case a == 0 && b == 0:
				tx++
				ty++
			case a == 0:
				tx++
			case b == 0:
				ty++
			case a == b:
				nc++
			default:
				nd++
			}
		}
	}
	den := math.Sqrt((n0 - tx) * (n0 - ty))
	if den == 0 {
		return math.NaN()
	}
	return (nc - nd) / den
}

// Tied reports a and b equal up to rounding: |a − b| ≤ 1e−9·max(|a|, |b|)
// + 1e−12. Metric values that are equal in exact arithmetic (two methods
// removing different tokens of the same kind, say) differ in their last
// bits; a tie decided by those bits would depend on the rounding.
func Tied(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b))+1e-12
}

// compare is the sign of a − b, 0 when Tied.
func compare(a, b float64) int {
	switch {
	case Tied(a, b):
		return 0
	case a > b:
		return 1
	}
	return -1
}

// Agreement counts, over pairs of methods on one input, how often a metric
// orders a pair as the ground truth does: pairs the ground truth ties are
// skipped, a pair the metric ties (Tied) counts one half.
type Agreement struct {
	Pairs int     // pairs the ground truth orders
	Score float64 // agreeing pairs (+½ per metric tie)
}

// Add counts the pairs of one input: truth and metric hold one value per
// method, both higher-is-better.
func (a *Agreement) Add(truth, metric []float64) {
	for i := range truth {
		for j := i + 1; j < len(truth); j++ {
			g := compare(truth[i], truth[j])
			if g == 0 {
				continue
			}
			a.Pairs++
			switch m := compare(metric[i], metric[j]); {
			case m == g:
				a.Score++
			case m == 0:
				a.Score += 0.5
			}
		}
	}
}

// Fraction is the agreeing fraction, NaN without pairs.
func (a Agreement) Fraction() float64 {
	if a.Pairs == 0 {
		return math.NaN()
	}
	return a.Score / float64(a.Pairs)
}

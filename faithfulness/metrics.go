package faithfulness

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Removal is how a token is taken out of the input.
type Removal int

const (
	// Delete removes the token: the sequence gets shorter.
	Delete Removal = iota
	// Zero replaces the token's one-hot row by the zero row (cell's symbol
	// −1): no symbol at all, the baseline of Occlusion and IG.
	Zero
)

// Removals lists both, in table order.
var removalList = []Removal{Delete, Zero}

// Removals returns the list above, a new slice each call.
func Removals() []Removal { return slices.Clone(removalList) }

func (r Removal) String() string {
	if r == Delete {
		return "del"
	}
	return "zero"
}

// Output gives f, the explained class's probability, on the input with the
// positions where keep[t] is false removed by r. keep has one entry per
// token; all false is allowed (for Delete, the empty input).
type Output func(keep []bool, r Removal) (float64, error)

// Bins are DeYoung et al.'s AOPC bins: 1, 5, 10, 20 and 50 % of the tokens.
var binList = []float64{0.01, 0.05, 0.10, 0.20, 0.50}

// Bins returns the list above, a new slice each call.
func Bins() []float64 { return slices.Clone(binList) }

// BinSize is the number of tokens a bin b of T tokens holds: ⌈b·T⌉, at least
// one and at most T.
func BinSize(b float64, t int) int {
	return min(max(int(math.Ceil(float64(b*float64(t))-1e-9)), 1), t)
}

// MostRelevantFirst returns the positions by decreasing score, the leftmost
// first among equal scores.
func MostRelevantFirst(scores []float64) []int {
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	return order
}

// LeastRelevantFirst returns the positions by increasing score, the
// leftmost first among equal scores.
func LeastRelevantFirst(scores []float64) []int {
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[a], scores[b]) })
	return order
}

func checkScores(scores []float64) error {
	if len(scores) == 0 {
		return errors.New("faithfulness: no scores")
	}
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Errorf("faithfulness: score %d is %v", i+1, s)
		}
	}
	return nil
}

// AOPC returns DeYoung et al.'s comprehensiveness (sufficient = false) or
// sufficiency (sufficient = true) over Bins: the mean over the bins b of
// f(x) − f(x without its ⌈b·T⌉ most relevant tokens), or of f(x) − f(x with
// only them kept).
func AOPC(scores []float64, f Output, r Removal, sufficient bool) (float64, error) {
	if err := checkScores(scores); err != nil {
		return 0, err
	}
	t := len(scores)
	keep := make([]bool, t)
	for i := range keep {
		keep[i] = true
	}
	full, err := f(keep, r)
	if err != nil {
		return 0, err
	}
	order := MostRelevantFirst(scores)
	sum := 0.0
	for _, b := range binList {
		k := BinSize(b, t)
		for i := range keep {
			keep[i] = !sufficient
		}
		for _, p := range order[:k] {
			keep[p] = sufficient
		}
		v, err := f(keep, r)
		if err != nil {
			return 0, err
		}
		sum += full - v
	}
	return sum / float64(len(binList)), nil
}

// Curve returns the normalised area under a perturbation curve: the points
// p_k = f(x after k steps), k = 0…T, at abscissae k/T, integrated by the
// trapezoid rule, (1/T)·Σ_{k=1..T} (p_{k−1} + p_k)/2. Deletion starts from
// x and removes the tokens in order; insertion starts with every token
// removed and puts them back in order.
func Curve(order []int, f Output, r Removal, insertion bool) (float64, error) {
	t := len(order)
	if t == 0 {
		return 0, errors.New("faithfulness: empty order")
	}
	keep := make([]bool, t)
	for i := range keep {
		keep[i] = !insertion
	}
	prev, err := f(keep, r)
	if err != nil {
		return 0, err
	}
	area := 0.0
	for _, p := range order {
		if p < 0 || p >= t || keep[p] == insertion {
			return 0, fmt.Errorf("faithfulness: order is not a permutation of 0..%d", t-1)
		}
		keep[p] = insertion
		v, err := f(keep, r)
		if err != nil {
			return 0, err
		}
		area += (prev + v) / 2
		prev = v
	}
	return area / float64(t), nil
}

// Infidelity is Yeh et al.'s infidelity with the optimal scale, for
// perturbations that zero the rows of a token subset S: with a_j = Σ_{t∈S_j}
// R_t and d_j = f(x) − f(x with S_j zeroed), the minimum over β of
// (1/N)·Σ_j (β·a_j − d_j)², which is (1/N)·(Σd² − (Σad)²/Σa²) (β = 0 when
// every a_j is 0).
func Infidelity(scores []float64, f Output, subsets [][]bool) (float64, error) {
	if err := checkScores(scores); err != nil {
		return 0, err
	}
	if len(subsets) == 0 {
		return 0, errors.New("faithfulness: no perturbations")
	}
	t := len(scores)
	keep := make([]bool, t)
	for i := range keep {
		keep[i] = true
	}
	full, err := f(keep, Zero)
	if err != nil {
		return 0, err
	}
	var sad, saa, sdd float64
	for j, s := range subsets {
		if len(s) != t {
			return 0, fmt.Errorf("faithfulness: perturbation %d has %d positions for %d tokens", j+1, len(s), t)
		}
		a := 0.0
		for i, in := range s {
			keep[i] = !in
			if in {
				a += scores[i]
			}
		}
		v, err := f(keep, Zero)
		if err != nil {
			return 0, err
		}
		d := full - v
		// Products converted explicitly: no fused multiply-add, the same
		// bits on every architecture.
		sad += float64(a * d)
		saa += float64(a * a)
		sdd += float64(d * d)
	}
	n := float64(len(subsets))
	if saa == 0 {
		return sdd / n, nil
	}
	return max(sdd-float64(sad*sad)/saa, 0) / n, nil
}

// MaxSensitivity is the max-sensitivity of Yeh et al. as Captum computes
// it: max_j ‖R(x+δ_j) − R(x)‖₂ / ‖R(x)‖₂ over the perturbed inputs' scores
// (divided by 1 instead when ‖R(x)‖₂ = 0).
func MaxSensitivity(scores []float64, perturbed [][]float64) (float64, error) {
	if err := checkScores(scores); err != nil {
		return 0, err
	}
	if len(perturbed) == 0 {
		return 0, errors.New("faithfulness: no perturbed scores")
	}
	norm := math.Sqrt(dot(scores, scores))
	if norm == 0 {
		norm = 1
	}
	worst := 0.0
	for j, p := range perturbed {
		if len(p) != len(scores) {
			return 0, fmt.Errorf("faithfulness: perturbed scores %d have %d values for %d tokens", j+1, len(p), len(scores))
		}
		d := 0.0
		for i := range p {
			e := p[i] - scores[i]
			d += float64(e * e)
		}
		worst = max(worst, math.Sqrt(d)/norm)
	}
	return worst, nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i] * b[i])
	}
	return s
}

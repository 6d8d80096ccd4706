package evaluate

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/whitebox-lstm/whitebox/ablation"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// Threshold is the |score| above which a score counts as nonzero: the
// paper's blank threshold.
const Threshold = 1e-5

// SpreadTolerance is the largest coefficient of variation of |score| that
// meets the counting task's "roughly the same magnitude".
const SpreadTolerance = 0.1

// The criteria, by network: each call returns a new slice.
func CountingCriteria() []string { return []string{"sign", "spread"} }
func SPCriteria() []string {
	return []string{"precision", "recall", "pointing", "ablation", "ablation-optimal"}
}
func BracketCriteria() []string { return []string{"last-unclosed"} }

// spCriteria is the number of SPCriteria.
const spCriteria = 5

// Value is one criterion on one explanation.
type Value struct {
	Applies bool    // the criterion applies to this input and class
	Defined bool    // Value is defined (a precision of nothing is not)
	Value   float64 // the measurement (0 when not defined)
	Met     bool    // the explanation meets the expectation
}

// Evaluator scores explanations of one white-box network. It is immutable
// and safe for concurrent use.
type Evaluator struct {
	net      *whitebox.Net
	criteria []string
	stop     ablation.Stop
}

// New returns the Evaluator of a white-box network (whitebox.New). A nil
// network is an error.
func New(net *whitebox.Net) (*Evaluator, error) {
	if net == nil || net.Task == nil {
		return nil, errors.New("evaluate: nil network")
	}
	e := &Evaluator{net: net}
	switch net.Name {
	case "counting":
		e.criteria = CountingCriteria()
	case "sp-counter", "sp-fsa":
		e.criteria = SPCriteria()
		e.stop = ablation.Stop{DFA: whitebox.SPAutomaton(), Class: 0}
	case "bracket":
		e.criteria = BracketCriteria()
	default:
		return nil, fmt.Errorf("evaluate: no ground truth for network %q", net.Name)
	}
	return e, nil
}

// Net returns the network being evaluated.
func (e *Evaluator) Net() *whitebox.Net {
	if e == nil {
		return nil
	}
	return e.net
}

// Criteria returns the names of the criteria, in the order of Score's
// values.
func (e *Evaluator) Criteria() []string {
	if e == nil {
		return nil
	}
	return slices.Clone(e.criteria)
}

// Score judges the explanation scores of the encoded input symbols for the
// explained class (an index into the task's classes). It returns one Value
// per criterion. An Evaluator not made by New, a length mismatch, an
// empty input, a class or symbol out of range, a string outside the task's
// domain and a NaN or infinite score are errors.
func (e *Evaluator) Score(symbols []int, class int, scores []float64) ([]Value, error) {
	if e == nil || e.net == nil {
		return nil, errors.New("evaluate: Evaluator not made by New")
	}
	if len(symbols) == 0 {
		return nil, whitebox.ErrEmptyInput
	}
	if len(scores) != len(symbols) {
		return nil, fmt.Errorf("evaluate: %d scores for %d symbols", len(scores), len(symbols))
	}
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("evaluate: score %d is %v", i+1, s)
		}
	}
	if class < 0 || class >= len(e.net.Task.Classes) {
		return nil, fmt.Errorf("evaluate: class %d out of range 0..%d", class, len(e.net.Task.Classes)-1)
	}
	label, err := e.net.Task.LabelSymbols(symbols)
	if err != nil {
		return nil, err
	}
	switch e.net.Name {
	case "counting":
		return counting(symbols, class, scores), nil
	case "bracket":
		return bracket(symbols, label, class, scores), nil
	}
	if label != 1 || class != 1 {
		return make([]Value, spCriteria), nil
	}
	return e.sp(symbols, scores)
}

func defined(v float64, met bool) Value {
	return Value{Applies: true, Defined: true, Value: v, Met: met}
}

func counting(symbols []int, class int, scores []float64) []Value {
	want := -1.0 // the sign of an a
	if class == 1 {
		want = 1
	}
	agree := 0
	top := 0.0
	for i, k := range symbols {
		sign := want
		if k == 1 {
			sign = -want
		}
		if s := scores[i]; math.Abs(s) > Threshold && math.Signbit(s) == (sign < 0) {
			agree++
		}
		top = max(top, math.Abs(scores[i]))
	}
	// The coefficient of variation of |s|/top, which is that of |s|
	// without overflow.
	n := float64(len(symbols))
	var sum, sum2 float64
	if top > 0 {
		for _, s := range scores {
			sum += math.Abs(s) / top
		}
	}
	mean := sum / n
	if top > 0 {
		for _, s := range scores {
			d := math.Abs(s)/top - mean
			sum2 += d * d
		}
	}
	spread := Value{Applies: true}
	if mean*top > Threshold {
		cv := math.Sqrt(sum2/n) / mean
		spread = defined(cv, cv <= SpreadTolerance)
	}
	return []Value{defined(float64(agree)/n, agree == len(symbols)), spread}
}

func bracket(symbols []int, label, class int, scores []float64) []Value {
	last := LastUnclosed(symbols)
	if last < 0 || class != label {
		return []Value{{}}
	}
	top := math.Abs(scores[last])
	hit := top > Threshold
	for i, s := range scores {
		if i != last && math.Abs(s) >= top {
			hit = false
		}
	}
	v := 0.0
	if hit {
		v = 1
	}
	return []Value{defined(v, hit)}
}

func (e *Evaluator) sp(symbols []int, scores []float64) ([]Value, error) {
	g := SPPositions(symbols)
	var nz, hit, ng int
	top := 0.0
	for i, s := range scores {
		a := math.Abs(s)
		top = max(top, a)
		if g[i] {
			ng++
		}
		if a > Threshold {
			nz++
			if g[i] {
				hit++
			}
		}
	}
	out := make([]Value, 0, spCriteria)
	if nz == 0 {
		out = append(out, Value{Applies: true})
	} else {
		out = append(out, defined(float64(hit)/float64(nz), hit == nz))
	}
	out = append(out, defined(float64(hit)/float64(ng), hit == ng))
	point := top > Threshold
	for i, s := range scores {
		if math.Abs(s) == top && !g[i] {
			point = false
		}
	}
	pv := 0.0
	if point {
		pv = 1
	}
	out = append(out, defined(pv, point))
	deleted, err := OneShotAblation(e.stop, symbols, scores)
	if err != nil {
		return nil, err
	}
	best, err := ablation.Optimal(e.stop, symbols)
	if err != nil {
		return nil, err
	}
	n := float64(len(symbols))
	out = append(out, defined(100*float64(deleted)/n, deleted == best), defined(100*float64(best)/n, true))
	return out, nil
}

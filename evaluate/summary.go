package evaluate

import (
	"fmt"
	"math"
)

// Summary is one criterion over many explanations.
type Summary struct {
	Criterion  string  `json:"criterion"`
	Inputs     int     `json:"inputs"`     // explanations seen
	Applicable int     `json:"applicable"` // those the criterion applies to
	Defined    int     `json:"defined"`    // those with a defined value
	Met        int     `json:"met"`        // those meeting the expectation
	Mean       float64 `json:"mean"`       // of the defined values (0 if none)
	Std        float64 `json:"std"`        // population standard deviation of the defined values
}

// MetPercent is 100·Met/Applicable, or 0 when nothing applies.
func (s Summary) MetPercent() float64 {
	if s.Applicable == 0 {
		return 0
	}
	return 100 * float64(s.Met) / float64(s.Applicable)
}

// Accumulator sums the values of many explanations into Summaries
// (Welford's running mean and variance). The zero Accumulator has no
// criteria; make one with NewAccumulator.
type Accumulator struct {
	sums []Summary
	m2   []float64
}

// NewAccumulator returns an empty Accumulator of the criteria (as
// Evaluator.Criteria returns them).
func NewAccumulator(criteria []string) *Accumulator {
	a := &Accumulator{sums: make([]Summary, len(criteria)), m2: make([]float64, len(criteria))}
	for i, c := range criteria {
		a.sums[i].Criterion = c
	}
	return a
}

// Add adds the values of one explanation, one per criterion. A count that
// is not the number of criteria and a non-finite defined value are errors.
func (a *Accumulator) Add(values []Value) error {
	if len(values) != len(a.sums) {
		return fmt.Errorf("evaluate: %d values for %d criteria", len(values), len(a.sums))
	}
	for i, v := range values {
		if v.Defined && (math.IsNaN(v.Value) || math.IsInf(v.Value, 0)) {
			return fmt.Errorf("evaluate: %s: value %v", a.sums[i].Criterion, v.Value)
		}
	}
	for i, v := range values {
		s := &a.sums[i]
		s.Inputs++
		if !v.Applies {
			continue
		}
		s.Applicable++
		if v.Met {
			s.Met++
		}
		if v.Defined {
			s.Defined++
			d := v.Value - s.Mean
			s.Mean += d / float64(s.Defined)
			a.m2[i] += d * (v.Value - s.Mean)
		}
	}
	return nil
}

// Summaries returns the summary of every criterion so far.
func (a *Accumulator) Summaries() []Summary {
	out := make([]Summary, len(a.sums))
	for i, s := range a.sums {
		if s.Defined > 0 {
			s.Std = math.Sqrt(max(a.m2[i], 0) / float64(s.Defined))
		}
		out[i] = s
	}
	return out
}

package evaluate

import (
	"slices"
)

// Example is one explanation kept for a report: an input with its scores
// and the criteria it fails.
type Example struct {
	Line   int       `json:"line"` // 1-based: the line of the scores file, or the generated input's number
	Input  string    `json:"input"`
	Tokens []string  `json:"tokens"`
	Scores []float64 `json:"scores"`
	Failed []string  `json:"failed"` // the applicable criteria not met
}

// Source is the evaluation of one tool or method.
type Source struct {
	Name      string    `json:"method"`
	Inputs    int       `json:"inputs"`  // explanations scored
	Skipped   int       `json:"skipped"` // lines that could not be scored
	Summaries []Summary `json:"criteria"`
	Worst     []Example `json:"worst,omitempty"` // the explanations failing the most criteria
}

// Report is the evaluation of one network's explanations from one or more
// sources.
type Report struct {
	Net     string   `json:"net"`
	Class   string   `json:"class"` // the class explained: a name, or "predicted"
	Data    string   `json:"data"`  // where the inputs came from
	Sources []Source `json:"sources"`
}

// Failures returns the criteria whose values apply and are not met.
func Failures(criteria []string, values []Value) []string {
	var out []string
	for i, v := range values {
		if i < len(criteria) && v.Applies && !v.Met {
			out = append(out, criteria[i])
		}
	}
	return out
}

// Worst keeps the k explanations that fail the most criteria (the earliest
// on ties). The zero Worst keeps none.
type Worst struct {
	K     int
	items []Example
}

// Add offers an example; examples failing nothing are never kept.
func (w *Worst) Add(ex Example) {
	if len(ex.Failed) == 0 || w.K <= 0 {
		return
	}
	i, _ := slices.BinarySearchFunc(w.items, len(ex.Failed), func(e Example, n int) int {
		if len(e.Failed) >= n {
			return -1
		}
		return 1
	})
	if i >= w.K {
		return
	}
	ex.Tokens, ex.Scores, ex.Failed = slices.Clone(ex.Tokens), slices.Clone(ex.Scores), slices.Clone(ex.Failed)
	w.items = slices.Insert(w.items, i, ex)
	if len(w.items) > w.K {
		w.items = w.items[:w.K]
	}
}

// Examples returns the kept examples, the worst first.
func (w *Worst) Examples() []Example { return slices.Clone(w.items) }

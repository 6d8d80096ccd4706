package whitebox

import (
	"fmt"
	"math"

	"github.com/whitebox-lstm/whitebox/cell"
)

// DFA is a deterministic finite automaton with start state 0 and a class for
// every state.
type DFA struct {
	Alphabet []string // the symbols, in one-hot column order
	Delta    [][]int  // Delta[q][a]: the state after reading symbol a in state q
	Classes  []string // the class names
	ClassOf  []int    // ClassOf[q]: the class of strings that end in state q
}

// Validate checks that δ is total and every state and class index is in
// range.
func (a *DFA) Validate() error {
	n, s := len(a.Delta), len(a.Alphabet)
	switch {
	case n == 0:
		return fmt.Errorf("dfa: no states")
	case s == 0:
		return fmt.Errorf("dfa: empty alphabet")
	case len(a.Classes) == 0:
		return fmt.Errorf("dfa: no classes")
	case len(a.ClassOf) != n:
		return fmt.Errorf("dfa: ClassOf has %d entries for %d states", len(a.ClassOf), n)
	}
	seen := map[string]bool{}
	for _, sym := range a.Alphabet {
		if len([]rune(sym)) != 1 {
			return fmt.Errorf("dfa: symbol %q is not one character", sym)
		}
		if seen[sym] {
			return fmt.Errorf("dfa: symbol %q appears twice", sym)
		}
		seen[sym] = true
	}
	for q, row := range a.Delta {
		if len(row) != s {
			return fmt.Errorf("dfa: state %d has %d transitions for %d symbols (δ must be total)", q, len(row), s)
		}
		for k, p := range row {
			if p < 0 || p >= n {
				return fmt.Errorf("dfa: δ(%d, %q) = %d is not a state (0..%d)", q, a.Alphabet[k], p, n-1)
			}
		}
		if c := a.ClassOf[q]; c < 0 || c >= len(a.Classes) {
			return fmt.Errorf("dfa: state %d has class %d, not in 0..%d", q, c, len(a.Classes)-1)
		}
	}
	return nil
}

// Run returns the state reached from state 0 after reading symbols.
func (a *DFA) Run(symbols []int) int {
	q := 0
	for _, k := range symbols {
		q = a.Delta[q][k]
	}
	return q
}

// Task returns the classification task the automaton decides.
func (a *DFA) Task(name string) *Task {
	return &Task{Name: name, Alphabet: a.Alphabet, Classes: a.Classes,
		label: func(symbols []int) (int, error) { return a.ClassOf[a.Run(symbols)], nil }}
}

// SPAutomaton is the 9-state automaton of the SP task; state 8 is the sink
// "a subsequence was found".
func SPAutomaton() *DFA {
	return &DFA{
		Alphabet: []string{"a", "b", "c", "d"},
		Delta: [][]int{
			{1, 2, 3, 2},
			{1, 8, 4, 5},
			{5, 2, 8, 2},
			{4, 6, 3, 8},
			{4, 8, 4, 8},
			{5, 8, 8, 5},
			{7, 6, 8, 8},
			{7, 8, 8, 8},
			{8, 8, 8, 8},
		},
		Classes: []string{"False", "True"},
		ClassOf: []int{0, 0, 0, 0, 0, 0, 0, 0, 1},
	}
}

// CompileDFA builds the LSTM that simulates a (the paper's FSA
// construction): unit (q, a), index q·|Σ| + a, is active when the automaton
// is in state q having just read a. The forget gate clears the cell every
// step, g marks every unit of the symbol read (with u), and the input gate
// keeps only the unit of the transition taken from the previous state. The
// decoder sums the units of the states of each class.
func CompileDFA(a *DFA, m, u float64) (*cell.Network, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := checkParam("m", m); err != nil {
		return nil, err
	}
	if err := checkParam("u", u); err != nil {
		return nil, err
	}
	n, s := len(a.Delta), len(a.Alphabet)
	h := n * s
	if h > 1<<14 {
		return nil, fmt.Errorf("dfa: %d states × %d symbols = %d units is too many", n, s, h)
	}
	w := newParams(h, s, len(a.Classes))
	unit := func(q, k int) int { return q*s + k }
	for q := range n {
		for k := range s {
			j := unit(q, k)
			w.setB(gateF, j, -m)
			w.setB(gateO, j, m)
			w.setWx(gateG, j, k, u)
			bi := -m
			if a.Delta[0][k] == q {
				bi = m // h⁽⁰⁾ = 0 stands for the start state
			}
			w.setB(gateI, j, bi)
			for p := range n {
				v := -m - bi
				if a.Delta[p][k] == q {
					v = m - bi
				}
				for k2 := range s {
					w.setWh(gateI, j, unit(p, k2), v)
				}
			}
			w.p.Wy[a.ClassOf[q]*h+j] = 1
		}
	}
	return cell.New(w.p)
}

func checkParam(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("parameter %s = %v must be positive and finite", name, v)
	}
	return nil
}

// The gate blocks in PyTorch's order.
const (
	gateI = iota
	gateF
	gateG
	gateO
)

// params helps fill cell.Params by gate and unit.
type params struct{ p cell.Params }

func newParams(h, d, c int) *params {
	return &params{cell.Params{Hidden: h, Input: d, Classes: c,
		Wx: make([]float64, 4*h*d), Wh: make([]float64, 4*h*h), B: make([]float64, 4*h),
		Wy: make([]float64, c*h), By: make([]float64, c)}}
}

func (w *params) setWx(gate, unit, col int, v float64) {
	h, d := w.p.Hidden, w.p.Input
	w.p.Wx[(gate*h+unit)*d+col] = v
}

func (w *params) setWh(gate, unit, from int, v float64) {
	h := w.p.Hidden
	w.p.Wh[(gate*h+unit)*h+from] = v
}

func (w *params) setB(gate, unit int, v float64) { w.p.B[gate*w.p.Hidden+unit] = v }

package whitebox

import (
	"fmt"
	"math"
	"strings"

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

// Validate checks that δ is total, every state and class index is in range,
// the symbols are distinct single characters and the class names are
// distinct (a class is chosen by name, so two with one name are ambiguous).
func (a *DFA) Validate() error {
	if a == nil {
		return fmt.Errorf("dfa: nil automaton")
	}
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
	classes := map[string]bool{}
	for _, c := range a.Classes {
		if classes[c] {
			return fmt.Errorf("dfa: class name %q appears twice", c)
		}
		classes[c] = true
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

// Run returns the state reached from state 0 after reading symbols. It
// returns an error for a symbol outside 0..|Σ|−1 (naming its position) and
// for a transition that leaves the automaton (one Validate refuses); it
// never panics.
func (a *DFA) Run(symbols []int) (int, error) {
	if a == nil || len(a.Delta) == 0 {
		return 0, fmt.Errorf("dfa: no states")
	}
	q := 0
	for i, k := range symbols {
		if k < 0 || k >= len(a.Alphabet) {
			return 0, fmt.Errorf("dfa: symbol %d at position %d is out of range 0..%d", k, i, len(a.Alphabet)-1)
		}
		row := a.Delta[q]
		if k >= len(row) || row[k] < 0 || row[k] >= len(a.Delta) {
			return 0, fmt.Errorf("dfa: no transition from state %d on symbol %d (δ must be total)", q, k)
		}
		q = row[k]
	}
	return q, nil
}

// ClassOfRun returns the class of symbols: ClassOf of the state Run
// reaches, with Run's errors and an error for a class out of range.
func (a *DFA) ClassOfRun(symbols []int) (int, error) {
	q, err := a.Run(symbols)
	if err != nil {
		return 0, err
	}
	if q >= len(a.ClassOf) || a.ClassOf[q] < 0 || a.ClassOf[q] >= len(a.Classes) {
		return 0, fmt.Errorf("dfa: state %d has no class in 0..%d", q, len(a.Classes)-1)
	}
	return a.ClassOf[q], nil
}

// Task returns the classification task the automaton decides.
func (a *DFA) Task(name string) *Task {
	return &Task{Name: name, Alphabet: a.Alphabet, Classes: a.Classes, label: a.ClassOfRun}
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
//
// Errors name the problem: an invalid automaton (see Validate), m or u not
// positive and finite, m so large that a weight or a gate pre-activation
// (up to (2H+1)·m, H = |Q|·|Σ| units) overflows, a network with more than
// cell.MaxWeights weights (checked before anything is allocated, the bytes
// in the message). After compiling, CompileDFA runs the network on every
// string up to a small length (every string of length L for the largest L
// with at most MaxCheckedStrings strings and at most MaxCheckWork
// multiply-adds in all; at least the strings of length 1 that this work
// allows, and one string) and refuses a network whose prediction
// differs from the automaton's class on one of them, as for a tiny m whose
// gates no longer saturate.
func CompileDFA(a *DFA, m, u float64) (*cell.Model, error) {
	net, err := compileDFA(a, m, u, true)
	if err != nil {
		return nil, fmt.Errorf("whitebox: CompileDFA: %w", err)
	}
	return net, nil
}

// compileDFA compiles a; with check, it refuses a network that does not
// simulate a (see checkSimulates).
func compileDFA(a *DFA, m, u float64, check bool) (*cell.Model, error) {
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
	weights, err := cell.Weights(h, s, len(a.Classes))
	if err != nil {
		// 4H·(D+H+1) + C·(H+1) float64s, in floating point: no overflow.
		fh := float64(h)
		bytes := 8 * (4*fh*(float64(s)+fh+1) + float64(len(a.Classes))*(fh+1))
		return nil, fmt.Errorf("%d states × %d symbols = %d units need %.4g weights, %.3g GB (each copy; the most is cell.MaxWeights = %d, %d MiB)",
			n, s, h, bytes/8, bytes/1e9, cell.MaxWeights, cell.MaxWeights*8>>20)
	}
	if maxM := math.MaxFloat64 / float64(2*h+2); m > maxM {
		return nil, fmt.Errorf("parameter m = %v is too large: the input gate's pre-activation reaches (2H+1)·m with H = %d units, so m must be at most %.4g", m, h, maxM)
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
	net, err := w.build()
	if err != nil {
		return nil, err
	}
	if !check {
		return net, nil
	}
	if err := checkSimulates(net, a, weights, m, u); err != nil {
		return nil, err
	}
	return net, nil
}

// Bounds on the exhaustive check of CompileDFA.
const (
	// MaxCheckedStrings bounds the number of strings CompileDFA checks
	// (every string up to the length L, for the largest L that fits).
	MaxCheckedStrings = 4096
	// MaxCheckWork bounds the multiply-adds of the check (one time step of
	// the network costs about as many as it has weights); one string is
	// checked whatever it costs.
	MaxCheckWork = 1<<31 - 1
)

// checkSimulates runs net on every string up to the length L that
// CompileDFA documents, one time step per string (a depth-first walk that
// continues each prefix's state), and returns an error naming the first
// string whose prediction differs from a's class.
func checkSimulates(net *cell.Model, a *DFA, weights int, m, u float64) error {
	s := len(a.Alphabet)
	maxLen, count, level := 0, 0, 1
	for level <= MaxCheckedStrings/s {
		level *= s
		if count+level > MaxCheckedStrings || float64(count+level)*float64(weights) > MaxCheckWork {
			break
		}
		count += level
		maxLen++
	}
	maxLen = max(maxLen, 1)
	budget := max(1, MaxCheckWork/weights) // strings, when even length 1 is too many
	r, err := cell.NewRunner(net)
	if err != nil {
		return err
	}
	defer r.Close()
	h := net.Hidden()
	hs := make([][]float64, maxLen+1) // hs[l], cs[l]: the state after the prefix of length l
	cs := make([][]float64, maxLen+1)
	for l := range hs {
		hs[l], cs[l] = make([]float64, h), make([]float64, h)
	}
	prefix := make([]int, 0, maxLen)
	one := make([]int, 1)
	var walk func(q int) error
	walk = func(q int) error {
		l := len(prefix)
		for k := range s {
			if budget == 0 {
				return nil
			}
			budget--
			one[0] = k
			logits, err := r.ForwardFrom(cell.OneHot(one), hs[l], cs[l])
			if err != nil {
				return fmt.Errorf("checking the network: %w", err)
			}
			p := a.Delta[q][k]
			if got, want := cell.Predict(logits), a.ClassOf[p]; got != want {
				b := make([]string, 0, l+1)
				for _, k2 := range append(prefix, k) {
					b = append(b, a.Alphabet[k2])
				}
				return fmt.Errorf("with m = %v and u = %v the network does not simulate the automaton: it predicts class %q for %q, the automaton says %q (m too small or too large for the gates to saturate?)",
					m, u, a.Classes[got], strings.Join(b, ""), a.Classes[want])
			}
			if l+1 < maxLen {
				if err := r.Final(hs[l+1], cs[l+1]); err != nil {
					return fmt.Errorf("checking the network: %w", err)
				}
				prefix = append(prefix, k)
				if err := walk(p); err != nil {
					return err
				}
				prefix = prefix[:l]
			}
		}
		return nil
	}
	return walk(0)
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

// params helps fill a one-layer LSTM classifier's weights by gate and
// unit, in PyTorch's layout (see cell.Params).
type params struct{ p netParams }

// netParams are the weights of a one-layer LSTM classifier: W_x 4H×D,
// W_h 4H×H, B 4H, the decoder W_y C×H and b_y.
type netParams struct {
	Hidden, Input, Classes int
	Wx, Wh, B, Wy, By      []float64
}

func newParams(h, d, c int) *params {
	return &params{netParams{Hidden: h, Input: d, Classes: c,
		Wx: make([]float64, 4*h*d), Wh: make([]float64, 4*h*h), B: make([]float64, 4*h),
		Wy: make([]float64, c*h), By: make([]float64, c)}}
}

// build returns the engine's model of w: one layer, one direction, head
// hn, one Linear decoder, and the white-box networks' LRP rule (cell.LRPHao,
// the paper's).
func (w *params) build() (*cell.Model, error) {
	p := w.p
	return cell.NewModel(cell.Params{
		Input: p.Input, Hidden: p.Hidden, Layers: 1, Classes: p.Classes,
		Cells: []cell.CellParams{{Wih: p.Wx, Whh: p.Wh, B: p.B}},
		Wy:    p.Wy, By: p.By, Head: cell.HeadHN, LRP: cell.LRPHao,
	})
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

// Package ablation is the ablation test of Bach et al. (2015) as the
// white-box paper applies it: delete the input symbol with the highest
// attribution score, recompute the heatmap, and repeat until the string no
// longer has the property the network detects. The property is given as a
// deterministic finite automaton, so the evaluator works for any network,
// any attribution method and any regular stop condition; the optimal number
// of deletions follows by dynamic programming over the same automaton.
package ablation

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// Stop is the condition that ends an ablation: the string's run of DFA ends
// in a state of class Class.
type Stop struct {
	DFA   *whitebox.DFA
	Class int
}

// Done reports whether symbols satisfy the stop condition. It returns an
// error, never panics, for an invalid condition (see New) and for a symbol
// outside the automaton's alphabet.
func (s Stop) Done(symbols []int) (bool, error) {
	if err := s.check(); err != nil {
		return false, err
	}
	return s.done(symbols)
}

// done is Done for a checked condition.
func (s Stop) done(symbols []int) (bool, error) {
	q, err := s.DFA.Run(symbols)
	if err != nil {
		return false, fmt.Errorf("ablation: %w", err)
	}
	return s.DFA.ClassOf[q] == s.Class, nil
}

func (s Stop) check() error {
	if s.DFA == nil {
		return errors.New("ablation: no stop automaton")
	}
	if err := s.DFA.Validate(); err != nil {
		return fmt.Errorf("ablation: %w", err)
	}
	if s.Class < 0 || s.Class >= len(s.DFA.Classes) {
		return fmt.Errorf("ablation: stop class %d is not a class of the automaton", s.Class)
	}
	return nil
}

// checkSymbols validates the string an ablation starts from: at least one
// symbol, each in 0..|Σ|−1 (−1, occlusion's zero row, is not a symbol here).
func (s Stop) checkSymbols(symbols []int) error {
	if len(symbols) == 0 {
		return errors.New("ablation: empty string (a string needs at least one symbol)")
	}
	for i, k := range symbols {
		if k < 0 || k >= len(s.DFA.Alphabet) {
			return fmt.Errorf("ablation: symbol %d at position %d is out of range 0..%d", k, i, len(s.DFA.Alphabet)-1)
		}
	}
	return nil
}

// Evaluator ablates strings for one network and one method. It is not safe
// for concurrent use; make one per goroutine. Make it with New: the zero
// Evaluator has no network, and its Run returns an error.
type Evaluator struct {
	Method  attrib.Method
	Options attrib.Options // Options.Class is ignored: each step explains the predicted class
	Stop    Stop

	ex      *attrib.Explainer
	res     attrib.Result
	symbols []int
}

// New returns an Evaluator of method m on net. It returns an error for a
// nil network, a method that is not one of attrib.AllMethods(), an invalid stop
// condition (no automaton, an invalid one, a class out of range) and an
// automaton whose alphabet is not the network's input.
func New(net *cell.Model, m attrib.Method, opt attrib.Options, stop Stop) (*Evaluator, error) {
	if net == nil {
		return nil, errors.New("ablation: nil network")
	}
	if !slices.Contains(attrib.AllMethods(), m) {
		return nil, fmt.Errorf("ablation: unknown method %v (methods: %v)", m, attrib.AllMethods())
	}
	if err := stop.check(); err != nil {
		return nil, err
	}
	if len(stop.DFA.Alphabet) != net.Input() {
		return nil, fmt.Errorf("ablation: the automaton reads %d symbols, the network %d", len(stop.DFA.Alphabet), net.Input())
	}
	opt.Class = attrib.Predicted
	ex, err := attrib.NewExplainer(net)
	if err != nil {
		return nil, err
	}
	return &Evaluator{Method: m, Options: opt, Stop: stop, ex: ex}, nil
}

// Run ablates symbols and returns the number of symbols deleted: while more
// than one symbol is left, it deletes the one with the highest token score
// for the network's predicted class (the leftmost on ties, as argmax does;
// a NaN score never wins) and stops as soon as the stop condition holds. A
// string that satisfies it from the start deletes nothing. An empty string
// and a symbol outside the automaton's alphabet are errors.
func (e *Evaluator) Run(ctx context.Context, symbols []int) (int, error) {
	if e == nil || e.ex == nil {
		return 0, errors.New("ablation: Evaluator not made by New")
	}
	if err := e.Stop.check(); err != nil {
		return 0, err
	}
	if err := e.Stop.checkSymbols(symbols); err != nil {
		return 0, err
	}
	e.symbols = append(e.symbols[:0], symbols...)
	s := e.symbols
	deleted := 0
	for len(s) > 1 {
		done, err := e.Stop.done(s)
		if err != nil {
			return deleted, err
		}
		if done {
			break
		}
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		if err := e.ex.Attribute(ctx, e.Method, cell.OneHot(s), e.Options, &e.res); err != nil {
			return deleted, err
		}
		best := cell.Predict(e.res.Scores)
		s = append(s[:best], s[best+1:]...)
		deleted++
	}
	return deleted, nil
}

// Random deletes uniformly random symbols until the stop condition holds or
// one symbol is left, and returns how many it deleted. A nil rng, an
// invalid stop condition, an empty string and a symbol outside the
// automaton's alphabet are errors.
func Random(rng *rand.Rand, stop Stop, symbols []int) (int, error) {
	if rng == nil {
		return 0, errors.New("ablation: nil random generator")
	}
	if err := stop.check(); err != nil {
		return 0, err
	}
	if err := stop.checkSymbols(symbols); err != nil {
		return 0, err
	}
	s := append([]int(nil), symbols...)
	deleted := 0
	for len(s) > 1 {
		if done, err := stop.done(s); err != nil || done {
			return deleted, err
		}
		k := rng.IntN(len(s))
		s = append(s[:k], s[k+1:]...)
		deleted++
	}
	return deleted, nil
}

// Optimal returns the fewest deletions after which the stop condition holds
// (at most len(symbols)−1: one symbol is left at the least): the length
// minus the longest subsequence whose run ends in a stop state, found by
// dynamic programming over (position, state). An invalid stop condition, an
// empty string and a symbol outside the automaton's alphabet are errors.
func Optimal(stop Stop, symbols []int) (int, error) {
	if err := stop.check(); err != nil {
		return 0, err
	}
	if err := stop.checkSymbols(symbols); err != nil {
		return 0, err
	}
	a := stop.DFA
	if done, err := stop.done(symbols); err != nil || done {
		return 0, err
	}
	// best[q]: the longest subsequence read so far whose run ends in q (−1: none).
	best := make([]int, len(a.Delta))
	next := make([]int, len(a.Delta))
	for q := range best {
		best[q] = -1
	}
	best[0] = 0
	for _, k := range symbols {
		copy(next, best) // skipping the symbol
		for q, l := range best {
			if l >= 0 {
				if r := a.Delta[q][k]; l+1 > next[r] {
					next[r] = l + 1
				}
			}
		}
		best, next = next, best
	}
	keep := 1
	for q, l := range best {
		if a.ClassOf[q] == stop.Class && l > keep {
			keep = l
		}
	}
	return len(symbols) - keep, nil
}

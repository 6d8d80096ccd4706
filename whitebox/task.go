// Package whitebox builds the paper's four hand-built LSTMs — the counting
// network, the counter-based and the FSA-based networks for the SP task and
// the PDA network for bracket prediction — together with their tasks
// (alphabets, classes, exact labelers and seeded generators) and a compiler
// from any deterministic finite automaton to an LSTM.
package whitebox

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/whitebox-lstm/whitebox/cell"
)

// Task is a classification task over strings of one-character symbols.
type Task struct {
	Name     string
	Alphabet []string // the symbols, in one-hot column order
	Classes  []string // the class names, in logit order

	label func(symbols []int) (int, error)
}

// ErrEmptyInput is what the error of the empty string is: the same value
// as cell.ErrEmptyInput and attrib.ErrEmptyInput, so that
// errors.Is(err, ErrEmptyInput) holds whichever package refused an empty
// input.
var ErrEmptyInput = cell.ErrEmptyInput

// errEmptyString is Encode's error for the empty string: its own words,
// and errors.Is(err, ErrEmptyInput).
var errEmptyString error = emptyString{}

type emptyString struct{}

func (emptyString) Error() string { return "empty input: a string needs at least one symbol" }
func (emptyString) Unwrap() error { return ErrEmptyInput }

// Encode converts s into symbol indices. It fails on the empty string, on a
// symbol outside the alphabet and on a string that is not in the task's
// domain (for bracket prediction: not a prefix of a balanced string, or
// deeper than the network's stack).
func (t *Task) Encode(s string) ([]int, error) {
	if s == "" {
		return nil, errEmptyString
	}
	symbols := make([]int, 0, len(s))
	for pos, r := range s {
		if r == utf8.RuneError {
			return nil, fmt.Errorf("%s: invalid UTF-8 at byte %d", t.Name, pos)
		}
		k := t.Symbol(string(r))
		if k < 0 {
			return nil, fmt.Errorf("%s: unknown symbol %q at position %d (alphabet: %s)", t.Name, r, len(symbols), strings.Join(t.Alphabet, " "))
		}
		symbols = append(symbols, k)
	}
	if _, err := t.label(symbols); err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	return symbols, nil
}

// Decode converts symbol indices back into a string; −1 (an occluded
// position) becomes "_".
func (t *Task) Decode(symbols []int) string {
	var b strings.Builder
	for _, k := range symbols {
		if k < 0 || k >= len(t.Alphabet) {
			b.WriteByte('_')
			continue
		}
		b.WriteString(t.Alphabet[k])
	}
	return b.String()
}

// Symbol returns the column of symbol s, or −1.
func (t *Task) Symbol(s string) int {
	for k, a := range t.Alphabet {
		if a == s {
			return k
		}
	}
	return -1
}

// Class returns the index of the class called name, or named by its index
// ("0", "1", …), as an imported model's classes are.
func (t *Task) Class(name string) (int, error) {
	for k, c := range t.Classes {
		if c == name {
			return k, nil
		}
	}
	if k, err := strconv.Atoi(name); err == nil && k >= 0 && k < len(t.Classes) {
		return k, nil
	}
	return 0, fmt.Errorf("%s: unknown class %q (classes: %s, or an index in [0, %d))", t.Name, name, strings.Join(t.Classes, ", "), len(t.Classes))
}

// Label returns the correct class of s.
func (t *Task) Label(s string) (int, error) {
	symbols, err := t.Encode(s)
	if err != nil {
		return 0, err
	}
	return t.label(symbols)
}

// LabelSymbols returns the correct class of an encoded string.
func (t *Task) LabelSymbols(symbols []int) (int, error) {
	for i, k := range symbols {
		if k < 0 || k >= len(t.Alphabet) {
			return 0, fmt.Errorf("%s: symbol index %d at position %d is out of range", t.Name, k, i)
		}
	}
	return t.label(symbols)
}

// CountingTask: True iff the string has strictly more a's than b's.
func CountingTask() *Task {
	return &Task{Name: "counting", Alphabet: []string{"a", "b"}, Classes: []string{"False", "True"},
		label: func(symbols []int) (int, error) {
			balance := 0
			for _, k := range symbols {
				balance += 1 - 2*k // a: +1, b: −1
			}
			if balance > 0 {
				return 1, nil
			}
			return 0, nil
		}}
}

// SPTask: True iff the string contains one of the subsequences ab, bc, cd,
// dc (not necessarily contiguous).
func SPTask() *Task {
	return &Task{Name: "sp", Alphabet: []string{"a", "b", "c", "d"}, Classes: []string{"False", "True"},
		label: func(symbols []int) (int, error) {
			found, err := ContainsSP(symbols)
			if found {
				return 1, err
			}
			return 0, err
		}}
}

// ContainsSP reports whether symbols (a=0 … d=3) contain one of the
// subsequences ab, bc, cd, dc. A symbol outside 0..3 is an error naming its
// position (from 0).
func ContainsSP(symbols []int) (bool, error) {
	var seen [4]bool
	for i, k := range symbols {
		if k < 0 || k > 3 {
			return false, fmt.Errorf("whitebox: ContainsSP: symbol %d at position %d is out of range 0..3", k, i)
		}
	}
	for _, k := range symbols {
		switch {
		case k == 1 && seen[0], k == 2 && (seen[1] || seen[3]), k == 3 && seen[2]:
			return true, nil
		}
		seen[k] = true
	}
	return false, nil
}

// Bracket symbols and classes.
const (
	OpenParen = iota
	OpenSquare
	CloseParen
	CloseSquare
)

// BracketTask: given a prefix of a balanced string of () and [], predict the
// bracket that closes the last unclosed one, or None. Prefixes that are not
// prefixes of balanced strings, or whose depth exceeds maxDepth (the
// network's stack size), are errors.
func BracketTask(maxDepth int) *Task {
	return &Task{Name: "bracket", Alphabet: []string{"(", "[", ")", "]"}, Classes: []string{")", "]", "None"},
		label: func(symbols []int) (int, error) {
			stack := make([]int, 0, 16)
			for i, k := range symbols {
				switch k {
				case OpenParen, OpenSquare:
					if len(stack) == maxDepth {
						return 0, fmt.Errorf("stack overflow: position %d opens bracket number %d, but the network's stack holds %d (raise the stack size, Config.K)", i, maxDepth+1, maxDepth)
					}
					stack = append(stack, k)
				default:
					want := k - 2
					if len(stack) == 0 {
						return 0, fmt.Errorf("not a valid prefix: %q at position %d closes nothing", "([)]"[k], i)
					}
					if top := stack[len(stack)-1]; top != want {
						return 0, fmt.Errorf("not a valid prefix: %q at position %d does not match %q", "([)]"[k], i, "([)]"[top])
					}
					stack = stack[:len(stack)-1]
				}
			}
			if len(stack) == 0 {
				return 2, nil
			}
			return stack[len(stack)-1], nil // ( → ")" = 0, [ → "]" = 1
		}}
}

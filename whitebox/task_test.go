package whitebox

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

func TestEncodeErrors(t *testing.T) {
	for _, tc := range []struct {
		task *Task
		in   string
		want string
	}{
		{CountingTask(), "", "empty input"},
		{CountingTask(), "abc", `unknown symbol 'c' at position 2 (alphabet: a b)`},
		{SPTask(), "aXb", `unknown symbol 'X' at position 1`},
		{SPTask(), "ab\xff", "invalid UTF-8"},
		{BracketTask(50), ")", `not a valid prefix: ')' at position 0 closes nothing`},
		{BracketTask(50), "([)", `')' at position 2 does not match '['`},
		{BracketTask(2), "(([", "stack overflow: position 2 opens bracket number 3, but the network's stack holds 2"},
	} {
		_, err := tc.task.Encode(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s.Encode(%q) = %v, want an error containing %q", tc.task.Name, tc.in, err, tc.want)
		}
	}
}

func TestLabels(t *testing.T) {
	for _, tc := range []struct {
		task *Task
		in   string
		want string
	}{
		{CountingTask(), "aaab", "True"}, {CountingTask(), "ab", "False"}, {CountingTask(), "bbbba", "False"},
		{SPTask(), "aab", "True"}, {SPTask(), "acb", "True"}, {SPTask(), "aaa", "False"},
		{SPTask(), "dc", "True"}, {SPTask(), "cd", "True"}, {SPTask(), "ba", "False"}, {SPTask(), "dbca", "True"},
		{BracketTask(50), "[([]", ")"}, {BracketTask(50), "(()[", "]"}, {BracketTask(50), "[()]", "None"},
		{BracketTask(2), "(()", ")"},
	} {
		k, err := tc.task.Label(tc.in)
		if err != nil || tc.task.Classes[k] != tc.want {
			t.Errorf("%s.Label(%q) = %v, %v, want %s", tc.task.Name, tc.in, k, err, tc.want)
		}
	}
	task := SPTask()
	if _, err := task.Class("Maybe"); err == nil || !strings.Contains(err.Error(), "classes: False, True, or an index in [0, 2)") {
		t.Errorf("Class: %v", err)
	}
	for name, want := range map[string]int{"True": 1, "1": 1, "0": 0} {
		if k, err := task.Class(name); k != want || err != nil {
			t.Errorf("Class(%q) = %d, %v; want %d", name, k, err, want)
		}
	}
	for _, name := range []string{"2", "-1", "01x"} {
		if _, err := task.Class(name); err == nil {
			t.Errorf("Class(%q): no error", name)
		}
	}
	if got := task.Decode([]int{0, -1, 3}); got != "a_d" {
		t.Errorf("Decode = %q", got)
	}
}

func TestDFAValidate(t *testing.T) {
	good := func() *DFA { return SPAutomaton() }
	for want, edit := range map[string]func(a *DFA){
		"no states":                   func(a *DFA) { a.Delta = nil; a.ClassOf = nil },
		"δ must be total":             func(a *DFA) { a.Delta[3] = a.Delta[3][:2] },
		`δ(2, "c") = 9 is not`:        func(a *DFA) { a.Delta[2][2] = 9 },
		"state 8 has class 2":         func(a *DFA) { a.ClassOf[8] = 2 },
		"ClassOf has 8 entries":       func(a *DFA) { a.ClassOf = a.ClassOf[:8] },
		`symbol "ab" is not one char`: func(a *DFA) { a.Alphabet[0] = "ab" },
		`symbol "b" appears twice`:    func(a *DFA) { a.Alphabet[0] = "b" },
	} {
		a := good()
		edit(a)
		if _, err := CompileDFA(a, 50, 1); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error containing %q", err, want)
		}
	}
	if _, err := CompileDFA(good(), -1, 1); err == nil || !strings.Contains(err.Error(), "m = -1") {
		t.Errorf("negative m: %v", err)
	}
}

// TestCompileOtherDFA: the compiler works for automata other than SP's, here
// "the number of 1s is divisible by 3" over {0, 1, 2}, with three classes.
func TestCompileOtherDFA(t *testing.T) {
	a := &DFA{
		Alphabet: []string{"0", "1", "2"},
		Delta:    [][]int{{0, 1, 0}, {1, 2, 1}, {2, 0, 2}},
		Classes:  []string{"zero", "one", "two"},
		ClassOf:  []int{0, 1, 2},
	}
	nw, err := CompileDFA(a, 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	net := &Net{Name: "mod3", Task: a.Task("mod3"), Model: nw}
	if n := checkExhaustive(t, net, 9, all); n != 29523 {
		t.Fatalf("checked %d strings", n)
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"lstm", Config{}, `unknown network "lstm" (networks: counting, sp-counter, sp-fsa, bracket)`},
		{"counting", Config{M: new(-3.0)}, "m = -3 must be positive"},
		{"sp-counter", Config{U: new(-1.0)}, "u = -1 must be positive"},
		{"sp-fsa", Config{K: new(3)}, "sp-fsa has no stack size k"},
		{"bracket", Config{U: new(1.0)}, "bracket has no parameter u"},
		{"bracket", Config{K: new(-1)}, "stack size k = -1 must be in 1..500"},
		{"bracket", Config{K: new(501)}, "stack size k = 501"},
		{"bracket", Config{M: new(1e300)}, "parameter m = 1e+300 is too large"},
	} {
		if _, err := New(tc.name, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%s, %+v) = %v, want an error containing %q", tc.name, tc.cfg, err, tc.want)
		}
	}
	net, err := New("bracket", Config{})
	if err != nil || net.Params != (Params{M: 50, K: 50}) || net.Model.Hidden() != 102 {
		t.Errorf("bracket defaults: %+v, %v", net, err)
	}
}

func TestGenerate(t *testing.T) {
	for _, task := range []*Task{CountingTask(), SPTask(), BracketTask(3)} {
		a, b := NewRand(7), NewRand(7)
		seen := map[int]bool{}
		for range 300 {
			s, err := task.Generate(a, 2, 9)
			if err != nil {
				t.Fatal(err)
			}
			s2, _ := task.Generate(b, 2, 9)
			if s != s2 {
				t.Fatalf("same seed, different strings %q %q", s, s2)
			}
			if n := len([]rune(s)); n < 2 || n > 9 {
				t.Fatalf("%s: length %d outside 2..9", task.Name, n)
			}
			k, err := task.Label(s)
			if err != nil {
				t.Fatalf("%s generated %q: %v", task.Name, s, err)
			}
			seen[k] = true
		}
		if len(seen) != len(task.Classes) {
			t.Errorf("%s: generated classes %v, want all %d", task.Name, seen, len(task.Classes))
		}
	}
	if _, err := CountingTask().Generate(nil, 1, 3); err == nil || !strings.Contains(err.Error(), "nil random generator") {
		t.Errorf("Generate(nil): %v", err)
	}
	if _, err := CountingTask().Generate(NewRand(1), 0, 3); err == nil {
		t.Error("Generate accepted min length 0")
	}
}

// Issue 14: CompileDFA validates its arguments up front, caps the network
// by its memory before allocating it, and refuses a network that does not
// simulate the automaton.
func TestCompileDFARefuses(t *testing.T) {
	if _, err := CompileDFA(nil, 50, 1); err == nil || !strings.Contains(err.Error(), "nil automaton") {
		t.Errorf("nil automaton: %v", err)
	}
	for _, c := range []struct {
		m, u float64
		want string
	}{
		{1e308, 1, "parameter m = 1e+308 is too large"},
		{math.Inf(1), 1, "parameter m = +Inf must be positive and finite"},
		{math.NaN(), 1, "parameter m = NaN"},
		{0, 1, "parameter m = 0"},
		{50, 0, "parameter u = 0"},
		{50, math.Inf(1), "parameter u = +Inf"},
		{1e-320, 1, "does not simulate the automaton"},
		{1e-3, 1, "does not simulate the automaton"},
	} {
		if _, err := CompileDFA(SPAutomaton(), c.m, c.u); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "whitebox: CompileDFA: ") {
			t.Errorf("m = %v, u = %v: %v, want an error containing %q", c.m, c.u, err, c.want)
		}
	}
	// 4,096 states × 4 symbols: 4·H² weights, 8.6 GB; refused before allocation.
	big := &DFA{Alphabet: []string{"a", "b", "c", "d"}, Classes: []string{"no", "yes"}, ClassOf: make([]int, 4096)}
	for q := range 4096 {
		big.Delta = append(big.Delta, []int{(q + 1) % 4096, q, q, q})
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := CompileDFA(big, 50, 1)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "16384 units") || !strings.Contains(err.Error(), "GB") {
		t.Errorf("4096-state automaton: %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing the automaton allocated %d bytes", grew)
	}
	dup := SPAutomaton()
	dup.Classes = []string{"x", "x"}
	if _, err := CompileDFA(dup, 50, 1); err == nil || !strings.Contains(err.Error(), `class name "x" appears twice`) {
		t.Errorf("duplicate class names: %v", err)
	}
}

// Issue 14: out-of-range symbols are errors, not index panics.
func TestOutOfRangeSymbols(t *testing.T) {
	a := SPAutomaton()
	for _, sym := range [][]int{{9}, {-1}, {0, 1, 4}} {
		if _, err := a.Run(sym); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Run(%v): %v", sym, err)
		}
		if _, err := a.ClassOfRun(sym); err == nil {
			t.Errorf("ClassOfRun(%v): no error", sym)
		}
		if _, err := ContainsSP(sym); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("ContainsSP(%v): %v", sym, err)
		}
	}
	if q, err := a.Run([]int{0, 1}); err != nil || q != 8 {
		t.Errorf("Run(ab) = %d, %v", q, err)
	}
	if found, err := ContainsSP([]int{3, 2}); err != nil || !found {
		t.Errorf("ContainsSP(dc) = %v, %v", found, err)
	}
	var nilDFA *DFA
	if _, err := nilDFA.Run([]int{0}); err == nil {
		t.Error("nil DFA: no error")
	}
	broken := &DFA{Alphabet: []string{"a", "b"}, Delta: [][]int{{0}}, Classes: []string{"x"}, ClassOf: []int{0}}
	if _, err := broken.Run([]int{1}); err == nil {
		t.Error("partial δ: no error")
	}
}

// Issue 14: an explicit zero is refused with an error naming the
// parameter; an unset zero means the default.
func TestConfigExplicitZero(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"bracket", Config{K: new(0)}, "whitebox: bracket: stack size k = 0 must be in 1..500 (at least 1)"},
		{"counting", Config{U: new(0.0)}, "whitebox: counting: parameter u = 0 must be positive"},
		{"sp-fsa", Config{M: new(0.0)}, "whitebox: sp-fsa: parameter m = 0 must be positive"},
		{"bracket", Config{U: new(0.0)}, "bracket has no parameter u"},
		{"sp-counter", Config{K: new(0)}, "sp-counter has no stack size k"},
		{"counting", Config{M: new(1e308)}, "parameter m = 1e+308 is too large"},
	} {
		if _, err := New(tc.name, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%s, %+v) = %v, want an error containing %q", tc.name, tc.cfg, err, tc.want)
		}
	}
	net, err := New("bracket", Config{K: new(3), M: new(10.0)})
	if err != nil || net.Params.K != 3 || net.Params.M != 10 {
		t.Errorf("explicit k = 3, m = 10: %+v, %v", net, err)
	}
	net, err = New("sp-counter", Config{})
	if err != nil || net.Params.U != 0.7 || net.Params.M != DefaultM {
		t.Errorf("sp-counter defaults: %+v, %v", net, err)
	}
}

// FuzzCompileDFA builds automata from arbitrary bytes and parameters:
// CompileDFA must return a network or an error, never panic, and a network
// it returns must classify short strings as the automaton does.
func FuzzCompileDFA(f *testing.F) {
	f.Add(uint8(2), uint8(2), uint8(2), []byte{0, 1, 1, 0, 0, 1}, 50.0, 1.0)
	f.Add(uint8(9), uint8(4), uint8(2), []byte{1, 2, 3, 2, 1, 8, 4, 5}, 50.0, 1.0)
	f.Add(uint8(1), uint8(1), uint8(1), []byte{}, 1e-320, 1.0)
	f.Add(uint8(3), uint8(2), uint8(3), []byte{200, 7, 1}, 1e308, -1.0)
	f.Fuzz(func(t *testing.T, states, symbols, classes uint8, table []byte, m, u float64) {
		n, s, c := int(states%40), int(symbols%8), int(classes%5)
		a := &DFA{Classes: make([]string, c), ClassOf: make([]int, n)}
		for k := range s {
			a.Alphabet = append(a.Alphabet, string(rune('a'+k)))
		}
		for k := range c {
			a.Classes[k] = fmt.Sprint("c", k)
		}
		next := func(i int) int {
			if len(table) == 0 {
				return 0
			}
			return int(table[i%len(table)])
		}
		for q := range n {
			row := make([]int, s)
			for k := range row {
				row[k] = next(q*s+k) % (n + 1) // n: out of range, sometimes
			}
			a.Delta = append(a.Delta, row)
			a.ClassOf[q] = next(q+7) % (c + 1)
		}
		net, err := CompileDFA(a, m, u)
		if err != nil {
			return
		}
		task := a.Task("fuzz")
		ws := mustRunner(t, net)
		for k := range s {
			want, err := task.LabelSymbols([]int{k})
			if err != nil {
				t.Fatal(err)
			}
			logits, err := ws.Forward(cell.OneHot([]int{k}))
			if err != nil {
				t.Fatal(err)
			}
			if got := cell.Predict(logits); got != want {
				t.Fatalf("symbol %d: network %d, automaton %d", k, got, want)
			}
		}
	})
}

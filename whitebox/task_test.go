package whitebox

import (
	"strings"
	"testing"
)

func TestEncodeErrors(t *testing.T) {
	for _, tc := range []struct {
		task *Task
		in   string
		want string
	}{
		{CountingTask(), "", "empty input"},
		{CountingTask(), "abc", `unknown symbol 'c' at position 3 (alphabet: a b)`},
		{SPTask(), "aXb", `unknown symbol 'X' at position 2`},
		{SPTask(), "ab\xff", "invalid UTF-8"},
		{BracketTask(50), ")", `not a valid prefix: ')' at position 1 closes nothing`},
		{BracketTask(50), "([)", `')' at position 3 does not match '['`},
		{BracketTask(2), "(([", "stack overflow: position 3 opens bracket number 3, but the network's stack holds 2"},
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
	if _, err := task.Class("Maybe"); err == nil || !strings.Contains(err.Error(), "classes: False True") {
		t.Errorf("Class: %v", err)
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
	net := &Net{Name: "mod3", Task: a.Task("mod3"), Network: nw}
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
		{"counting", Config{M: -3}, "m = -3 must be positive"},
		{"sp-counter", Config{U: -1}, "u = -1 must be positive"},
		{"sp-fsa", Config{K: 3}, "sp-fsa has no stack size k"},
		{"bracket", Config{U: 1}, "bracket has no parameter u"},
		{"bracket", Config{K: -1}, "stack size k = -1 must be in 1..500"},
		{"bracket", Config{K: 501}, "stack size k = 501"},
		{"bracket", Config{M: 1e300}, "weights must be finite"},
	} {
		if _, err := New(tc.name, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%s, %+v) = %v, want an error containing %q", tc.name, tc.cfg, err, tc.want)
		}
	}
	net, err := New("bracket", Config{})
	if err != nil || net.Config != (Config{M: 50, K: 50}) || net.Network.Hidden() != 102 {
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
	if _, err := CountingTask().Generate(NewRand(1), 0, 3); err == nil {
		t.Error("Generate accepted min length 0")
	}
}

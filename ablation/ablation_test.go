package ablation

import (
	"context"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

var spStop = Stop{DFA: whitebox.SPAutomaton(), Class: 0}

func encode(t *testing.T, s string) []int {
	t.Helper()
	sym, err := whitebox.SPTask().Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	return sym
}

// bruteOptimal tries every subset of positions to delete.
func bruteOptimal(stop Stop, sym []int) int {
	best := len(sym) - 1
	for mask := 0; mask < 1<<len(sym); mask++ {
		var kept []int
		for i, k := range sym {
			if mask&(1<<i) == 0 {
				kept = append(kept, k)
			}
		}
		if len(kept) >= 1 && stop.Done(kept) {
			best = min(best, len(sym)-len(kept))
		}
	}
	return best
}

func TestOptimalMatchesBruteForce(t *testing.T) {
	rng := whitebox.NewRand(3)
	task := whitebox.SPTask()
	for range 300 {
		s, _ := task.Generate(rng, 1, 11)
		sym := encode(t, s)
		if got, want := Optimal(spStop, sym), bruteOptimal(spStop, sym); got != want {
			t.Fatalf("Optimal(%s) = %d, brute force %d", s, got, want)
		}
	}
	for s, want := range map[string]int{"ab": 1, "ba": 0, "aab": 1, "abcd": 2, "dddc": 1, "a": 0} {
		if got := Optimal(spStop, encode(t, s)); got != want {
			t.Errorf("Optimal(%s) = %d, want %d", s, got, want)
		}
	}
}

func TestRandom(t *testing.T) {
	sym := encode(t, "abcdabcdabcd")
	a := Random(whitebox.NewRand(1), spStop, sym)
	b := Random(whitebox.NewRand(1), spStop, sym)
	if a != b || a < Optimal(spStop, sym) || a > len(sym)-1 {
		t.Errorf("Random = %d and %d (optimal %d)", a, b, Optimal(spStop, sym))
	}
	if got := encode(t, "abcdabcdabcd"); len(got) != len(sym) || sym[0] != 0 {
		t.Errorf("Random changed its input: %v", sym)
	}
}

func TestEvaluator(t *testing.T) {
	net, err := whitebox.New("sp-counter", whitebox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := New(net.Network, attrib.Occlusion, attrib.DefaultOptions(), spStop)
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]int{
		"ab":    1, // one deletion kills ab
		"ba":    0, // nothing to do
		"acb":   1, // occlusion picks a or b, never the c
		"aabb":  2, // both a's or both b's
		"dcdcd": 2, // both c's go, ddd is left
	} {
		sym := encode(t, s)
		got, err := ev.Run(context.Background(), sym)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("occlusion ablation of %s deleted %d, want %d", s, got, want)
		}
		if opt := Optimal(spStop, sym); got < opt {
			t.Errorf("%s: %d deletions beat the optimum %d", s, got, opt)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ev.Run(ctx, encode(t, "abab")); err == nil {
		t.Error("Run ignored a cancelled context")
	}
}

func TestNewErrors(t *testing.T) {
	net, _ := whitebox.New("counting", whitebox.Config{})
	if _, err := New(net.Network, attrib.LRP, attrib.DefaultOptions(), spStop); err == nil || !strings.Contains(err.Error(), "reads 4 symbols, the network 2") {
		t.Errorf("alphabet mismatch: %v", err)
	}
	if _, err := New(net.Network, attrib.LRP, attrib.DefaultOptions(), Stop{}); err == nil {
		t.Error("no automaton accepted")
	}
	if _, err := New(net.Network, attrib.LRP, attrib.DefaultOptions(), Stop{DFA: whitebox.SPAutomaton(), Class: 5}); err == nil {
		t.Error("bad stop class accepted")
	}
}

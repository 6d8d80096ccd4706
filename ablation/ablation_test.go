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

func optimal(t *testing.T, sym []int) int {
	t.Helper()
	n, err := Optimal(spStop, sym)
	if err != nil {
		t.Fatal(err)
	}
	return n
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
		if done, _ := stop.Done(kept); len(kept) >= 1 && done {
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
		if got, want := optimal(t, sym), bruteOptimal(spStop, sym); got != want {
			t.Fatalf("Optimal(%s) = %d, brute force %d", s, got, want)
		}
	}
	for s, want := range map[string]int{"ab": 1, "ba": 0, "aab": 1, "abcd": 2, "dddc": 1, "a": 0} {
		if got := optimal(t, encode(t, s)); got != want {
			t.Errorf("Optimal(%s) = %d, want %d", s, got, want)
		}
	}
}

func TestRandom(t *testing.T) {
	sym := encode(t, "abcdabcdabcd")
	a, errA := Random(whitebox.NewRand(1), spStop, sym)
	b, errB := Random(whitebox.NewRand(1), spStop, sym)
	if errA != nil || errB != nil || a != b || a < optimal(t, sym) || a > len(sym)-1 {
		t.Errorf("Random = %d and %d (optimal %d), errors %v, %v", a, b, optimal(t, sym), errA, errB)
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
	ev, err := New(net.Model, attrib.Occlusion, attrib.DefaultOptions(), spStop)
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
		if opt := optimal(t, sym); got < opt {
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
	if _, err := New(net.Model, attrib.LRP, attrib.DefaultOptions(), spStop); err == nil || !strings.Contains(err.Error(), "reads 4 symbols, the network 2") {
		t.Errorf("alphabet mismatch: %v", err)
	}
	if _, err := New(net.Model, attrib.LRP, attrib.DefaultOptions(), Stop{}); err == nil {
		t.Error("no automaton accepted")
	}
	if _, err := New(net.Model, attrib.LRP, attrib.DefaultOptions(), Stop{DFA: whitebox.SPAutomaton(), Class: 5}); err == nil {
		t.Error("bad stop class accepted")
	}
}

// Issue 14: bad arguments are errors, never panics.
func TestBadArguments(t *testing.T) {
	net, _ := whitebox.New("sp-counter", whitebox.Config{})
	if _, err := New(nil, attrib.LRP, attrib.DefaultOptions(), spStop); err == nil || !strings.Contains(err.Error(), "nil network") {
		t.Errorf("nil network: %v", err)
	}
	for _, m := range []attrib.Method{9, -1} {
		if _, err := New(net.Model, m, attrib.DefaultOptions(), spStop); err == nil || !strings.Contains(err.Error(), "unknown method") {
			t.Errorf("method %d: %v", int(m), err)
		}
	}
	ev, err := New(net.Model, attrib.Occlusion, attrib.DefaultOptions(), spStop)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, sym := range [][]int{{9}, {-1}, {0, 1, 9}, {0, -1, 1}, {}, nil} {
		if _, err := ev.Run(ctx, sym); err == nil {
			t.Errorf("Run(%v): no error", sym)
		}
		if _, err := Optimal(spStop, sym); err == nil {
			t.Errorf("Optimal(%v): no error", sym)
		}
		if _, err := Random(whitebox.NewRand(1), spStop, sym); err == nil {
			t.Errorf("Random(%v): no error", sym)
		}
		if len(sym) > 0 {
			if _, err := spStop.Done(sym); err == nil || !strings.Contains(err.Error(), "out of range") {
				t.Errorf("Done(%v): %v", sym, err)
			}
		}
	}
	if _, err := (Stop{}).Done([]int{0}); err == nil {
		t.Error("Done without an automaton: no error")
	}
	if _, err := Optimal(Stop{}, []int{0}); err == nil {
		t.Error("Optimal without an automaton: no error")
	}
	if _, err := Random(nil, spStop, []int{0, 1}); err == nil {
		t.Error("Random with a nil generator: no error")
	}
	var zero Evaluator
	if _, err := zero.Run(ctx, []int{0}); err == nil {
		t.Error("the zero Evaluator ran")
	}
	var nilEv *Evaluator
	if _, err := nilEv.Run(ctx, []int{0}); err == nil {
		t.Error("a nil Evaluator ran")
	}
}

// FuzzAblation runs the evaluator, Random, Optimal and Done on arbitrary
// symbols (in range or not), methods and stop classes: errors, never
// panics; and on a valid string Optimal ≤ Run, Random ≤ len−1.
func FuzzAblation(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, int8(0), int8(0))
	f.Add([]byte{9, 255, 1}, int8(4), int8(1))
	f.Add([]byte{}, int8(9), int8(-1))
	f.Add([]byte{1, 0, 3, 2, 2, 1}, int8(-1), int8(5))
	net, err := whitebox.New("sp-counter", whitebox.Config{})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, raw []byte, method, class int8) {
		if len(raw) > 24 {
			raw = raw[:24]
		}
		sym := make([]int, len(raw))
		valid := len(raw) > 0
		for i, b := range raw {
			sym[i] = int(b%7) - 1 // −1 … 5: 0..3 valid
			valid = valid && sym[i] >= 0 && sym[i] < 4
		}
		stop := Stop{DFA: whitebox.SPAutomaton(), Class: int(class)}
		stopOK := class == 0 || class == 1
		_, errDone := stop.Done(sym)
		opt, errOpt := Optimal(stop, sym)
		rnd, errRnd := Random(whitebox.NewRand(uint64(len(raw))), stop, sym)
		if want := valid && stopOK; (errOpt == nil) != want || (errRnd == nil) != want || (errDone == nil) != (stopOK && (valid || len(sym) == 0)) {
			t.Fatalf("%v class %d: errors %v, %v, %v", sym, class, errDone, errOpt, errRnd)
		}
		ev, err := New(net.Model, attrib.Method(method), attrib.DefaultOptions(), stop)
		if methodOK := method >= 0 && int(method) < len(attrib.Methods()); (err == nil) != (methodOK && stopOK) {
			t.Fatalf("New(method %d, class %d): %v", method, class, err)
		}
		if err != nil {
			return
		}
		n, err := ev.Run(ctx, sym)
		if (err == nil) != valid {
			t.Fatalf("Run(%v): %v", sym, err)
		}
		if valid && (n < opt || n > len(sym)-1 || rnd < opt || rnd > len(sym)-1) {
			t.Fatalf("%v: Run %d, Random %d, Optimal %d", sym, n, rnd, opt)
		}
	})
}

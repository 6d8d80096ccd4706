package whitebox

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// walk runs net on every string of the trie of prefixes up to maxLen whose
// symbols keep(prefix) accepts, one LSTM step per trie node, and calls visit
// with each prefix and its logits.
func walk(t *testing.T, net *Net, maxLen int, keep func([]int) bool, visit func(prefix []int, logits []float64)) {
	t.Helper()
	nw := net.Model
	h := nw.Hidden()
	ws := mustRunner(t, nw)
	hs, cs := make([][]float64, maxLen+1), make([][]float64, maxLen+1)
	for d := range hs {
		hs[d], cs[d] = make([]float64, h), make([]float64, h)
	}
	prefix := make([]int, 0, maxLen)
	one := make([]int, 1)
	var rec func(depth int)
	rec = func(depth int) {
		if depth == maxLen {
			return
		}
		for s := range nw.Input() {
			prefix = append(prefix, s)
			if keep(prefix) {
				one[0] = s
				logits, err := ws.ForwardFrom(cell.OneHot(one), hs[depth], cs[depth])
				if err != nil {
					t.Fatal(err)
				}
				visit(prefix, logits)
				if err := ws.Final(hs[depth+1], cs[depth+1]); err != nil {
					t.Fatal(err)
				}
				rec(depth + 1)
			}
			prefix = prefix[:len(prefix)-1]
		}
	}
	rec(0)
}

// checkExhaustive asserts that net classifies every accepted prefix up to
// maxLen as its task does, and returns how many it checked.
func checkExhaustive(t *testing.T, net *Net, maxLen int, keep func([]int) bool) int {
	t.Helper()
	count, wrong := 0, 0
	walk(t, net, maxLen, keep, func(prefix []int, logits []float64) {
		count++
		want, err := net.Task.LabelSymbols(prefix)
		if err != nil {
			t.Fatalf("%s: label of %q: %v", net.Name, net.Task.Decode(prefix), err)
		}
		if got := cell.Predict(logits); got != want {
			if wrong < 5 {
				t.Errorf("%s %+v: %q classified %s, want %s (logits %v)", net.Name, net.Params,
					net.Task.Decode(prefix), net.Task.Classes[got], net.Task.Classes[want], logits)
			}
			wrong++
		}
	})
	if wrong > 0 {
		t.Errorf("%s %+v: %d of %d strings misclassified", net.Name, net.Params, wrong, count)
	}
	return count
}

func all([]int) bool { return true }

func mustNew(t *testing.T, name string, cfg Config) *Net {
	t.Helper()
	net, err := New(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return net
}

func TestCountingExhaustive(t *testing.T) {
	cfgs := []Config{{}}
	for m := 4; m <= 12; m++ { // the LRP saturation sweep
		cfgs = append(cfgs, Config{M: new(float64(m))})
	}
	for _, cfg := range cfgs {
		if n := checkExhaustive(t, mustNew(t, "counting", cfg), 10, all); n != 2046 {
			t.Fatalf("checked %d strings, want 2046", n)
		}
	}
}

func TestSPCounterExhaustive(t *testing.T) {
	us, maxLen, want := []float64{0.6, 0.7, 0.8, 1, 4, 8, 16, 64}, 10, 1398100 // the saturation sweep
	if testing.Short() {
		us, maxLen, want = []float64{0.7}, 8, 87380
	}
	for _, u := range us {
		if n := checkExhaustive(t, mustNew(t, "sp-counter", Config{U: new(u)}), maxLen, all); n != want {
			t.Fatalf("checked %d strings, want %d", n, want)
		}
	}
}

func TestSPFSAExhaustive(t *testing.T) {
	maxLen := 10
	if testing.Short() {
		maxLen = 8
	}
	checkExhaustive(t, mustNew(t, "sp-fsa", Config{}), maxLen, all)
}

// validBracket accepts prefixes of balanced strings no deeper than k.
func validBracket(k int) func([]int) bool {
	return func(p []int) bool {
		depth := 0
		stack := make([]int, 0, len(p))
		for _, s := range p {
			if s < 2 {
				stack = append(stack, s)
				depth = max(depth, len(stack))
				continue
			}
			if len(stack) == 0 || stack[len(stack)-1] != s-2 {
				return false
			}
			stack = stack[:len(stack)-1]
		}
		return depth <= k
	}
}

func TestBracketExhaustive(t *testing.T) {
	maxLen := 12
	if testing.Short() {
		maxLen = 10
	}
	for _, k := range []int{50, 4, 1, 2} {
		t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
			n := checkExhaustive(t, mustNew(t, "bracket", Config{K: new(k)}), maxLen, validBracket(k))
			t.Logf("k=%d: %d valid prefixes up to length %d", k, n, maxLen)
		})
	}
}

func TestSPAutomatonMatchesTask(t *testing.T) {
	a := SPAutomaton()
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	task := SPTask()
	walk(t, mustNew(t, "sp-counter", Config{}), 9, all, func(p []int, _ []float64) {
		want, _ := task.LabelSymbols(p)
		if got, err := a.ClassOfRun(p); err != nil || got != want {
			t.Fatalf("automaton says %d for %q, task says %d", got, task.Decode(p), want)
		}
	})
}

// Config.Unchecked builds the sp-fsa network that New refuses, unchanged
// otherwise (Table 5's footnote uses it).
func TestUnchecked(t *testing.T) {
	if _, err := New("sp-fsa", Config{U: new(0.5)}); err == nil || !strings.Contains(err.Error(), "does not simulate") {
		t.Fatalf("u = 0.5 checked: %v", err)
	}
	net, err := New("sp-fsa", Config{U: new(0.5), Unchecked: true})
	if err != nil {
		t.Fatal(err)
	}
	sym, _ := net.Task.Encode("aaaab")
	logits, err := mustRunner(t, net.Model).Forward(cell.OneHot(sym))
	if err != nil {
		t.Fatal(err)
	}
	if got := cell.Predict(logits); got != 0 {
		t.Errorf("u = 0.5 predicts class %d for aaaab; the unchecked network was expected to fail it", got)
	}
	a, _ := New("sp-fsa", Config{})
	b, _ := New("sp-fsa", Config{Unchecked: true})
	if !slices.Equal(a.Model.Params().Cells[0].Wih, b.Model.Params().Cells[0].Wih) {
		t.Error("Unchecked changed the weights")
	}
}

package whitebox

import (
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// predictsTruth reports whether net predicts the task's answer for s.
func predictsTruth(t *testing.T, net *Net, ws *cell.Runner, s string) bool {
	t.Helper()
	sym, err := net.Task.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	want, err := net.Task.LabelSymbols(sym)
	if err != nil {
		t.Fatal(err)
	}
	y, err := ws.Forward(cell.OneHot(sym))
	if err != nil {
		t.Fatal(err)
	}
	return cell.Predict(y) == want
}

// TestBracketExactDepth walks the depth of the bracket network with the
// default parameters up to its first failure, and checks that it is the
// documented BracketExactDepth + 1: for each depth d, a bottom bracket
// under d−1 brackets of either kind that are then closed (the answer is
// the bottom's closer, which the network reads from its top-of-stack unit
// after the pops: the 2^(j+1)-scaled weights lose it to rounding first).
func TestBracketExactDepth(t *testing.T) {
	net, err := New("bracket", Config{})
	if err != nil {
		t.Fatal(err)
	}
	ws := mustRunner(t, net.Model)
	closer := map[string]string{"(": ")", "[": "]"}
	first := 0
	for d := 1; d <= DefaultStackSize && first == 0; d++ {
		for _, p := range [][2]string{{"[", "("}, {"(", "["}, {"[", "["}, {"(", "("}} {
			s := p[0] + strings.Repeat(p[1], d-1) + strings.Repeat(closer[p[1]], d-1)
			if !predictsTruth(t, net, ws, s) {
				first = d
				t.Logf("first failure at depth %d: %.8s…", d, s)
				break
			}
		}
	}
	if first != BracketExactDepth+1 {
		t.Errorf("the bracket network (k = %d, m = %d) first fails at depth %d; BracketExactDepth says %d", DefaultStackSize, DefaultM, first, BracketExactDepth)
	}
}

// TestLongStrings: counting and both SP networks, with the default
// parameters, classify long strings of several shapes correctly, up to
// CheckedLength (a walk to 2^18 found no failure either; it takes 25 s).
func TestLongStrings(t *testing.T) {
	rep := strings.Repeat
	families := map[string][]func(n int) string{
		"counting": {
			func(n int) string { return rep("a", n) + rep("b", n) },
			func(n int) string { return rep("a", n+1) + rep("b", n) },
			func(n int) string { return rep("b", n) + rep("a", n+1) },
			func(n int) string { return rep("ab", n) + "a" },
			func(n int) string { return rep("ba", n) },
		},
		"sp": {
			func(n int) string { return rep("a", n) + "b" },
			func(n int) string { return rep("b", n) + rep("a", n) },
			func(n int) string { return rep("d", n) + "c" },
			func(n int) string { return rep("ca", n) },
			func(n int) string { return rep("ca", n) + "b" },
			func(n int) string { return "a" + rep("c", n) + "b" },
			func(n int) string { return rep("bdac", n) },
		},
	}
	most := CheckedLength
	if testing.Short() {
		most = 1 << 10
	}
	for _, name := range []string{"counting", "sp-counter", "sp-fsa"} {
		net, err := New(name, Config{})
		if err != nil {
			t.Fatal(err)
		}
		ws := mustRunner(t, net.Model)
		fs := families["sp"]
		if name == "counting" {
			fs = families["counting"]
		}
		for n := 1; n <= most; n *= 2 {
			for i, f := range fs {
				if s := f(n); len(s) <= most && !predictsTruth(t, net, ws, s) {
					t.Fatalf("%s: shape %d fails at length %d", name, i, len(s))
				}
			}
		}
	}
}

// mustRunner returns a runner of s, closed at the end of the test.
func mustRunner(t testing.TB, s *cell.Model) *cell.Runner {
	t.Helper()
	r, err := cell.NewRunner(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

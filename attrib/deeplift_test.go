package attrib

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// DeepLIFT on one-hot input is DeepLIFT on the one-hot rows made dense,
// bit for bit, and its scores sum to delta.
func TestDeepLIFTOneHotIsDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	net := randomNetwork(t, rng, 5, 4, 3)
	s := net
	syms := []int{0, 3, -1, 2, 2, 1}
	x := cell.ScaledOneHot(syms, 0.8)
	dense, _ := x.AppendDense(nil, 4)
	for _, row := range [][]float64{nil, {0.1, -0.2, 0.3, 0.05}} {
		opt := Options{Class: ClassIndex(1), Baseline: row}
		a, err := Attribute(t.Context(), net, DeepLIFT, x, opt)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Attribute(t.Context(), s, DeepLIFT, cell.Dense(dense, len(syms)), opt)
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(a.Features, b.Features) || !sameBits(a.Scores, b.Scores) || a.Delta != b.Delta {
			t.Errorf("baseline %v: one-hot %v, dense rows %v", row, a.Scores, b.Scores)
		}
		if scale := math.Abs(a.Logits[1]) + maxAbs(a.Scores); math.Abs(a.Delta) > 1e-12*scale {
			t.Errorf("baseline %v: summation-to-delta residual %v", row, a.Delta)
		}
		if a.Method != DeepLIFT || a.Class != ClassIndex(1) || a.Len != len(syms) {
			t.Errorf("result %v class %v len %d", a.Method, a.Class, a.Len)
		}
	}
}

// On the white-box networks DeepLIFT sums to delta on every input of a
// few, for the predicted class; its bits are the same for every budget
// and worker count, and steady-state calls do not allocate.
func TestDeepLIFTWhitebox(t *testing.T) {
	for _, name := range []string{"counting", "sp-counter", "bracket"} {
		net := mustNet(t, name, whitebox.Config{})
		e := mustExplainer(t, net.Model)
		var res, other Result
		for _, s := range []string{"ab", "aabb", "abcd", "(())(", "bbba"} {
			sym, err := net.Task.Encode(s)
			if err != nil {
				continue
			}
			x := cell.OneHot(sym)
			if err := e.Attribute(t.Context(), DeepLIFT, x, Options{}, &res); err != nil {
				t.Fatal(err)
			}
			if scale := math.Abs(res.Logits[res.Class.k]) + maxAbs(res.Scores); math.Abs(res.Delta) > 1e-9*scale {
				t.Errorf("%s %q: residual %v of %v", name, s, res.Delta, scale)
			}
			if err := e.Attribute(t.Context(), DeepLIFT, x, Options{Workers: 1, Budget: 1 << 20}, &other); err != nil {
				t.Fatal(err)
			}
			if !sameBits(res.Features, other.Features) || res.Delta != other.Delta {
				t.Errorf("%s %q: other budget, other bits", name, s)
			}
			f := func() { _ = e.Attribute(t.Context(), DeepLIFT, x, Options{}, &res) }
			if a := testing.AllocsPerRun(10, f); a != 0 {
				t.Errorf("%s: %v allocations per call", name, a)
			}
		}
	}
}

// A budget below DeepLIFT's two traces is refused before they are taken;
// bad baselines are named.
func TestDeepLIFTRefusals(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 3))
	net := randomNetwork(t, rng, 4, 3, 2)
	x := cell.OneHot([]int{0, 1, 2, 0})
	if _, err := Attribute(t.Context(), net, DeepLIFT, x, Options{Budget: 1000}); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("tiny budget: %v", err)
	}
	if _, err := Attribute(t.Context(), net, DeepLIFT, x, Options{Baseline: []float64{0, 0}}); err == nil || !strings.Contains(err.Error(), "Baseline has 2 values") {
		t.Errorf("short baseline: %v", err)
	}
	if _, err := Attribute(t.Context(), net, DeepLIFT, x, Options{Baseline: []float64{0, math.Inf(1), 0}}); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("infinite baseline: %v", err)
	}
	if _, err := Attribute(t.Context(), net, DeepLIFT, x, Options{Class: ClassIndex(2)}); err == nil || !strings.Contains(err.Error(), "class 2") {
		t.Errorf("class 2 of 2: %v", err)
	}
}

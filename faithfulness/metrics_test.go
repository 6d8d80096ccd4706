package faithfulness

import (
	"math"
	"slices"
	"testing"
)

// additive is a toy model whose output is the sum of the weights of the
// kept tokens, whatever the removal: every metric is computable by hand.
func additive(w []float64) Output {
	return func(keep []bool, r Removal) (float64, error) {
		s := 0.0
		for i, k := range keep {
			if k {
				s += w[i]
			}
		}
		return s, nil
	}
}

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("%s = %.15g, want %.15g", name, got, want)
	}
}

var toy = []float64{0.4, 0.1, 0.3, 0.2}

func TestBinSize(t *testing.T) {
	for _, c := range []struct {
		b    float64
		t, k int
	}{{0.01, 4, 1}, {0.2, 4, 1}, {0.5, 4, 2}, {0.1, 10, 1}, {0.2, 10, 2}, {0.5, 9, 5}, {0.05, 20, 1}, {0.1, 11, 2}, {0.5, 1, 1}} {
		if got := BinSize(c.b, c.t); got != c.k {
			t.Errorf("BinSize(%v, %d) = %d, want %d", c.b, c.t, got, c.k)
		}
	}
}

func TestOrders(t *testing.T) {
	s := []float64{0.5, -1, 0.5, 2}
	if got := MostRelevantFirst(s); !slices.Equal(got, []int{3, 0, 2, 1}) {
		t.Errorf("MostRelevantFirst = %v", got)
	}
	if got := LeastRelevantFirst(s); !slices.Equal(got, []int{1, 0, 2, 3}) {
		t.Errorf("LeastRelevantFirst = %v", got)
	}
}

func TestAOPC(t *testing.T) {
	// Bins of 4 tokens: 1, 1, 1, 1 and 2 tokens. The top token weighs 0.4,
	// the top two 0.7: comprehensiveness (4·0.4 + 0.7)/5, sufficiency
	// (4·0.6 + 0.3)/5.
	f := additive(toy)
	for _, r := range removalList {
		comp, err := AOPC(toy, f, r, false)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "comprehensiveness", comp, 0.46)
		suff, err := AOPC(toy, f, r, true)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "sufficiency", suff, 0.54)
	}
	if _, err := AOPC([]float64{1, math.NaN()}, f, Delete, false); err == nil {
		t.Error("a NaN score: no error")
	}
	if _, err := AOPC(nil, f, Delete, false); err == nil {
		t.Error("no scores: no error")
	}
}

func TestCurve(t *testing.T) {
	f := additive(toy)
	morf := MostRelevantFirst(toy)
	// Deletion: 1, 0.6, 0.3, 0.1, 0; insertion: 0, 0.4, 0.7, 0.9, 1.
	del, err := Curve(morf, f, Delete, false)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "MoRF deletion", del, (1.6+0.9+0.4+0.1)/2/4)
	ins, err := Curve(morf, f, Zero, true)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "MoRF insertion", ins, (0.4+1.1+1.6+1.9)/2/4)
	// LeRF deletion: 1, 0.9, 0.7, 0.4, 0.
	lerf, err := Curve(LeastRelevantFirst(toy), f, Delete, false)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "LeRF deletion", lerf, (1.9+1.6+1.1+0.4)/2/4)
	for _, bad := range [][]int{{0, 0, 1, 2}, {0, 1, 2, 4}, {}} {
		if _, err := Curve(bad, f, Delete, false); err == nil {
			t.Errorf("order %v: no error", bad)
		}
	}
}

func TestInfidelity(t *testing.T) {
	f := additive(toy)
	subsets := [][]bool{{true, false, false, false}, {false, true, false, false}, {true, true, false, true}}
	// Exact scores, or any multiple: every subset's change is explained.
	for _, scale := range []float64{1, 2.5} {
		s := make([]float64, len(toy))
		for i := range s {
			s[i] = scale * toy[i]
		}
		v, err := Infidelity(s, f, subsets)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "infidelity of exact scores", v, 0)
	}
	// a = (1, 0), d = (0.4, 0.1): (Σd² − (Σad)²/Σa²)/N = (0.17 − 0.16)/2.
	v, err := Infidelity([]float64{1, 0, 0, 0}, f, subsets[:2])
	if err != nil {
		t.Fatal(err)
	}
	near(t, "infidelity", v, 0.005)
	// All-zero scores: β = 0, the mean of d².
	v, err = Infidelity(make([]float64, 4), f, subsets[:2])
	if err != nil {
		t.Fatal(err)
	}
	near(t, "infidelity of zero scores", v, 0.085)
	if _, err := Infidelity(toy, f, [][]bool{{true}}); err == nil {
		t.Error("a subset of the wrong length: no error")
	}
	if _, err := Infidelity(toy, f, nil); err == nil {
		t.Error("no subsets: no error")
	}
}

func TestMaxSensitivity(t *testing.T) {
	v, err := MaxSensitivity([]float64{3, 4}, [][]float64{{3, 4}, {0, 4}, {3, 5}})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "max-sensitivity", v, 3.0/5)
	v, err = MaxSensitivity([]float64{0, 0}, [][]float64{{0, 2}})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "max-sensitivity of zero scores", v, 2)
	if _, err := MaxSensitivity([]float64{1}, [][]float64{{1, 2}}); err == nil {
		t.Error("perturbed scores of the wrong length: no error")
	}
}

func TestKendallTauB(t *testing.T) {
	near(t, "τ no ties", KendallTauB([]float64{1, 2, 3}, []float64{1, 3, 2}), 1.0/3)
	near(t, "τ reversed", KendallTauB([]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}), -1)
	// One pair tied in x: n_c = 2, n_0 = 3, n_1 = 1: 2/√(2·3).
	near(t, "τ with a tie", KendallTauB([]float64{1, 1, 2}, []float64{1, 2, 3}), 2/math.Sqrt(6))
	// n_c = 7, n_d = 1, one pair tied in each: 6/√(9·9).
	near(t, "τ ties in both", KendallTauB([]float64{1, 2, 2, 3, 4}, []float64{2, 1, 3, 3, 5}), 0.6666666666666669)
	// Values equal up to rounding are tied.
	near(t, "τ with a rounding tie", KendallTauB([]float64{1, 1 + 1e-15, 2}, []float64{1, 2, 3}), 2/math.Sqrt(6))
	if v := KendallTauB([]float64{1, 1}, []float64{1, 2}); !math.IsNaN(v) {
		t.Errorf("τ of a constant = %v, want NaN", v)
	}
}

func TestAgreement(t *testing.T) {
	var a Agreement
	// Pairs (0,1): truth orders, metric ties: ½; (0,2): agree; (1,2): disagree.
	a.Add([]float64{1, 0, 0.5}, []float64{3, 3, 1})
	a.Add([]float64{1, 1}, []float64{0, 5})             // tied in truth: skipped
	a.Add([]float64{1, 0}, []float64{0.3, 0.3 + 1e-16}) // a metric tie up to rounding: ½
	if a.Pairs != 4 || a.Score != 2 {
		t.Errorf("agreement %+v, want 4 pairs, score 2", a)
	}
	near(t, "fraction", a.Fraction(), 0.5)
	if v := (Agreement{}).Fraction(); !math.IsNaN(v) {
		t.Errorf("fraction of no pairs = %v, want NaN", v)
	}
}

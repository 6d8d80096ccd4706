package evaluate

import (
	"math"
	"testing"

	"github.com/whitebox-lstm/whitebox/whitebox"
)

func evaluator(t *testing.T, name string) *Evaluator {
	t.Helper()
	net, err := whitebox.New(name, whitebox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(net)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func score(t *testing.T, e *Evaluator, input, class string, scores []float64) []Value {
	t.Helper()
	sym, err := e.Net().Task.Encode(input)
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.Net().Task.Class(class)
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.Score(sym, c, scores)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCounting(t *testing.T) {
	e := evaluator(t, "counting")
	for _, c := range []struct {
		input, class string
		scores       []float64
		sign         float64
		signMet      bool
		spread       float64 // NaN: undefined
		spreadMet    bool
	}{
		{"aab", "True", []float64{1, 1, -1}, 1, true, 0, true},           // perfect
		{"aab", "True", []float64{-1, -1, 1}, 0, false, 0, true},         // reversed
		{"aab", "False", []float64{-1, -1, 1}, 1, true, 0, true},         // perfect for False
		{"aab", "True", []float64{0, 0, 0}, 0, false, math.NaN(), false}, // blank
		{"abab", "True", []float64{2, -1, 2, -1}, 1, true, 1.0 / 3, false},
		{"abab", "True", []float64{1, 1, 1, -1}, 0.75, false, 0, true},
		{"aab", "True", []float64{1e308, 1e308, -1e308}, 1, true, 0, true},  // no overflow
		{"ab", "True", []float64{4e-6, -4e-6}, 0, false, math.NaN(), false}, // below the threshold
	} {
		v := score(t, e, c.input, c.class, c.scores)
		if !v[0].Applies || v[0].Value != c.sign || v[0].Met != c.signMet {
			t.Errorf("%s %v: sign %+v, want %v met %v", c.input, c.scores, v[0], c.sign, c.signMet)
		}
		if math.IsNaN(c.spread) {
			if v[1].Defined || v[1].Met || !v[1].Applies {
				t.Errorf("%s %v: spread %+v, want undefined", c.input, c.scores, v[1])
			}
		} else if !v[1].Defined || math.Abs(v[1].Value-c.spread) > 1e-12 || v[1].Met != c.spreadMet {
			t.Errorf("%s %v: spread %+v, want %v met %v", c.input, c.scores, v[1], c.spread, c.spreadMet)
		}
	}
}

// bruteSP: position i is in a pair (i, j) or (j, i) that is a subsequence.
func bruteSP(sym []int) []bool {
	in := make([]bool, len(sym))
	for i := range sym {
		for j := i + 1; j < len(sym); j++ {
			for _, p := range spPairs {
				if sym[i] == p[0] && sym[j] == p[1] {
					in[i], in[j] = true, true
				}
			}
		}
	}
	return in
}

func TestSPPositionsExhaustive(t *testing.T) {
	for n := 1; n <= 7; n++ {
		sym := make([]int, n)
		for code := 0; code < 1<<(2*n); code++ {
			for i := range sym {
				sym[i] = code >> (2 * i) & 3
			}
			got, want := SPPositions(sym), bruteSP(sym)
			any := false
			for i := range got {
				any = any || want[i]
				if got[i] != want[i] {
					t.Fatalf("%v: got %v, want %v", sym, got, want)
				}
			}
			if found, _ := whitebox.ContainsSP(sym); found != any {
				t.Fatalf("%v: ContainsSP %v but positions %v", sym, found, want)
			}
		}
	}
}

func TestSP(t *testing.T) {
	for _, name := range []string{"sp-counter", "sp-fsa"} {
		e := evaluator(t, name)
		// accb: G = {a, b}.
		perfect := score(t, e, "accb", "True", []float64{1, 0, 0, 1})
		want := []float64{1, 1, 1, 25, 25}
		for i, w := range want {
			if v := perfect[i]; !v.Applies || !v.Defined || v.Value != w || !v.Met {
				t.Errorf("%s perfect %s: %+v, want %v met", name, SPCriteria()[i], v, w)
			}
		}
		reversed := score(t, e, "accb", "True", []float64{0, 1, 1, 0})
		// precision 0, recall 0, pointing 0; ablation deletes c, c, a: 75%.
		want = []float64{0, 0, 0, 75, 25}
		for i, w := range want {
			if v := reversed[i]; !v.Applies || !v.Defined || v.Value != w || v.Met != (i == 4) {
				t.Errorf("%s reversed %s: %+v, want %v", name, SPCriteria()[i], v, w)
			}
		}
		blank := score(t, e, "accb", "True", []float64{0, 0, 0, 0})
		if blank[0].Defined || blank[0].Met || blank[1].Value != 0 || blank[2].Met {
			t.Errorf("%s blank: %+v", name, blank)
		}
		// A tie between a position in G and one outside misses the pointing game.
		tie := score(t, e, "accb", "True", []float64{1, 1, 0, 0.5})
		if tie[2].Met || tie[0].Value != 2.0/3 || tie[1].Value != 1 {
			t.Errorf("%s tie: %+v", name, tie)
		}
		for _, v := range score(t, e, "aaa", "False", []float64{0, 0, 0}) {
			if v.Applies {
				t.Errorf("%s: a False string: %+v applies", name, v)
			}
		}
	}
}

func TestBracket(t *testing.T) {
	e := evaluator(t, "bracket")
	for _, c := range []struct {
		input, class string
		scores       []float64
		applies, met bool
	}{
		{"([", "]", []float64{0, 1}, true, true},
		{"([", "]", []float64{0, -1}, true, true},
		{"([", "]", []float64{1, 1}, true, false},
		{"([", "]", []float64{1, 0}, true, false},
		{"([]", ")", []float64{3, 2, 1}, true, true},
		{"([]", ")", []float64{0, 0, 0}, true, false},
		{"([]", "]", []float64{3, 2, 1}, false, false},
		{"([])", "None", []float64{3, 2, 1, 0}, false, false},
		{"()", "None", []float64{1, 1}, false, false},
	} {
		v := score(t, e, c.input, c.class, c.scores)[0]
		if v.Applies != c.applies || v.Met != c.met {
			t.Errorf("%s %v: %+v, want applies %v met %v", c.input, c.scores, v, c.applies, c.met)
		}
	}
}

func TestScoreErrors(t *testing.T) {
	e := evaluator(t, "sp-fsa")
	for _, c := range []struct {
		sym    []int
		class  int
		scores []float64
	}{
		{nil, 1, nil},
		{[]int{0, 1}, 1, []float64{1}},
		{[]int{0, 1}, 2, []float64{1, 1}},
		{[]int{0, 7}, 1, []float64{1, 1}},
		{[]int{0, 1}, 1, []float64{math.NaN(), 1}},
		{[]int{0, 1}, 1, []float64{math.Inf(1), 1}},
	} {
		if _, err := e.Score(c.sym, c.class, c.scores); err == nil {
			t.Errorf("Score(%v, %d, %v): no error", c.sym, c.class, c.scores)
		}
	}
	if _, err := New(nil); err == nil {
		t.Error("New(nil): no error")
	}
}

func TestAccumulator(t *testing.T) {
	a := NewAccumulator([]string{"x"})
	for _, v := range []Value{defined(1, true), defined(3, false), {Applies: true}, {}} {
		if err := a.Add([]Value{v}); err != nil {
			t.Fatal(err)
		}
	}
	s := a.Summaries()[0]
	if s.Inputs != 4 || s.Applicable != 3 || s.Defined != 2 || s.Met != 1 || s.Mean != 2 || s.Std != 1 {
		t.Errorf("summary %+v", s)
	}
	if p := s.MetPercent(); math.Abs(p-100.0/3) > 1e-12 {
		t.Errorf("MetPercent %v", p)
	}
	if err := a.Add(nil); err == nil {
		t.Error("Add of no values: no error")
	}
	if err := a.Add([]Value{defined(math.NaN(), false)}); err == nil {
		t.Error("Add of NaN: no error")
	}
}

func TestZeroValues(t *testing.T) {
	var e Evaluator
	if _, err := e.Score([]int{0}, 0, []float64{1}); err == nil {
		t.Error("zero Evaluator: no error")
	}
	var r *Report
	if err := r.Write(nil, "text"); err == nil {
		t.Error("nil Report: no error")
	}
}

package cell

import (
	"context"
	"errors"
	"testing"
)

// LRP's refusal of a relevance that is not finite matches ErrNotFinite,
// with either LRP rule, so that a caller (package attrib)
// can look for the cause: its message stays LRP's.
func TestLRPErrNotFinite(t *testing.T) {
	// All weights zero: every z is 0, so ε = 0 divides by zero.
	p := netParams{Hidden: 1, Input: 1, Classes: 1, Wx: make([]float64, 4), Wh: make([]float64, 4), B: make([]float64, 4), Wy: make([]float64, 1), By: make([]float64, 1)}
	n := mustNew(t, p)
	rel := make([]float64, 2)
	if _, err := n.LRP(OneHot([]int{0, 0}), 0, 0, 0, rel); !errors.Is(err, ErrNotFinite) {
		t.Errorf("LRPHao: %v", err)
	}
	s, err := NewModel(Params{Input: 1, Hidden: 1, Layers: 1, Classes: 1,
		Cells: []CellParams{{Wih: make([]float64, 4), Whh: make([]float64, 4)}}, Wy: make([]float64, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(s)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.LRPContext(context.Background(), Dense([]float64{0, 0}, 2), 0, 0, 0, rel); !errors.Is(err, ErrNotFinite) {
		t.Errorf("LRPArras: %v", err)
	}
	if _, err := n.LRP(OneHot([]int{0, 0}), 0, DefaultEpsilon, 0, rel); err != nil {
		t.Errorf("ε = 0.001: %v", err)
	}
}

package attrib

import (
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// mustExplainer is NewExplainer(m), failing the test on its error.
func mustExplainer(tb testing.TB, m Model) *Explainer {
	tb.Helper()
	e, err := NewExplainer(m)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// mustRunner returns a runner of s, closed at the end of the test.
func mustRunner(tb testing.TB, s *cell.Model) *cell.Runner {
	tb.Helper()
	r, err := cell.NewRunner(s)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// oneLayer is a one-layer LSTM classifier of the white-box networks' shape
// (head hn, one Linear decoder) and LRP rule (cell.LRPHao): W_x 4H×D, W_h
// 4H×H, B 4H, W_y C×H, b_y C.
func oneLayer(tb testing.TB, h, d, c int, wx, wh, b, wy, by []float64) *cell.Model {
	tb.Helper()
	s, err := cell.NewModel(cell.Params{Input: d, Hidden: h, Layers: 1, Classes: c,
		Cells: []cell.CellParams{{Wih: wx, Whh: wh, B: b}}, Wy: wy, By: by, LRP: cell.LRPHao})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

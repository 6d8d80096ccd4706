package attrib_test

import (
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// engineRecords records the engine's raw passes on sym: the logits, LRP
// with the paper's rule (cell.LRPHao; class 0 and the last, ε = 0.001),
// the final state, and a pass over sym's second half continued from the
// state its first half left.
func engineRecords(t *testing.T, g *golden, net *whitebox.Net, key string, sym []int) {
	t.Helper()
	s := net.Model
	r, err := cell.NewRunner(s)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	y, err := r.Forward(cell.OneHot(sym))
	if err != nil {
		t.Fatal(err)
	}
	g.add(key+" forward", y...)
	h, c := make([]float64, s.Hidden()), make([]float64, s.Hidden())
	if err := r.Final(h, c); err != nil {
		t.Fatal(err)
	}
	g.add(key+" final h", h...)
	g.add(key+" final c", c...)
	for _, class := range []int{0, s.Classes() - 1} {
		rel := make([]float64, len(sym)*s.Input())
		out, err := r.LRP(cell.OneHot(sym), class, cell.DefaultEpsilon, 0, rel)
		if err != nil {
			g.err(key+" lrp", err)
			continue
		}
		g.add(key+" lrp rel", rel...)
		g.add(key+" lrp out", out.Output, out.Bias, out.Initial)
	}
	half := len(sym) / 2
	if half == 0 {
		return
	}
	if _, err := r.Forward(cell.OneHot(sym[:half])); err != nil {
		t.Fatal(err)
	}
	if err := r.Final(h, c); err != nil {
		t.Fatal(err)
	}
	y, err = r.ForwardFrom(cell.OneHot(sym[half:]), h, c)
	if err != nil {
		t.Fatal(err)
	}
	g.add(key+" from logits", y...)
	h2, c2 := make([]float64, s.Hidden()), make([]float64, s.Hidden())
	if err := r.Final(h2, c2); err != nil {
		t.Fatal(err)
	}
	g.add(key+" from final h", h2...)
	g.add(key+" from final c", c2...)
}

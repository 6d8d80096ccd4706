package attrib_test

import (
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// engineRecords records the engine's raw passes on sym: the logits, LRP
// with the paper's rule (class 0 and the last, ε = 0.001), the final state,
// and a pass over sym's second half continued from the state its first
// half left.
func engineRecords(t *testing.T, g *golden, net *whitebox.Net, key string, sym []int) {
	t.Helper()
	n := net.Network
	ws := cell.NewWorkspace(n)
	y, err := n.Forward(ws, cell.OneHot(sym))
	if err != nil {
		t.Fatal(err)
	}
	g.add(key+" forward", y...)
	h, c := ws.Final()
	g.add(key+" final h", h...)
	g.add(key+" final c", c...)
	for _, class := range []int{0, n.Classes() - 1} {
		rel := make([]float64, len(sym)*n.Input())
		out, err := n.LRP(ws, cell.OneHot(sym), class, cell.DefaultEpsilon, rel)
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
	if _, err := n.Forward(ws, cell.OneHot(sym[:half])); err != nil {
		t.Fatal(err)
	}
	h, c = ws.Final()
	h, c = append([]float64(nil), h...), append([]float64(nil), c...)
	y, err = n.ForwardFrom(ws, cell.OneHot(sym[half:]), h, c)
	if err != nil {
		t.Fatal(err)
	}
	g.add(key+" from logits", y...)
	h, c = ws.Final()
	g.add(key+" from final h", h...)
	g.add(key+" from final c", c...)
}

package onnx

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// The GRU exports of ../model/testdata/gru/onnx (gen_gru.py): nn.GRU
// classifiers, uni- and bidirectional, one and two layers, four heads,
// opsets 11 to 17, with float64 PyTorch logits.
const gruFixtureDir = "../model/testdata/gru/onnx"

func loadGRUFixtures(t testing.TB) []fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(gruFixtureDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s: %v", gruFixtureDir, err)
	}
	var all []fixture
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f fixture
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		all = append(all, f)
	}
	return all
}

func decodeGRU(t testing.TB, file string) *Model {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(gruFixtureDir, file))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The interpreter's GRU gives float64 PyTorch's logits to 1e-12 (and the
// float32 model's to float32 precision); the recogniser reads each export
// as a GRU model of its shape and head, whose logits equal the
// graph's (Check) and PyTorch's to 1e-12; CheckInput still checks other
// lengths.
func TestGRUExports(t *testing.T) {
	heads := map[string]bool{}
	for _, f := range loadGRUFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			m := decodeGRU(t, f.File)
			p, err := Prepare(m)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Recognize(m)
			if err != nil {
				t.Fatal(err)
			}
			pp := r.Params
			if pp.Kind != cell.LayerGRU || pp.Layers != f.Layers || pp.Bidirectional != f.Bi || pp.Units != f.Units {
				t.Fatalf("recognised %v, %d layers, bi %v, %d units: %s", pp.Kind, pp.Layers, pp.Bidirectional, pp.Units, r.Describe())
			}
			head := f.Head
			if !f.Bi && head == "hn-bf" {
				head = "hn"
			}
			if pp.Head.String() != head || !strings.HasPrefix(r.Describe(), "GRU nodes") {
				t.Fatalf("head %v, want %s: %s", pp.Head, head, r.Describe())
			}
			heads[head] = true
			net, err := cell.NewModel(pp)
			if err != nil {
				t.Fatal(err)
			}
			if d, err := r.Check(net); err != nil || d > 1e-12 {
				t.Fatalf("Check: %v (%.3g)", err, d)
			}
			run, err := cell.NewRunner(net)
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			for _, c := range f.Cases {
				env, err := p.Run(idsTensor(c.IDs, true), nil)
				if err != nil {
					t.Fatal(err)
				}
				y := p.Output(env).F
				x := make([]float64, 0, len(c.IDs)*pp.Input)
				for _, id := range c.IDs {
					x = append(x, r.Embedding[id*pp.Input:(id+1)*pp.Input]...)
				}
				got, err := run.Forward(cell.Dense(x, len(c.IDs)))
				if err != nil {
					t.Fatal(err)
				}
				for i := range c.Logits {
					tol := 1e-12 * max(1, math.Abs(c.Logits[i]))
					if math.Abs(y[i]-c.Logits[i]) > tol || math.Abs(got[i]-c.Logits[i]) > tol {
						t.Errorf("ids %v: logit %d: graph %.17g, engine %.17g, float64 PyTorch %.17g", c.IDs, i, y[i], got[i], c.Logits[i])
					}
					if math.Abs(y[i]-c.LogitsF32[i]) > 1e-5*max(1, math.Abs(c.Logits[i])) {
						t.Errorf("ids %v: logit %d = %.9g, float32 PyTorch %.9g", c.IDs, i, y[i], c.LogitsF32[i])
					}
				}
				if d, err := r.CheckInput(net, c.IDs, x, got, 1<<24); err != nil || d > CheckTolerance {
					t.Errorf("CheckInput at %d tokens: %v (%.3g)", len(c.IDs), err, d)
				}
			}
			// A length beyond the probes, and logits that are not the graph's.
			ids := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 0, 1, 2, 3}
			x := make([]float64, 0, len(ids)*pp.Input)
			for _, id := range ids {
				x = append(x, r.Embedding[id*pp.Input:(id+1)*pp.Input]...)
			}
			got, err := run.Forward(cell.Dense(x, len(ids)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.CheckInput(net, ids, x, got, 1<<24); err != nil {
				t.Errorf("CheckInput at %d tokens: %v", len(ids), err)
			}
			got[0] += 1e-3
			var le *LengthError
			if _, err := r.CheckInput(net, ids, x, got, 1<<24); !errors.As(err, &le) {
				t.Errorf("CheckInput with other logits: %v, want a *LengthError", err)
			}
		})
	}
	for _, h := range []string{"hn", "last", "mean", "max"} {
		if !heads[h] {
			t.Errorf("no GRU export with head %s", h)
		}
	}
}

// A GRU node whose attributes the engine cannot express is refused by the
// recogniser, and by the interpreter, naming the attribute.
func TestGRUAttributesRefused(t *testing.T) {
	for _, c := range []struct {
		edit func(n *Node)
		want string
	}{
		{func(n *Node) { setAttr(n, Attr{Name: "linear_before_reset", Type: AttrInt, I: 0}) }, "linear_before_reset = 0"},
		{func(n *Node) { dropAttr(n, "linear_before_reset") }, "linear_before_reset = 0 (the default)"},
		{func(n *Node) { setAttr(n, Attr{Name: "clip", Type: AttrFloat, F: 3}) }, "clip = 3: not supported"},
		{func(n *Node) {
			setAttr(n, Attr{Name: "activations", Type: AttrStrings, Strings: [][]byte{[]byte("HardSigmoid"), []byte("Tanh")}})
		}, `activations ["HardSigmoid" "Tanh"]`},
		{func(n *Node) {
			setAttr(n, Attr{Name: "activation_alpha", Type: AttrFloats, Floats: []float32{1}})
		}, `attribute "activation_alpha": not supported`},
		{func(n *Node) { setAttr(n, Attr{Name: "direction", Type: AttrString, S: []byte("reverse")}) }, "direction reverse alone"},
	} {
		m := decodeGRU(t, "gru_hn_uni1.onnx")
		for i := range m.Graph.Nodes {
			if m.Graph.Nodes[i].OpType == "GRU" {
				c.edit(&m.Graph.Nodes[i])
			}
		}
		_, err := Recognize(m)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "GRU node") {
			t.Errorf("Recognize: %v; want an error naming the GRU node and %q", err, c.want)
		}
		if strings.Contains(c.want, "direction") {
			continue // the interpreter evaluates a reverse GRU
		}
		p, err := Prepare(m)
		if err == nil {
			_, err = p.Run(idsTensor([]int{1, 2}, true), nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("the interpreter: %v; want an error naming %q", err, c.want)
		}
	}
}

func dropAttr(n *Node, name string) {
	for i := range n.Attrs {
		if n.Attrs[i].Name == name {
			n.Attrs = slices.Delete(slices.Clone(n.Attrs), i, i+1)
			return
		}
	}
}

package onnx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

func recognizeFile(t testing.TB, file string) (*Recognized, error) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, file))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(b)
	if err != nil {
		return nil, err
	}
	return Recognize(m)
}

// Every export is recognised with the head, layers, directions and
// classifier it was made with, and the model built from it equals the
// graph on the probes.
func TestRecognizeFixtures(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			r, err := recognizeFile(t, f.File)
			if err != nil {
				t.Fatal(err)
			}
			p := r.Params
			act := map[string]cell.Activation{"": cell.ActNone, "relu": cell.ActReLU, "tanh": cell.ActTanh}[f.Act]
			head := f.Head
			if !f.Bi && head == "hn-bf" {
				head = "hn" // the same function for one direction
			}
			if p.Head.String() != head || p.Act != act || p.Layers != f.Layers || p.Bidirectional != f.Bi || p.Units != f.Units {
				t.Fatalf("recognised %s", r.Describe())
			}
			if (r.SeqLen > 0) != (f.SeqLen > 0) || (r.SeqAxis == 1) != f.BatchFrst || r.Dense != f.Dense || (r.Embedding == nil) != f.Dense {
				t.Fatalf("sequence axis %d, fixed length %d; want batch first %v, fixed %d", r.SeqAxis, r.SeqLen, f.BatchFrst, f.SeqLen)
			}
			net, err := cell.NewModel(p)
			if err != nil {
				t.Fatal(err)
			}
			d, err := r.Check(net)
			if err != nil {
				t.Fatal(err)
			}
			if d > 1e-13 {
				t.Errorf("graph and engine differ by %.3g relative", d)
			}
		})
	}
}

// A model whose weights are not the graph's is caught by Check, naming
// the first node that differs.
func TestCheckNamesNode(t *testing.T) {
	r, err := recognizeFile(t, "hnbf_bi2_o13.onnx")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(p *cell.Params)
		want string
	}{
		{func(p *cell.Params) { p.Cells[3].Whh[5] += 1e-3 }, `LSTM node "/lstm/LSTM_1"`},
		{func(p *cell.Params) { p.Cells[0].B[0] += 1e-3 }, `LSTM node "/lstm/LSTM"`},
		{func(p *cell.Params) { p.Head = cell.HeadHN }, `the head`},
		{func(p *cell.Params) { p.By[1] += 1e-3 }, `the classifier`},
	} {
		p := r.Params
		p.Cells = append([]cell.CellParams(nil), p.Cells...)
		for i := range p.Cells {
			p.Cells[i] = cell.CellParams{Wih: append([]float64(nil), p.Cells[i].Wih...), Whh: append([]float64(nil), p.Cells[i].Whh...), B: append([]float64(nil), p.Cells[i].B...)}
		}
		p.By = append([]float64(nil), p.By...)
		c.edit(&p)
		net, err := cell.NewModel(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Check(net); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check: %v; want an error naming %s", err, c.want)
		}
	}
}

// Graphs that are not Embedding → LSTM → head → Linear are refused with
// the node that is not understood.
func TestRecognizeRefuses(t *testing.T) {
	for file, want := range map[string]string{
		"custom_op.onnx": `FancyGemm node "/fc/Gemm" of domain "com.example": a custom operator`,
		"cn_head.onnx":   `none of the heads of LSTM node "/lstm/LSTM"`,
		"h0_ones.onnx":   `its initial_h is not zero`,
		"external.onnx":  `external data`,
	} {
		_, err := recognizeFile(t, file)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want an error containing %q", file, err, want)
		}
	}
}

// An extra MatMul between the head and the classifier (a projection, as
// attention layers have) is refused naming it, though it is an operator
// the interpreter evaluates.
func TestExtraMatMulRefused(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(fixtureDir, "mean_bi2_o17.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	proj := &Tensor{Name: "proj", DataType: TypeFloat, Shape: []int{12, 12}, F: make([]float64, 144)}
	for i := range 12 {
		proj.F[i*13] = 1
	}
	m.Graph.Initializers = append(m.Graph.Initializers, proj)
	var nodes []Node
	for _, n := range m.Graph.Nodes {
		if n.OpType == "Gemm" {
			nodes = append(nodes, Node{Name: "/attn/MatMul", OpType: "MatMul", Inputs: []string{n.Inputs[0], "proj"}, Outputs: []string{"projected"}})
			n.Inputs = append([]string{"projected"}, n.Inputs[1:]...)
		}
		nodes = append(nodes, n)
	}
	m.Graph.Nodes = nodes
	_, err = Recognize(m)
	if err == nil || !strings.Contains(err.Error(), `MatMul node "/attn/MatMul" before the classifier`) {
		t.Fatalf("extra MatMul: %v", err)
	}
}

package onnx

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// toLayout1 rewrites every LSTM node of m to layout 1 (batch first),
// with Transposes around it so that the graph computes the same function.
func toLayout1(m *Model) {
	perm := func(in, out string, p ...int64) Node {
		return Node{Name: out, OpType: "Transpose", Inputs: []string{in}, Outputs: []string{out},
			Attrs: []Attr{{Name: "perm", Type: AttrInts, Ints: p}}}
	}
	var nodes []Node
	made := map[string]bool{}
	for _, n := range m.Graph.Nodes {
		if n.OpType != "LSTM" {
			nodes = append(nodes, n)
			continue
		}
		n.Inputs = slices.Clone(n.Inputs)
		nodes = append(nodes, perm(n.Inputs[0], n.Name+"/X1", 1, 0, 2))
		n.Inputs[0] = n.Name + "/X1"
		for k := 5; k < 7 && k < len(n.Inputs); k++ {
			if n.Inputs[k] != "" {
				if name := n.Inputs[k] + "/" + n.Name + "/1"; !made[name] {
					nodes = append(nodes, perm(n.Inputs[k], name, 1, 0, 2))
					made[name] = true
				}
				n.Inputs[k] += "/" + n.Name + "/1"
			}
		}
		outs := n.Outputs
		n.Outputs = []string{outs[0] + "/1", outs[1] + "/1", outs[2] + "/1"}
		n.Attrs = append(slices.Clone(n.Attrs), Attr{Name: "layout", Type: AttrInt, I: 1})
		nodes = append(nodes, n,
			perm(n.Outputs[0], outs[0], 1, 2, 0, 3),
			perm(n.Outputs[1], outs[1], 1, 0, 2),
			perm(n.Outputs[2], outs[2], 1, 0, 2))
	}
	m.Graph.Nodes = nodes
}

// An LSTM of layout 1 (the batch-first layout of opset 14) is read and
// evaluated like the same graph in layout 0: same logits, same model.
func TestLayout1(t *testing.T) {
	for _, f := range loadFixtures(t) {
		if f.Name != "hnbf_bi2_o13" && f.Name != "max_uni2_o9" && f.Name != "last_bi1_seqtanh_o14" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(fixtureDir, f.File))
		if err != nil {
			t.Fatal(err)
		}
		m0, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		m1, _ := Decode(b)
		toLayout1(m1)
		r0, err := Recognize(m0)
		if err != nil {
			t.Fatal(err)
		}
		r1, err := Recognize(m1)
		if err != nil {
			t.Fatalf("%s in layout 1: %v", f.Name, err)
		}
		if r1.Params.Head != r0.Params.Head || !slices.Equal(r1.layout, []int64{1, 1}[:len(r1.layout)]) || r1.layout[0] != 1 {
			t.Fatalf("%s: layout %v, head %v; want layout 1, head %v", f.Name, r1.layout, r1.Params.Head, r0.Params.Head)
		}
		net, err := cell.NewModel(r1.Params)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r1.Check(net); err != nil {
			t.Fatal(err)
		}
		for _, c := range f.Cases {
			env, err := r1.prog.Run(r1.Inputs(c.IDs), nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := relDiff(r1.prog.Output(env).F, c.Logits); d > 1e-12 {
				t.Errorf("%s layout 1, ids %v: logits differ from PyTorch's by %.3g", f.Name, c.IDs, d)
			}
		}
	}
}

// A backward-only LSTM (direction reverse) is evaluated but not read as a
// model: the engine has no such layer.
func TestReverseRefused(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(fixtureDir, "last_uni1_o11.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Graph.Nodes {
		if n := &m.Graph.Nodes[i]; n.OpType == "LSTM" {
			n.Attrs = append(n.Attrs, Attr{Name: "direction", Type: AttrString, S: []byte("reverse")})
		}
	}
	p, err := Prepare(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(&Tensor{DataType: TypeInt64, Shape: []int{1, 3}, I: []int64{1, 2, 3}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Recognize(m); err == nil || !strings.Contains(err.Error(), "direction reverse alone") {
		t.Fatalf("reverse: %v", err)
	}
}

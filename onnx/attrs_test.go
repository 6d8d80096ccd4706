package onnx

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// recognizeBoth recognises m as it is and as written to a file and
// decoded again (so that what only the file can hold, such as a value in
// another type's field, is read as Decode reads it).
func recognizeBoth(m *Model) (direct, file error) {
	_, direct = Recognize(m)
	dm, file := Decode(encodeModel(m))
	if file == nil {
		_, file = Recognize(dm)
	}
	return direct, file
}

// An attribute is checked as onnx.checker checks it: of the type its
// operator declares (an INT alpha would be read from the FLOAT field as 0,
// the logits then the bias), given once (else the first would win
// silently), and holding a value of its own type only. The error names
// the node, the attribute and the types.
func TestAttrTypes(t *testing.T) {
	for _, c := range []struct {
		name     string
		op       string
		edit     func(n *Node)
		want     string
		fileOnly bool
	}{
		{"INT alpha", "Gemm", func(n *Node) { setAttr(n, Attr{Name: "alpha", Type: AttrInt, I: 1}) },
			`Gemm node "/fc/Gemm": attribute "alpha" is INT, want FLOAT`, false},
		{"FLOAT transB", "Gemm", func(n *Node) { setAttr(n, Attr{Name: "transB", Type: AttrFloat, F: 1}) },
			`Gemm node "/fc/Gemm": attribute "transB" is FLOAT, want INT`, false},
		{"UNDEFINED beta", "Gemm", func(n *Node) { setAttr(n, Attr{Name: "beta", F: 1}) },
			`Gemm node "/fc/Gemm": attribute "beta" is UNDEFINED, want FLOAT`, false},
		{"repeated alpha", "Gemm", func(n *Node) { n.Attrs = append(n.Attrs, Attr{Name: "alpha", Type: AttrFloat, F: 2}) },
			`Gemm node "/fc/Gemm": attribute "alpha" is given twice`, false},
		{"FLOAT alpha holding an INT", "Gemm", func(n *Node) { setAttr(n, Attr{Name: "alpha", Type: AttrFloat, I: 2}) },
			`Gemm node "/fc/Gemm": attribute "alpha" is FLOAT but holds a value of type INT`, true},
		{"negative type", "Gemm", func(n *Node) { setAttr(n, Attr{Name: "alpha", Type: -1, F: 1}) },
			`Gemm node "/fc/Gemm": attribute "alpha" is type -1`, false},
		{"unknown type", "LSTM", func(n *Node) { setAttr(n, Attr{Name: "layout", Type: 99, I: 1}) },
			`LSTM node "/lstm/LSTM": attribute "layout" is type 99`, false},
		{"FLOAT hidden_size", "LSTM", func(n *Node) { setAttr(n, Attr{Name: "hidden_size", Type: AttrFloat, F: 6}) },
			`LSTM node "/lstm/LSTM": attribute "hidden_size" is FLOAT, want INT`, false},
		{"INTS direction", "LSTM", func(n *Node) { setAttr(n, Attr{Name: "direction", Type: AttrInts, Ints: []int64{2}}) },
			`LSTM node "/lstm/LSTM": attribute "direction" is INTS, want STRING`, false},
		{"STRING layout", "LSTM", func(n *Node) { setAttr(n, Attr{Name: "layout", Type: AttrString, S: []byte("1")}) },
			`LSTM node "/lstm/LSTM": attribute "layout" is STRING, want INT`, false},
		{"STRING activations", "LSTM", func(n *Node) {
			setAttr(n, Attr{Name: "activations", Type: AttrString, S: []byte("Relu")})
		}, `LSTM node "/lstm/LSTM": attribute "activations" is STRING, want STRINGS`, false},
		{"repeated hidden_size", "LSTM", func(n *Node) { n.Attrs = append(n.Attrs, Attr{Name: "hidden_size", Type: AttrInt, I: 3}) },
			`LSTM node "/lstm/LSTM": attribute "hidden_size" is given twice`, false},
		{"STRING Gather axis", "Gather", func(n *Node) { setAttr(n, Attr{Name: "axis", Type: AttrString, S: []byte("1")}) },
			`Gather node "/embedding/Gather": attribute "axis" is STRING, want INT`, false},
		{"FLOATS perm", "Transpose", func(n *Node) { setAttr(n, Attr{Name: "perm", Type: AttrFloats, Floats: []float32{1, 0, 2}}) },
			`Transpose node "/lstm/Transpose": attribute "perm" is FLOATS, want INTS`, false},
		{"FLOAT keepdims", "ReduceMean", func(n *Node) { setAttr(n, Attr{Name: "keepdims", Type: AttrFloat}) },
			`ReduceMean node "/ReduceMean": attribute "keepdims" is FLOAT, want INT`, false},
		{"INT axes", "ReduceMean", func(n *Node) { setAttr(n, Attr{Name: "axes", Type: AttrInt, I: 1}) },
			`ReduceMean node "/ReduceMean": attribute "axes" is INT, want INTS`, false},
		{"INTS Concat axis", "Concat", func(n *Node) { setAttr(n, Attr{Name: "axis", Type: AttrInts, Ints: []int64{0}}) },
			`Concat node "/lstm/Concat": attribute "axis" is INTS, want INT`, false},
		{"FLOAT Constant value", "Constant", func(n *Node) { n.Attrs = []Attr{{Name: "value", Type: AttrFloat, F: 1}} },
			`Constant node "/lstm/Constant": attribute "value" is FLOAT, want TENSOR`, false},
		{"no name", "Gemm", func(n *Node) { n.Attrs = append(n.Attrs, Attr{Type: AttrInt, I: 1}) },
			`Gemm node "/fc/Gemm": attribute 3 has no name`, false},
	} {
		m := decodeFixture(t, "mean_bi2_o17.onnx")
		c.edit(nodeOf(t, m, c.op))
		direct, file := recognizeBoth(m)
		if file == nil || !strings.Contains(file.Error(), c.want) {
			t.Errorf("%s, from a file: %v; want an error containing %q", c.name, file, c.want)
		}
		if !c.fileOnly && (direct == nil || !strings.Contains(direct.Error(), c.want)) {
			t.Errorf("%s: %v; want an error containing %q", c.name, direct, c.want)
		}
	}
	// Attributes of the declared types, and an unknown one (ignored by
	// Gemm) of any type, are read as before.
	m := decodeFixture(t, "mean_bi2_o17.onnx")
	setAttr(nodeOf(t, m, "Gemm"), Attr{Name: "note", Type: AttrStrings, Strings: [][]byte{[]byte("x")}})
	if direct, file := recognizeBoth(m); direct != nil || file != nil {
		t.Errorf("well-typed attributes: %v, %v", direct, file)
	}
}

// Gemm's alpha and beta scale the weights: one that is not finite is
// named as the attribute it is, not as a NaN weight.
func TestGemmScaleNotFinite(t *testing.T) {
	for _, c := range []struct {
		attr string
		v    float32
		want string
	}{
		{"alpha", float32(math.NaN()), `Gemm node "/fc/Gemm": its attribute alpha is NaN: not finite`},
		{"alpha", float32(math.Inf(1)), `Gemm node "/fc/Gemm": its attribute alpha is +Inf: not finite`},
		{"beta", float32(math.NaN()), `Gemm node "/fc/Gemm": its attribute beta is NaN: not finite`},
		{"beta", float32(math.Inf(-1)), `Gemm node "/fc/Gemm": its attribute beta is -Inf: not finite`},
	} {
		m := decodeFixture(t, "mean_bi2_o17.onnx")
		setAttr(nodeOf(t, m, "Gemm"), Attr{Name: c.attr, Type: AttrFloat, F: c.v})
		direct, file := recognizeBoth(m)
		for _, err := range []error{direct, file} {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s = %v: %v; want an error containing %q", c.attr, c.v, err, c.want)
			}
		}
	}
}

// An Add of two values computed from the input is not a Linear layer's
// bias: a classifier reading Add(mean, max) of the LSTM's outputs, or a
// graph summing two Linear layers, is refused naming the Add for what it
// is, not as a classifier of more than two Linear layers.
func TestAddOfHeadsRefused(t *testing.T) {
	// The classifier reads Add(mean, max).
	m := decodeFixture(t, "mean_bi2_o17.onnx")
	var nodes []Node
	for _, n := range m.Graph.Nodes {
		if n.OpType == "Gemm" {
			mx := *nodeOf(t, m, "ReduceMean")
			mx.Name, mx.OpType, mx.Outputs = "/ReduceMax", "ReduceMax", []string{"/ReduceMax_output_0"}
			add := Node{Name: "/add/Add", OpType: "Add", Inputs: []string{n.Inputs[0], "/ReduceMax_output_0"}, Outputs: []string{"sum"}}
			nodes = append(nodes, mx, add)
			n.Inputs = append([]string{"sum"}, n.Inputs[1:]...)
		}
		nodes = append(nodes, n)
	}
	m.Graph.Nodes = nodes
	want := `Add node "/add/Add" adds two non-constant values ("/ReduceMean_output_0" and "/ReduceMax_output_0")`
	if _, err := Recognize(m); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "more than two Linear layers") {
		t.Errorf("Add of two heads: %v; want an error containing %q", err, want)
	}

	// The logits are the sum of two Linear layers on the head.
	m = decodeFixture(t, "mean_bi2_o17.onnx")
	fc := nodeOf(t, m, "Gemm")
	fc.Outputs = []string{"logits1"}
	fc2 := *fc
	fc2.Name, fc2.Outputs = "/fc2/Gemm", []string{"logits2"}
	m.Graph.Nodes = append(m.Graph.Nodes, fc2,
		Node{Name: "/add/Add", OpType: "Add", Inputs: []string{"logits1", "logits2"}, Outputs: []string{"logits"}})
	want = `Add node "/add/Add" adds two non-constant values ("logits1" and "logits2")`
	if _, err := Recognize(m); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("sum of two Linear layers: %v; want an error containing %q", err, want)
	}
}

// terminalSafe reports whether s holds no control character (C0, DEL,
// C1), no bidirectional or other format character, and no invalid UTF-8:
// nothing a terminal would act on.
func terminalSafe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// The file's strings (node names, op types, domains, attribute,
// initializer, input and output names) reach the errors of Decode,
// Prepare, Run and Recognize quoted, never raw: a name holding an escape
// sequence cannot retitle or clear the terminal that prints the error.
func TestErrorsEscaped(t *testing.T) {
	hostile := []string{"\x1b]0;title\x07", "\x1b[2J", "a\r\n\t\x00\x7fz", "\xc2\x9b2J", "\x9b31m", "\u202egpj.exe"}
	muts := []struct {
		name string
		edit func(m *Model, s string)
	}{
		{"op type", func(m *Model, s string) { nodeOf(t, m, "Gemm").OpType = s }},
		{"domain", func(m *Model, s string) { nodeOf(t, m, "Gemm").Domain = s }},
		{"node failing evaluation", func(m *Model, s string) {
			n := nodeOf(t, m, "LSTM")
			n.Name = s
			setAttr(n, Attr{Name: "layout", Type: AttrInt, I: 5})
		}},
		{"LSTM attribute", func(m *Model, s string) { setAttr(nodeOf(t, m, "LSTM"), Attr{Name: s, Type: AttrInt, I: 1}) }},
		{"attribute of the wrong type", func(m *Model, s string) {
			n := nodeOf(t, m, "Gemm")
			n.Name = s
			setAttr(n, Attr{Name: "alpha", Type: AttrInt, I: 1})
		}},
		{"attribute twice", func(m *Model, s string) {
			n := nodeOf(t, m, "Gemm")
			n.Attrs = append(slices.Clone(n.Attrs), Attr{Name: s, Type: AttrInt}, Attr{Name: s, Type: AttrInt})
		}},
		{"initializer twice", func(m *Model, s string) {
			for range 2 {
				m.Graph.Initializers = append(m.Graph.Initializers, &Tensor{Name: s, DataType: TypeFloat, Shape: []int{}, F: []float64{0}})
			}
		}},
		{"initializer of an unknown type", func(m *Model, s string) {
			m.Graph.Initializers = append(m.Graph.Initializers, &Tensor{Name: s, DataType: 99, Shape: []int{}})
		}},
		{"embedding", func(m *Model, s string) {
			for _, t := range m.Graph.Initializers {
				if t.Name == "embedding.weight" {
					t.Name = s
				}
			}
			nodeOf(t, m, "Gather").Inputs = []string{s, "ids-1"} // the ids shifted: not the embedding of the ids
			m.Graph.Initializers = append(m.Graph.Initializers, &Tensor{Name: "minus1", DataType: TypeInt64, Shape: []int{}, I: []int64{-1}})
			m.Graph.Nodes = append([]Node{{Name: "/shift", OpType: "Add", Inputs: []string{"ids", "minus1"}, Outputs: []string{"ids-1"}}}, m.Graph.Nodes...)
		}},
		{"classifier", func(m *Model, s string) {
			fc := nodeOf(t, m, "Gemm")
			fc.Name = s
			for i, t := range m.Graph.Initializers {
				if t.Name == fc.Inputs[1] { // one column too many
					m.Graph.Initializers[i] = &Tensor{Name: t.Name, DataType: TypeFloat, Shape: []int{t.Shape[0], t.Shape[1] + 1},
						F: make([]float64, t.Shape[0]*(t.Shape[1]+1))}
				}
			}
		}},
		{"second graph input", func(m *Model, s string) {
			m.Graph.Inputs = append(m.Graph.Inputs, ValueInfo{Name: s, ElemType: TypeInt64})
		}},
		{"undefined input", func(m *Model, s string) { nodeOf(t, m, "Gemm").Inputs[0] = s }},
		{"graph output", func(m *Model, s string) { m.Graph.Outputs[0].Name = s }},
		{"output written twice", func(m *Model, s string) {
			nodeOf(t, m, "LSTM").Outputs[2] = s
			fc := nodeOf(t, m, "Gemm")
			fc.Outputs = append(fc.Outputs, s)
		}},
	}
	ids := &Tensor{DataType: TypeInt64, Shape: []int{1, 3}, I: []int64{1, 2, 3}}
	for _, mu := range muts {
		for _, s := range hostile {
			m := decodeFixture(t, "mean_bi2_o17.onnx")
			mu.edit(m, s)
			direct, file := recognizeBoth(m)
			p, run := Prepare(m)
			if run == nil {
				_, run = p.Run(ids, nil)
			}
			quoted := false
			for _, err := range []error{direct, file, run} {
				if err == nil {
					continue
				}
				if !terminalSafe(err.Error()) {
					t.Errorf("%s %q: the error holds the raw string: %q", mu.name, s, err.Error())
				}
				quoted = quoted || strings.Contains(err.Error(), strconv.Quote(s))
			}
			if !quoted {
				t.Errorf("%s %q: no error names it (quoted): %v; %v; %v", mu.name, s, direct, file, run)
			}
		}
	}
}

// attrSeeds are exports with attributes of the wrong type, repeated,
// unnamed, holding another type's value or not finite, written as files:
// seeds for FuzzDecode.
func attrSeeds(t testing.TB) [][]byte {
	edits := []struct {
		op string
		a  Attr
		re bool // added again rather than replaced
	}{
		{"Gemm", Attr{Name: "alpha", Type: AttrInt, I: 2}, false},
		{"Gemm", Attr{Name: "transB", Type: AttrFloat, F: 1}, false},
		{"Gemm", Attr{Name: "alpha", Type: AttrFloat, F: 1, I: 2}, false},
		{"Gemm", Attr{Name: "alpha", Type: AttrFloat, F: 2}, true},
		{"Gemm", Attr{Name: "beta", Type: AttrFloat, F: float32(math.NaN())}, false},
		{"Gemm", Attr{Type: AttrInt, I: 1}, true},
		{"Gemm", Attr{Name: "alpha", Type: -1, F: 1}, false},
		{"LSTM", Attr{Name: "hidden_size", Type: AttrFloat, F: 6}, false},
		{"LSTM", Attr{Name: "hidden_size", Type: AttrInt, I: 3}, true},
		{"LSTM", Attr{Name: "direction", Type: AttrInts, Ints: []int64{2}}, false},
		{"Transpose", Attr{Name: "perm", Type: AttrFloats, Floats: []float32{1, 0, 2}}, false},
		{"Gather", Attr{Name: "axis", Type: AttrString, S: []byte("0")}, false},
	}
	var seeds [][]byte
	for _, file := range []string{"mean_bi2_o17.onnx", "max_bi1_fc12relu_o17.onnx"} {
		for _, e := range edits {
			m := decodeFixture(t, file)
			n := nodeOf(t, m, e.op)
			if e.re {
				n.Attrs = append(slices.Clone(n.Attrs), e.a)
			} else {
				setAttr(n, e.a)
			}
			seeds = append(seeds, encodeModel(m))
		}
	}
	return seeds
}

// A graph whose output is an Identity of a constant (its other input the
// LSTM's, so that the LSTM is live) is refused naming the constant, not
// with an internal error.
func TestOutputIdentityOfConstant(t *testing.T) {
	m := decodeFixture(t, "mean_bi2_o17.onnx")
	fc := nodeOf(t, m, "Gemm")
	fc.Outputs = []string{"fc_out"}
	m.Graph.Nodes = append(m.Graph.Nodes, Node{Name: "/id", OpType: "Identity", Inputs: []string{"fc.bias", "fc_out"}, Outputs: []string{"logits"}})
	want := `the graph's output "logits" is "fc.bias", not the logits of a Linear layer`
	if _, err := Recognize(m); err == nil || err.Error() != want {
		t.Fatalf("output Identity(constant): %v; want %q", err, want)
	}
}

// A finite alpha times a finite float64 weight can overflow: an error
// naming the Gemm, not an infinite weight in the model.
func TestGemmScaleOverflows(t *testing.T) {
	m := decodeFixture(t, "mean_bi2_o17.onnx")
	g := nodeOf(t, m, "Gemm")
	setAttr(g, Attr{Name: "alpha", Type: AttrFloat, F: 4})
	for i := range m.Graph.Initializers {
		if w := m.Graph.Initializers[i]; w.Name == g.Inputs[1] {
			w.DataType = TypeDouble
			w.F[0] = 1e308
		}
	}
	_, err := Recognize(m)
	if want := `Gemm node "/fc/Gemm": alpha × the weight overflows (4 × 1e+308)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%v; want an error containing %q", err, want)
	}
}

package onnx

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// encodeModel writes m as an ONNX protobuf, so that tests can build
// hostile files from the real exports (decoded, edited, written back)
// and feed them to Decode. An attribute is written with its type and
// every value field that is not zero, so that a type and a value of
// another type can both be written. A tensor keeps float32 and int64;
// other floats are written as float64, other integers as int64, and an
// unknown data type as that type with no values.
func encodeModel(m *Model) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(m.IRVersion))
	b = appendString(b, 2, m.Producer)
	b = appendString(b, 3, m.ProducerVersion)
	b = protowire.AppendTag(b, 7, protowire.BytesType)
	b = protowire.AppendBytes(b, encodeGraph(&m.Graph))
	opsets := m.Opsets
	if len(opsets) == 0 {
		opsets = map[string]int64{"": m.Opset}
	}
	doms := make([]string, 0, len(opsets))
	for d := range opsets {
		doms = append(doms, d)
	}
	slices.Sort(doms)
	for _, d := range doms {
		var o []byte
		o = appendString(o, 1, d)
		o = protowire.AppendTag(o, 2, protowire.VarintType)
		o = protowire.AppendVarint(o, uint64(opsets[d]))
		b = protowire.AppendTag(b, 8, protowire.BytesType)
		b = protowire.AppendBytes(b, o)
	}
	return b
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendMessage(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

func encodeGraph(g *Graph) []byte {
	var b []byte
	for i := range g.Nodes {
		b = appendMessage(b, 1, encodeNode(&g.Nodes[i]))
	}
	b = appendString(b, 2, g.Name)
	for _, t := range g.Initializers {
		b = appendMessage(b, 5, encodeTensor(t))
	}
	for _, v := range g.Inputs {
		b = appendMessage(b, 11, encodeValueInfo(v))
	}
	for _, v := range g.Outputs {
		b = appendMessage(b, 12, encodeValueInfo(v))
	}
	for range g.Sparse {
		b = appendMessage(b, 15, nil)
	}
	return b
}

func encodeNode(n *Node) []byte {
	var b []byte
	for _, s := range n.Inputs {
		b = appendString(b, 1, s)
	}
	for _, s := range n.Outputs {
		b = appendString(b, 2, s)
	}
	b = appendString(b, 3, n.Name)
	b = appendString(b, 4, n.OpType)
	for i := range n.Attrs {
		b = appendMessage(b, 5, encodeAttr(&n.Attrs[i]))
	}
	if n.Domain != "" {
		b = appendString(b, 7, n.Domain)
	}
	return b
}

func encodeAttr(a *Attr) []byte {
	var b []byte
	b = appendString(b, 1, a.Name)
	b = protowire.AppendTag(b, 20, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(a.Type))
	if a.F != 0 || math.IsNaN(float64(a.F)) {
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(a.F))
	}
	if a.I != 0 {
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(a.I))
	}
	if a.S != nil {
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendBytes(b, a.S)
	}
	if a.T != nil {
		b = appendMessage(b, 5, encodeTensor(a.T))
	}
	if a.Graph {
		b = appendMessage(b, 6, nil)
	}
	if len(a.Floats) > 0 {
		var p []byte
		for _, f := range a.Floats {
			p = binary.LittleEndian.AppendUint32(p, math.Float32bits(f))
		}
		b = appendMessage(b, 7, p)
	}
	if len(a.Ints) > 0 {
		var p []byte
		for _, v := range a.Ints {
			p = protowire.AppendVarint(p, uint64(v))
		}
		b = appendMessage(b, 8, p)
	}
	for _, s := range a.Strings {
		b = appendMessage(b, 9, s)
	}
	return b
}

func encodeTensor(t *Tensor) []byte {
	var b []byte
	for _, d := range t.Shape {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(d))
	}
	dt := t.DataType
	var raw []byte
	if _, known := dtypes[dt]; known {
		switch {
		case dt == TypeFloat:
			for _, v := range t.F {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(float32(v)))
			}
		case t.IsFloat():
			dt = TypeDouble
			for _, v := range t.F {
				raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(v))
			}
		default:
			dt = TypeInt64
			for _, v := range t.I {
				raw = binary.LittleEndian.AppendUint64(raw, uint64(v))
			}
		}
	}
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(dt))
	b = appendString(b, 8, t.Name)
	if raw != nil {
		b = appendMessage(b, 9, raw)
	}
	return b
}

func encodeValueInfo(v ValueInfo) []byte {
	var tt []byte
	tt = protowire.AppendTag(tt, 1, protowire.VarintType)
	tt = protowire.AppendVarint(tt, uint64(v.ElemType))
	if v.HasShape {
		var shape []byte
		for _, d := range v.Shape {
			var dim []byte
			if d.Fixed {
				dim = protowire.AppendTag(dim, 1, protowire.VarintType)
				dim = protowire.AppendVarint(dim, uint64(d.Value))
			} else {
				dim = appendString(dim, 2, d.Param)
			}
			shape = appendMessage(shape, 1, dim)
		}
		tt = appendMessage(tt, 2, shape)
	}
	var b []byte
	b = appendString(b, 1, v.Name)
	return appendMessage(b, 2, appendMessage(nil, 1, tt))
}

// decodeFixture decodes one of the exports.
func decodeFixture(t testing.TB, file string) *Model {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, file))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// nodeOf returns m's first node of op type op.
func nodeOf(t testing.TB, m *Model, op string) *Node {
	t.Helper()
	for i := range m.Graph.Nodes {
		if m.Graph.Nodes[i].OpType == op {
			return &m.Graph.Nodes[i]
		}
	}
	t.Fatalf("no %s node", op)
	return nil
}

// setAttr replaces (or adds) node n's attribute a.Name with a.
func setAttr(n *Node, a Attr) {
	n.Attrs = slices.Clone(n.Attrs)
	for i := range n.Attrs {
		if n.Attrs[i].Name == a.Name {
			n.Attrs[i] = a
			return
		}
	}
	n.Attrs = append(n.Attrs, a)
}

// The encoder writes back what Decode read: every export, decoded,
// written and decoded again, is recognised as the same model.
func TestEncodeRoundTrip(t *testing.T) {
	for _, f := range loadFixtures(t) {
		m := decodeFixture(t, f.File)
		r0, err := Recognize(m)
		if err != nil {
			t.Fatal(err)
		}
		m1, err := Decode(encodeModel(m))
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		r1, err := Recognize(m1)
		if err != nil {
			t.Fatalf("%s written back: %v", f.Name, err)
		}
		if r1.Describe() != r0.Describe() || !slices.Equal(r1.Params.Wy, r0.Params.Wy) || !slices.Equal(r1.Embedding, r0.Embedding) ||
			!slices.Equal(r1.Params.Cells[0].Wih, r0.Params.Cells[0].Wih) {
			t.Errorf("%s written back: %s, want %s", f.Name, r1.Describe(), r0.Describe())
		}
	}
}

package onnx

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The decoder reads the fields of onnx.proto (ModelProto, GraphProto,
// NodeProto, AttributeProto, TensorProto, ValueInfoProto) that a
// classifier needs, with protowire: every length is checked against the
// bytes left before anything is allocated, and an element count is never
// taken from the file without its bytes being there. Other fields are
// skipped. Nesting is fixed (model → graph → node → attribute → tensor):
// subgraph attributes (If, Loop, Scan) are skipped, not decoded, and such
// a node is refused by its op type, so no input drives a recursion.

// MaxElements bounds the elements of one tensor (2^29, as package
// tensorfile): a tensor beyond it is refused before it is converted.
const MaxElements = 1 << 29

// maxRank bounds the dimensions of a tensor.
const maxRank = 16

// Model is the decoded ModelProto: its default-domain opset and its graph.
type Model struct {
	IRVersion       int64
	Opset           int64            // the version of the default ("" or "ai.onnx") domain; 0 if not given
	Opsets          map[string]int64 // every opset_import by domain
	Producer        string           // producer_name and producer_version
	ProducerVersion string
	Graph           Graph
}

// Graph is the decoded GraphProto.
type Graph struct {
	Name         string
	Nodes        []Node
	Initializers []*Tensor
	Inputs       []ValueInfo
	Outputs      []ValueInfo
	Sparse       int // sparse initializers (refused by Load)
}

// Node is one NodeProto.
type Node struct {
	Name, OpType, Domain string
	Inputs, Outputs      []string
	Attrs                []Attr
}

// AttrType is AttributeProto.AttributeType.
type AttrType int

// The attribute types this package reads; the others are kept as their
// number (a node that needs them is refused).
const (
	AttrFloat   AttrType = 1
	AttrInt     AttrType = 2
	AttrString  AttrType = 3
	AttrTensor  AttrType = 4
	AttrGraph   AttrType = 5
	AttrFloats  AttrType = 6
	AttrInts    AttrType = 7
	AttrStrings AttrType = 8
)

// Attr is one AttributeProto.
type Attr struct {
	Name    string
	Type    AttrType
	F       float32
	I       int64
	S       []byte
	T       *Tensor
	Floats  []float32
	Ints    []int64
	Strings [][]byte
	Graph   bool // it holds a subgraph (not decoded)

	held uint32 // bit t: the file held a value field of type t (checkAttrs)
}

// String names t as onnx.proto does.
func (t AttrType) String() string {
	names := [...]string{"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS", "STRINGS",
		"TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"}
	if t >= 0 && int(t) < len(names) {
		return names[t]
	}
	return fmt.Sprintf("type %d", int(t))
}

// attrFields maps AttributeProto's value fields to their types.
var attrFields = map[protowire.Number]AttrType{
	2: AttrFloat, 3: AttrInt, 4: AttrString, 5: AttrTensor, 6: AttrGraph, 7: AttrFloats, 8: AttrInts, 9: AttrStrings,
	10: 9, 11: 10, 22: 11, 23: 12, 14: 13, 15: 14,
}

// ValueInfo is a graph input or output: its name, element type and shape.
type ValueInfo struct {
	Name     string
	ElemType int32
	Shape    []Dim // nil when the shape is not given
	HasShape bool
}

// Dim is one dimension: a fixed Value, or a symbolic Param (dynamic).
type Dim struct {
	Value int64
	Param string
	Fixed bool
}

// Error is a decoding error: where in the file (a path of fields) and what.
type Error struct {
	Where string
	Msg   string
}

func (e *Error) Error() string {
	if e.Where == "" {
		return "onnx: " + e.Msg
	}
	return "onnx: " + e.Where + ": " + e.Msg
}

// decoder walks one message.
type decoder struct {
	b     []byte
	where string
}

func (d *decoder) errf(format string, args ...any) error {
	return &Error{Where: d.where, Msg: fmt.Sprintf(format, args...)}
}

// next reads a field's tag; ok is false at the end.
func (d *decoder) next() (protowire.Number, protowire.Type, bool, error) {
	if len(d.b) == 0 {
		return 0, 0, false, nil
	}
	num, typ, n := protowire.ConsumeTag(d.b)
	if n < 0 {
		return 0, 0, false, d.errf("bad field tag: %v (truncated or not an ONNX file)", protowire.ParseError(n))
	}
	d.b = d.b[n:]
	return num, typ, true, nil
}

func (d *decoder) skip(num protowire.Number, typ protowire.Type) error {
	n := protowire.ConsumeFieldValue(num, typ, d.b)
	if n < 0 {
		return d.errf("field %d: %v (truncated or corrupt)", num, protowire.ParseError(n))
	}
	d.b = d.b[n:]
	return nil
}

func (d *decoder) bytes(num protowire.Number, typ protowire.Type) ([]byte, error) {
	if typ != protowire.BytesType {
		return nil, d.errf("field %d has wire type %d, want length-delimited", num, typ)
	}
	v, n := protowire.ConsumeBytes(d.b)
	if n < 0 {
		if l, k := protowire.ConsumeVarint(d.b); k > 0 && l > uint64(len(d.b)-k) {
			return nil, d.errf("field %d holds %d bytes but only %d remain: the file is truncated (or not an ONNX model)", num, l, len(d.b)-k)
		}
		return nil, d.errf("field %d: %v (truncated or corrupt)", num, protowire.ParseError(n))
	}
	d.b = d.b[n:]
	return v, nil
}

func (d *decoder) varint(num protowire.Number, typ protowire.Type) (uint64, error) {
	if typ != protowire.VarintType {
		return 0, d.errf("field %d has wire type %d, want varint", num, typ)
	}
	v, n := protowire.ConsumeVarint(d.b)
	if n < 0 {
		return 0, d.errf("field %d: %v (truncated or corrupt)", num, protowire.ParseError(n))
	}
	d.b = d.b[n:]
	return v, nil
}

func (d *decoder) str(num protowire.Number, typ protowire.Type) (string, error) {
	b, err := d.bytes(num, typ)
	return string(b), err
}

// varints appends a repeated varint field, packed or not.
func (d *decoder) varints(dst []int64, num protowire.Number, typ protowire.Type) ([]int64, error) {
	if typ == protowire.VarintType {
		v, err := d.varint(num, typ)
		return append(dst, int64(v)), err
	}
	b, err := d.bytes(num, typ)
	if err != nil {
		return dst, err
	}
	for len(b) > 0 { // each value takes at least one byte: no count from the file
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return dst, d.errf("field %d: packed varint: %v", num, protowire.ParseError(n))
		}
		dst = append(dst, int64(v))
		b = b[n:]
	}
	return dst, nil
}

// fixed32s appends a repeated float field, packed or not.
func (d *decoder) fixed32s(dst []float32, num protowire.Number, typ protowire.Type) ([]float32, error) {
	switch typ {
	case protowire.Fixed32Type:
		v, n := protowire.ConsumeFixed32(d.b)
		if n < 0 {
			return dst, d.errf("field %d: %v", num, protowire.ParseError(n))
		}
		d.b = d.b[n:]
		return append(dst, math.Float32frombits(v)), nil
	case protowire.BytesType:
		b, err := d.bytes(num, typ)
		if err != nil {
			return dst, err
		}
		if len(b)%4 != 0 {
			return dst, d.errf("field %d: packed floats of %d bytes, not a multiple of 4", num, len(b))
		}
		for i := 0; i < len(b); i += 4 {
			dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
		}
		return dst, nil
	}
	return dst, d.errf("field %d has wire type %d, want fixed32 or packed", num, typ)
}

// fixed64s appends a repeated double field, packed or not.
func (d *decoder) fixed64s(dst []float64, num protowire.Number, typ protowire.Type) ([]float64, error) {
	switch typ {
	case protowire.Fixed64Type:
		v, n := protowire.ConsumeFixed64(d.b)
		if n < 0 {
			return dst, d.errf("field %d: %v", num, protowire.ParseError(n))
		}
		d.b = d.b[n:]
		return append(dst, math.Float64frombits(v)), nil
	case protowire.BytesType:
		b, err := d.bytes(num, typ)
		if err != nil {
			return dst, err
		}
		if len(b)%8 != 0 {
			return dst, d.errf("field %d: packed doubles of %d bytes, not a multiple of 8", num, len(b))
		}
		for i := 0; i < len(b); i += 8 {
			dst = append(dst, math.Float64frombits(binary.LittleEndian.Uint64(b[i:])))
		}
		return dst, nil
	}
	return dst, d.errf("field %d has wire type %d, want fixed64 or packed", num, typ)
}

// Decode reads a serialized ModelProto. Its errors are *Error, naming the
// field where the file went wrong.
func Decode(b []byte) (m *Model, err error) {
	d := &decoder{b: b, where: "model"}
	m = &Model{Opsets: map[string]int64{}}
	sawGraph := false
	for {
		num, typ, ok, err := d.next()
		if err != nil || !ok {
			if err == nil && !sawGraph {
				err = d.errf("no graph (not an ONNX model, or an empty one)")
			}
			if err != nil {
				return nil, err
			}
			if v, ok := m.Opsets[""]; ok {
				m.Opset = v
			} else if v, ok := m.Opsets["ai.onnx"]; ok {
				m.Opset = v
			}
			return m, nil
		}
		switch num {
		case 1: // ir_version
			v, err := d.varint(num, typ)
			if err != nil {
				return nil, err
			}
			m.IRVersion = int64(v)
		case 2, 3: // producer_name, producer_version
			s, err := d.str(num, typ)
			if err != nil {
				return nil, err
			}
			if num == 2 {
				m.Producer = s
			} else {
				m.ProducerVersion = s
			}
		case 7: // graph
			if sawGraph {
				return nil, d.errf("two graphs")
			}
			b, err := d.bytes(num, typ)
			if err != nil {
				return nil, err
			}
			if err := decodeGraph(&m.Graph, b, "graph"); err != nil {
				return nil, err
			}
			sawGraph = true
		case 8: // opset_import
			b, err := d.bytes(num, typ)
			if err != nil {
				return nil, err
			}
			dom, ver, err := decodeOpset(b, d.where+".opset_import")
			if err != nil {
				return nil, err
			}
			m.Opsets[dom] = ver
		default:
			if err := d.skip(num, typ); err != nil {
				return nil, err
			}
		}
	}
}

func decodeOpset(b []byte, where string) (string, int64, error) {
	d := &decoder{b: b, where: where}
	var dom string
	var ver int64
	for {
		num, typ, ok, err := d.next()
		if err != nil || !ok {
			return dom, ver, err
		}
		switch num {
		case 1:
			if dom, err = d.str(num, typ); err != nil {
				return "", 0, err
			}
		case 2:
			v, err := d.varint(num, typ)
			if err != nil {
				return "", 0, err
			}
			ver = int64(v)
		default:
			if err := d.skip(num, typ); err != nil {
				return "", 0, err
			}
		}
	}
}

func decodeGraph(g *Graph, b []byte, where string) error {
	d := &decoder{b: b, where: where}
	for {
		num, typ, ok, err := d.next()
		if err != nil || !ok {
			return err
		}
		switch num {
		case 1: // node
			b, err := d.bytes(num, typ)
			if err != nil {
				return err
			}
			n, err := decodeNode(b, fmt.Sprintf("%s.node[%d]", where, len(g.Nodes)))
			if err != nil {
				return err
			}
			g.Nodes = append(g.Nodes, n)
		case 2:
			if g.Name, err = d.str(num, typ); err != nil {
				return err
			}
		case 5: // initializer
			b, err := d.bytes(num, typ)
			if err != nil {
				return err
			}
			t, err := decodeTensor(b, fmt.Sprintf("%s.initializer[%d]", where, len(g.Initializers)))
			if err != nil {
				return err
			}
			g.Initializers = append(g.Initializers, t)
		case 11, 12: // input, output
			b, err := d.bytes(num, typ)
			if err != nil {
				return err
			}
			field := map[protowire.Number]string{11: "input", 12: "output"}[num]
			list := &g.Inputs
			if num == 12 {
				list = &g.Outputs
			}
			v, err := decodeValueInfo(b, fmt.Sprintf("%s.%s[%d]", where, field, len(*list)))
			if err != nil {
				return err
			}
			*list = append(*list, v)
		case 15: // sparse_initializer
			g.Sparse++
			if err := d.skip(num, typ); err != nil {
				return err
			}
		default:
			if err := d.skip(num, typ); err != nil {
				return err
			}
		}
	}
}

func decodeNode(b []byte, where string) (Node, error) {
	d := &decoder{b: b, where: where}
	var n Node
	for {
		num, typ, ok, err := d.next()
		if err != nil || !ok {
			return n, err
		}
		switch num {
		case 1, 2: // input, output
			s, err := d.str(num, typ)
			if err != nil {
				return n, err
			}
			if num == 1 {
				n.Inputs = append(n.Inputs, s)
			} else {
				n.Outputs = append(n.Outputs, s)
			}
		case 3:
			if n.Name, err = d.str(num, typ); err != nil {
				return n, err
			}
		case 4:
			if n.OpType, err = d.str(num, typ); err != nil {
				return n, err
			}
		case 7:
			if n.Domain, err = d.str(num, typ); err != nil {
				return n, err
			}
		case 5: // attribute
			b, err := d.bytes(num, typ)
			if err != nil {
				return n, err
			}
			a, err := decodeAttr(b, fmt.Sprintf("%s.attribute[%d]", where, len(n.Attrs)))
			if err != nil {
				return n, err
			}
			n.Attrs = append(n.Attrs, a)
		default:
			if err := d.skip(num, typ); err != nil {
				return n, err
			}
		}
	}
}

func decodeAttr(b []byte, where string) (Attr, error) {
	d := &decoder{b: b, where: where}
	var a Attr
	for {
		num, typ, ok, err := d.next()
		if err != nil || !ok {
			return a, err
		}
		if t, ok := attrFields[num]; ok {
			a.held |= 1 << t
		}
		switch num {
		case 1:
			if a.Name, err = d.str(num, typ); err != nil {
				return a, err
			}
		case 20: // type
			v, err := d.varint(num, typ)
			if err != nil {
				return a, err
			}
			a.Type = AttrType(int32(v))
		case 2: // f
			fs, err := d.fixed32s(nil, num, typ)
			if err != nil {
				return a, err
			}
			if len(fs) != 1 {
				return a, d.errf("attribute f holds %d values", len(fs))
			}
			a.F = fs[0]
		case 3: // i
			v, err := d.varint(num, typ)
			if err != nil {
				return a, err
			}
			a.I = int64(v)
		case 4: // s
			if a.S, err = d.bytes(num, typ); err != nil {
				return a, err
			}
		case 5: // t
			b, err := d.bytes(num, typ)
			if err != nil {
				return a, err
			}
			if a.T, err = decodeTensor(b, where+".t"); err != nil {
				return a, err
			}
		case 6, 11: // g, graphs: not decoded (see the package's comment)
			a.Graph = true
			if err := d.skip(num, typ); err != nil {
				return a, err
			}
		case 7: // floats
			if a.Floats, err = d.fixed32s(a.Floats, num, typ); err != nil {
				return a, err
			}
		case 8: // ints
			if a.Ints, err = d.varints(a.Ints, num, typ); err != nil {
				return a, err
			}
		case 9: // strings
			s, err := d.bytes(num, typ)
			if err != nil {
				return a, err
			}
			a.Strings = append(a.Strings, s)
		default:
			if err := d.skip(num, typ); err != nil {
				return a, err
			}
		}
	}
}

func decodeValueInfo(b []byte, where string) (ValueInfo, error) {
	d := &decoder{b: b, where: where}
	var v ValueInfo
	for {
		num, typ, ok, err := d.next()
		if err != nil || !ok {
			return v, err
		}
		switch num {
		case 1:
			if v.Name, err = d.str(num, typ); err != nil {
				return v, err
			}
		case 2: // type: TypeProto; only tensor_type (1) is read
			b, err := d.bytes(num, typ)
			if err != nil {
				return v, err
			}
			if err := decodeType(&v, b, where+".type"); err != nil {
				return v, err
			}
		default:
			if err := d.skip(num, typ); err != nil {
				return v, err
			}
		}
	}
}

func decodeType(v *ValueInfo, b []byte, where string) error {
	d := &decoder{b: b, where: where}
	for {
		num, typ, ok, err := d.next()
		if err != nil || !ok {
			return err
		}
		if num != 1 {
			if err := d.skip(num, typ); err != nil {
				return err
			}
			continue
		}
		tb, err := d.bytes(num, typ)
		if err != nil {
			return err
		}
		td := &decoder{b: tb, where: where + ".tensor_type"}
		for {
			num, typ, ok, err := td.next()
			if err != nil || !ok {
				if err != nil {
					return err
				}
				break
			}
			switch num {
			case 1:
				e, err := td.varint(num, typ)
				if err != nil {
					return err
				}
				v.ElemType = int32(e)
			case 2: // shape: TensorShapeProto { repeated Dimension dim = 1 }
				sb, err := td.bytes(num, typ)
				if err != nil {
					return err
				}
				v.HasShape = true
				if v.Shape, err = decodeShape(sb, td.where+".shape"); err != nil {
					return err
				}
			default:
				if err := td.skip(num, typ); err != nil {
					return err
				}
			}
		}
	}
}

func decodeShape(b []byte, where string) ([]Dim, error) {
	d := &decoder{b: b, where: where}
	var dims []Dim
	for {
		num, typ, ok, err := d.next()
		if err != nil || !ok {
			return dims, err
		}
		if num != 1 {
			if err := d.skip(num, typ); err != nil {
				return nil, err
			}
			continue
		}
		db, err := d.bytes(num, typ)
		if err != nil {
			return nil, err
		}
		if len(dims) >= maxRank {
			return nil, d.errf("more than %d dimensions", maxRank)
		}
		dd := &decoder{b: db, where: fmt.Sprintf("%s.dim[%d]", where, len(dims))}
		var dim Dim
		for {
			num, typ, ok, err := dd.next()
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			switch num {
			case 1:
				v, err := dd.varint(num, typ)
				if err != nil {
					return nil, err
				}
				dim.Value, dim.Fixed, dim.Param = int64(v), true, ""
			case 2:
				if dim.Param, err = dd.str(num, typ); err != nil {
					return nil, err
				}
				dim.Fixed = false
			default:
				if err := dd.skip(num, typ); err != nil {
					return nil, err
				}
			}
		}
		dims = append(dims, dim)
	}
}

package model

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/onnx"
)

// MaxONNXBytes bounds an ONNX file (protobuf's own limit, 2 GiB): larger
// models store their weights as external data, which is refused.
const MaxONNXBytes = 1<<31 - 1

// IsONNX reports whether Load reads path as an ONNX model: its extension
// is .onnx (any case).
func IsONNX(path string) bool { return strings.EqualFold(filepath.Ext(path), ".onnx") }

// loadONNX reads an ONNX export (see package onnx): the graph gives the
// embedding, the layers, the head and the classifier; the model built
// from them is then checked against the graph itself, evaluated node by
// node, on a few inputs.
func loadONNX(path string, o Options) (*Model, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if st.Size() > MaxONNXBytes {
		return nil, fmt.Errorf("%d bytes: larger than an ONNX file can be (%d)", st.Size(), int64(MaxONNXBytes))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// Another model format named .onnx would be a protobuf error: say what
	// it is (Load reads the others by their content, under their names).
	switch {
	case strings.HasPrefix(string(b[:min(len(b), 4)]), "PK\x03\x04"):
		return nil, fmt.Errorf("this is a PyTorch zip (torch.save), not an ONNX model: rename it to .pt")
	case len(b) > 8 && b[8] == '{' && binary.LittleEndian.Uint64(b) <= uint64(len(b)-8):
		return nil, fmt.Errorf("this is a safetensors file, not an ONNX model: rename it to .safetensors")
	}
	if o.Names != (Names{}) {
		return nil, fmt.Errorf("the parts of an ONNX model are found from its graph: Names.Embedding, Names.LSTM and Names.Decoder name the tensors of a state_dict and are not for an ONNX file")
	}
	dm, err := onnx.Decode(b)
	if err != nil {
		return nil, err
	}
	r, err := onnx.Recognize(dm)
	if err != nil {
		return nil, err
	}
	p := r.Params
	if o.Head != nil {
		if !sameHead(*o.Head, p.Head, p.Bidirectional) {
			return nil, fmt.Errorf("head %v given, but the graph's head is %v (%s, node %q)", *o.Head, p.Head, HeadExpression(p.Head, dirs(p.Bidirectional)), r.HeadNode)
		}
		p.Head = *o.Head
	}
	if o.Act != cell.ActNone && o.Act != p.Act {
		return nil, fmt.Errorf("activation %v given, but the graph's classifier has %v (nodes %q)", o.Act, p.Act, r.Linears)
	}
	net, err := cell.NewModel(p)
	if err != nil {
		return nil, err
	}
	worst, err := r.Check(net)
	if err != nil {
		return nil, err
	}
	m := &Model{
		Path: path, Format: "onnx", Net: net, Embedding: r.Embedding, Vocab: r.Vocab,
		Names: Names{Embedding: r.EmbeddingTensor, LSTM: strings.Join(r.LSTMNodes, ", "), Decoder: r.Linears[0]},
		Head:  p.Head, Act: p.Act, HeadSource: HeadFromGraph,
		FixedLength: r.SeqLen, graph: r,
	}
	if len(r.Linears) == 2 {
		m.OutputLayer = r.Linears[1]
	}
	if n := len(r.AttentionNodes); n > 2 { // the score's Linear nodes, then Softmax and Mul
		m.Names.Attention = strings.Join(r.AttentionNodes[:n-2], ", ")
	}
	if err := m.resolvePad(nil, o); err != nil { // a graph has no metadata: Options alone
		return nil, err
	}
	axis := "dynamic"
	if r.SeqLen > 0 {
		axis = fmt.Sprintf("fixed at %d (other lengths are refused)", r.SeqLen)
	}
	m.Graph = fmt.Sprintf("opset %d (%s %s), sequence axis %s; the graph evaluated at lengths %v equals the model to %.2g relative, and is evaluated again on every input attributed, at its length",
		dm.Opset, dm.Producer, dm.ProducerVersion, axis, r.ProbeLengths(), worst)
	dtypes := map[string]bool{}
	for _, t := range dm.Graph.Initializers {
		role := r.Roles[t.Name]
		if role == "" {
			role = "constant"
		}
		dt := onnxDType(t.DataType)
		if r.Roles[t.Name] != "" {
			dtypes[dt] = true
		}
		m.Tensors = append(m.Tensors, TensorInfo{Name: t.Name, DType: dt, Shape: t.Shape, Role: role})
	}
	for dt := range dtypes {
		m.DType = dt
	}
	if len(dtypes) > 1 {
		m.DType = "mixed"
	}
	return m, nil
}

// sameHead reports whether heads a and b compute the same function: equal,
// or for one direction h_n[-1] and output[:, -1, :] in any spelling.
func sameHead(a, b cell.Head, bi bool) bool {
	last := func(h cell.Head) bool { return h == cell.HeadHN || h == cell.HeadHNBF || h == cell.HeadLast }
	return a == b || !bi && last(a) && last(b)
}

func dirs(bi bool) int {
	if bi {
		return 2
	}
	return 1
}

// onnxDType names an ONNX data type as tensorfile names dtypes.
func onnxDType(t int32) string {
	switch t {
	case onnx.TypeFloat:
		return "F32"
	case onnx.TypeDouble:
		return "F64"
	case onnx.TypeFloat16:
		return "F16"
	case onnx.TypeBfloat16:
		return "BF16"
	case onnx.TypeInt64:
		return "I64"
	case onnx.TypeInt32:
		return "I32"
	}
	return onnx.TypeName(t)
}

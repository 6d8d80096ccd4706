package onnx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/whitebox-lstm/whitebox/cell"
)

// Opsets this package reads (PyTorch's exporter writes 7 to 17 in torch
// 1.13; the operators used here keep their meaning up to 21).
const (
	MinOpset = 9
	MaxOpset = 21
)

// Recognized is what Recognize understood of a graph: the model as
// cell.Params (PyTorch's layout and gate order), the embedding,
// and where each part came from.
type Recognized struct {
	Params    cell.Params
	Embedding []float64 // V×E; nil for a model reading dense features
	Vocab     int

	EmbeddingTensor string   // the Gather's table (initializer name)
	LSTMNodes       []string // one per layer (LSTM or GRU nodes)
	HeadNode        string   // the node writing the classifier's input
	AttentionNodes  []string // an attention head's score layers (Linear nodes), Softmax, Mul
	Linears         []string // the classifier's Linear nodes (1 or 2)

	// SeqAxis is the sequence axis of the graph's input (1: [batch, T],
	// the usual; 0: [T, batch] or an unbatched [T]); SeqLen is the fixed
	// length of a graph exported without a dynamic axis, else 0.
	SeqAxis, SeqLen int
	Rank            int  // of the graph's input
	Dense           bool // the input is features (no embedding)
	bothDynamic     bool

	// Roles names the role of each initializer the model uses.
	Roles map[string]string

	prog   *Program
	lstms  []*Node // the recurrent nodes, one per layer: LSTM, or GRU (Params.Kind)
	vName  string  // the classifier's input tensor
	layout []int64

	sizeOnce        sync.Once // ValuesPerToken
	perToken, fixed int64
}

// minInputs is the least number of inputs of each operator (the
// recogniser reads them by position).
var minInputs = map[string]int{
	"Add": 2, "Concat": 1, "ConstantOfShape": 1, "Expand": 2, "Gather": 2, "Gemm": 2, "GRU": 3, "Identity": 1, "LSTM": 3,
	"MatMul": 2, "Mul": 2, "ReduceMax": 1, "ReduceMean": 1, "ReduceSum": 1, "Relu": 1, "Softmax": 1, "Reshape": 2, "Shape": 1, "Slice": 1, "Squeeze": 1,
	"Tanh": 1, "Transpose": 1, "Unsqueeze": 1,
}

// gateOrder maps PyTorch's gate blocks (i, f, g, o) to ONNX's (i, o, f, c).
var gateOrder = [4]int{0, 2, 3, 1}

// Recognize reads a decoded model as Embedding (Gather) → LSTM layers →
// head → one or two Linear layers, checking every part by evaluating the
// graph on probes (see the package doc). Anything else is an error naming
// the node.
func Recognize(m *Model) (r *Recognized, err error) {
	// The last line of defence: a bug that panics becomes an error.
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("onnx: internal error (please report): %v\n%s", p, debug.Stack())
		}
	}()
	return recognize(m)
}

func recognize(m *Model) (*Recognized, error) {
	r, err := recognizeProbed(m)
	if err != nil {
		return nil, err
	}
	if err := r.timeWindows(); err != nil {
		return nil, err
	}
	return r, nil
}

// recognizeProbed is recognize without timeWindows: the graph as the
// probes see it (for the tests of CheckInput, the guard behind it).
func recognizeProbed(m *Model) (*Recognized, error) {
	if m == nil {
		return nil, fmt.Errorf("onnx: no model")
	}
	if m.Opset < MinOpset || m.Opset > MaxOpset {
		return nil, fmt.Errorf("opset %d: not supported (opsets %d to %d are)", m.Opset, MinOpset, MaxOpset)
	}
	if m.Graph.Sparse > 0 {
		return nil, fmt.Errorf("the graph has sparse initializers: not supported")
	}
	p, err := Prepare(m)
	if err != nil {
		return nil, err
	}
	r := &Recognized{prog: p, Roles: map[string]string{}}
	for _, i := range p.Live {
		n := &p.Graph.Nodes[i]
		if n.Domain != "" && n.Domain != "ai.onnx" {
			return nil, fmt.Errorf("%s of domain %q: a custom operator, not supported", Describe(n), n.Domain)
		}
		if !slices.Contains(supportedOps, n.OpType) {
			what := "not supported"
			switch n.OpType {
			case "RNN":
				what = "a " + n.OpType + ", not an LSTM or GRU: not supported"
			case "MatMulInteger", "Attention", "MultiHeadAttention":
				what = "not supported (Embedding → LSTM → head → Linear only, the head possibly attention pooling)"
			}
			return nil, fmt.Errorf("%s: %s", Describe(n), what)
		}
		if k := minInputs[n.OpType]; len(n.Inputs) < k || len(n.Outputs) < 1 || k > 0 && n.Inputs[0] == "" {
			return nil, fmt.Errorf("%s has %d inputs and %d outputs; want at least %d and 1", Describe(n), len(n.Inputs), len(n.Outputs), k)
		}
		if n.OpType == "LSTM" || n.OpType == "GRU" {
			if len(r.lstms) > 0 && r.lstms[0].OpType != n.OpType {
				return nil, fmt.Errorf("%s after %s: layers of both kinds are not supported (all LSTM or all GRU)", Describe(n), Describe(r.lstms[0]))
			}
			r.lstms = append(r.lstms, n)
			r.LSTMNodes = append(r.LSTMNodes, n.Name)
		}
	}
	if len(r.lstms) == 0 {
		return nil, fmt.Errorf("the graph has no LSTM or GRU node")
	}
	consts, err := p.constants()
	if err != nil {
		return nil, err
	}
	if err := r.readLSTMs(consts); err != nil {
		return nil, err
	}
	if err := r.readClassifier(consts); err != nil {
		return nil, err
	}
	if err := r.readAttention(consts); err != nil {
		return nil, err
	}
	if err := r.readInput(consts); err != nil {
		return nil, err
	}
	if err := r.probe(); err != nil {
		return nil, err
	}
	return r, nil
}

// constants evaluates the live nodes that do not depend on the input.
func (p *Program) constants() (map[string]*Tensor, error) {
	dep := p.DependsOnInput()
	env := &Env{Values: map[string]*Tensor{}, maxElements: p.maxElements, maxMACs: p.maxMACs}
	for name, t := range p.Inits {
		env.Values[name] = t
	}
	for _, i := range p.Live {
		n := &p.Graph.Nodes[i]
		if len(n.Outputs) == 0 || dep[n.Outputs[0]] {
			continue
		}
		args := make([]*Tensor, len(n.Inputs))
		for k, name := range n.Inputs {
			if name != "" {
				args[k] = env.Values[name]
			}
		}
		outs, err := env.eval(p.Opset, n, args)
		if err != nil {
			return nil, &NodeError{Index: i, Node: n, Err: err}
		}
		for k, name := range n.Outputs {
			if name != "" && k < len(outs) {
				env.Values[name] = outs[k]
			}
		}
	}
	for name := range dep {
		if dep[name] {
			delete(env.Values, name)
		}
	}
	return env.Values, nil
}

// constant returns the value of a node input that must not depend on the
// graph's input.
func constInput(consts map[string]*Tensor, n *Node, k int, what string) (*Tensor, error) {
	if k >= len(n.Inputs) || n.Inputs[k] == "" {
		return nil, nil
	}
	t, ok := consts[n.Inputs[k]]
	if !ok {
		return nil, fmt.Errorf("%s: its %s (%q) depends on the input; it must be a constant", Describe(n), what, n.Inputs[k])
	}
	if !t.IsFloat() {
		return nil, fmt.Errorf("%s: its %s is %s", Describe(n), what, TypeName(t.DataType))
	}
	for i, v := range t.F {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: its %s holds %v at flat index %d; weights must be finite", Describe(n), what, v, i)
		}
	}
	return t, nil
}

func (r *Recognized) readLSTMs(consts map[string]*Tensor) error {
	pp := &r.Params
	if r.lstms[0].OpType == "GRU" {
		return r.readGRUs(consts)
	}
	for k, n := range r.lstms {
		if err := lstmAttrs(n); err != nil {
			return fmt.Errorf("%s: %v", Describe(n), err)
		}
		dirs := 1
		switch d := string(attrBytes(n, "direction", "forward")); d {
		case "forward":
		case "bidirectional":
			dirs = 2
		case "reverse":
			return fmt.Errorf("%s: direction reverse alone (a backward-only LSTM) is not supported; forward and bidirectional are", Describe(n))
		default:
			return fmt.Errorf("%s: direction %q", Describe(n), d)
		}
		r.layout = append(r.layout, attrInt(n, "layout", 0))
		w, err := constInput(consts, n, 1, "W")
		if err != nil {
			return err
		}
		rr, err := constInput(consts, n, 2, "R")
		if err != nil {
			return err
		}
		b, err := constInput(consts, n, 3, "B")
		if err != nil {
			return err
		}
		if p, err := constInput(consts, n, 7, "P (peepholes)"); err != nil || p != nil && slices.ContainsFunc(p.F, func(v float64) bool { return v != 0 }) {
			if err == nil {
				err = fmt.Errorf("%s has peepholes (input P): not supported (PyTorch's LSTM has none)", Describe(n))
			}
			return err
		}
		if w == nil || rr == nil || len(w.Shape) != 3 || len(rr.Shape) != 3 {
			return fmt.Errorf("%s: W and R must be 3-D constants", Describe(n))
		}
		h := int(attrInt(n, "hidden_size", 0))
		in := w.Shape[2]
		if h < 1 || w.Shape[0] != dirs || w.Shape[1] != 4*h || rr.Shape[0] != dirs || rr.Shape[1] != 4*h || rr.Shape[2] != h {
			return fmt.Errorf("%s: W %v and R %v do not fit hidden_size %d with %d direction(s)", Describe(n), w.Shape, rr.Shape, h, dirs)
		}
		if b != nil && (len(b.Shape) != 2 || b.Shape[0] != dirs || b.Shape[1] != 8*h) {
			return fmt.Errorf("%s: B of shape %v, want [%d %d]", Describe(n), b.Shape, dirs, 8*h)
		}
		if k == 0 {
			pp.Input, pp.Hidden, pp.Bidirectional = in, h, dirs == 2
		} else if h != pp.Hidden || (dirs == 2) != pp.Bidirectional || in != h*dirs {
			return fmt.Errorf("%s: hidden size %d, %d direction(s), input %d; layer 0 has hidden size %d and %d direction(s) (every layer must have the same, reading the one below)", Describe(n), h, dirs, in, pp.Hidden, dirsOf(pp.Bidirectional))
		}
		for d := range dirs {
			c := cell.CellParams{Wih: make([]float64, 4*h*in), Whh: make([]float64, 4*h*h)}
			for g := range 4 {
				og := gateOrder[g]
				copy(c.Wih[g*h*in:(g+1)*h*in], w.F[(d*4+og)*h*in:(d*4+og+1)*h*in])
				copy(c.Whh[g*h*h:(g+1)*h*h], rr.F[(d*4+og)*h*h:(d*4+og+1)*h*h])
			}
			if b != nil {
				c.B = make([]float64, 4*h)
				for g := range 4 {
					og := gateOrder[g]
					for j := range h {
						c.B[g*h+j] = b.F[d*8*h+og*h+j] + b.F[d*8*h+4*h+og*h+j]
					}
				}
			}
			pp.Cells = append(pp.Cells, c)
		}
		pp.Layers++
		role := fmt.Sprintf("layer %d", k)
		for i, part := range []string{"W (weight_ih, gates i o f c)", "R (weight_hh, gates i o f c)", "B (bias_ih, bias_hh)"} {
			if i+1 < len(n.Inputs) && n.Inputs[i+1] != "" {
				r.Roles[n.Inputs[i+1]] = role + " " + part
			}
		}
	}
	return nil
}

func dirsOf(bi bool) int {
	if bi {
		return 2
	}
	return 1
}

// linear is one Linear layer of the classifier: y = W·x + b.
type linear struct {
	rows, cols int
	w, b       []float64
	input      string // x
	node       *Node
}

// producer returns the node writing name, looking through Identity.
func (r *Recognized) producer(name string) (*Node, string) {
	for {
		i, ok := r.prog.Producer[name]
		if !ok {
			return nil, name
		}
		n := &r.prog.Graph.Nodes[i]
		if n.OpType != "Identity" {
			return n, name
		}
		name = n.Inputs[0]
	}
}

// readLinear reads the Linear layer writing name: Gemm, MatMul + Add or
// MatMul; ok is false when the node is none of these.
func (r *Recognized) readLinear(consts map[string]*Tensor, name, role string) (l linear, ok bool, err error) {
	n, _ := r.producer(name)
	if n == nil {
		return l, false, nil
	}
	l.node = n
	var wt *Tensor
	trans := false // wt is [out, in]
	switch n.OpType {
	case "Gemm":
		// alpha and beta scale the weights: a NaN would pass for a NaN weight.
		for _, name := range []string{"alpha", "beta"} {
			if v := attrFloat(n, name, 1); math.IsNaN(v) || math.IsInf(v, 0) {
				return l, true, fmt.Errorf("%s: its attribute %s is %v: not finite", Describe(n), name, v)
			}
		}
		if attrInt(n, "transA", 0) != 0 {
			return l, true, fmt.Errorf("%s: transA is not supported", Describe(n))
		}
		if wt, err = constInput(consts, n, 1, "B (the weight)"); err != nil {
			return l, true, err
		}
		trans = attrInt(n, "transB", 0) != 0
		l.input = n.Inputs[0]
		bias, err := constInput(consts, n, 2, "C (the bias)")
		if err != nil {
			return l, true, err
		}
		if bias != nil {
			beta := attrFloat(n, "beta", 1)
			l.b = make([]float64, len(bias.F))
			for i, v := range bias.F {
				if l.b[i] = beta * v; math.IsInf(l.b[i], 0) {
					return l, true, fmt.Errorf("%s: beta × the bias overflows at flat index %d (%g × %g)", Describe(n), i, beta, v)
				}
			}
			r.Roles[n.Inputs[2]] = role + " bias"
		}
		if err := r.setWeight(&l, wt, trans, attrFloat(n, "alpha", 1)); err != nil {
			return l, true, err
		}
		r.Roles[n.Inputs[1]] = role + " weight"
	case "Add":
		if len(n.Inputs) != 2 {
			return l, false, nil
		}
		_, c0 := consts[n.Inputs[0]]
		_, c1 := consts[n.Inputs[1]]
		if !c0 && !c1 { // not a bias: a sum of heads, or of two layers' outputs
			return l, true, fmt.Errorf("%s adds two non-constant values (%q and %q), not a constant bias to a MatMul: not supported", Describe(n), n.Inputs[0], n.Inputs[1])
		}
		k := 0 // the bias's input
		if !c0 {
			k = 1
		}
		bias, err := constInput(consts, n, k, "bias")
		if err != nil {
			return l, true, err
		}
		mm, _ := r.producer(n.Inputs[1-k])
		if mm == nil || mm.OpType != "MatMul" {
			return l, false, nil
		}
		if l, err = r.matmul(consts, mm, role); err != nil {
			return l, true, err
		}
		l.b = slices.Clone(bias.F)
		r.Roles[n.Inputs[k]] = role + " bias"
		l.node = n
	case "MatMul":
		if l, err = r.matmul(consts, n, role); err != nil {
			return l, true, err
		}
	default:
		return l, false, nil
	}
	if l.b != nil && len(l.b) != l.rows {
		if len(l.b) != 1 {
			return l, true, fmt.Errorf("%s: a bias of %d values for %d outputs", Describe(l.node), len(l.b), l.rows)
		}
		v := l.b[0]
		l.b = make([]float64, l.rows)
		for i := range l.b {
			l.b[i] = v
		}
	}
	return l, true, nil
}

func (r *Recognized) matmul(consts map[string]*Tensor, n *Node, role string) (linear, error) {
	l := linear{node: n, input: n.Inputs[0]}
	wt, err := constInput(consts, n, 1, "weight")
	if err != nil {
		return l, err
	}
	if wt == nil || len(wt.Shape) != 2 {
		return l, fmt.Errorf("%s: the weight must be a 2-D constant", Describe(n))
	}
	r.Roles[n.Inputs[1]] = role + " weight (transposed)"
	return l, r.setWeight(&l, wt, false, 1)
}

// setWeight stores wt ([out, in] when trans, else [in, out]) times alpha.
func (r *Recognized) setWeight(l *linear, wt *Tensor, trans bool, alpha float64) error {
	if wt == nil || len(wt.Shape) != 2 {
		return fmt.Errorf("%s: the weight must be a 2-D constant", Describe(l.node))
	}
	l.rows, l.cols = wt.Shape[1], wt.Shape[0]
	if trans {
		l.rows, l.cols = wt.Shape[0], wt.Shape[1]
	}
	l.w = make([]float64, l.rows*l.cols)
	for i := range l.rows {
		for j := range l.cols {
			v := wt.F[j*l.rows+i]
			if trans {
				v = wt.F[i*l.cols+j]
			}
			if l.w[i*l.cols+j] = alpha * v; math.IsInf(l.w[i*l.cols+j], 0) {
				return fmt.Errorf("%s: alpha × the weight overflows (%g × %g)", Describe(l.node), alpha, v)
			}
		}
	}
	return nil
}

func (r *Recognized) readClassifier(consts map[string]*Tensor) error {
	out := r.prog.Graph.Outputs[0].Name
	top, ok, err := r.readLinear(consts, out, "decoder")
	if err != nil {
		return err
	}
	if !ok {
		n, name := r.producer(out)
		if n == nil { // an Identity of a constant or of the input
			return fmt.Errorf("the graph's output %q is %q, not the logits of a Linear layer", out, name)
		}
		return fmt.Errorf("the graph's output %q is written by %s, not by a Linear layer (Gemm, or MatMul and Add): the output must be the logits", out, Describe(n))
	}
	pp := &r.Params
	pp.Classes, pp.Wy, pp.By = top.rows, top.w, top.b
	r.vName = top.input
	r.Linears = []string{top.node.Name}
	if an, _ := r.producer(top.input); an != nil && (an.OpType == "Relu" || an.OpType == "Tanh") {
		first, ok, err := r.readLinear(consts, an.Inputs[0], "hidden layer")
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s is not between two Linear layers", Describe(an))
		}
		if first.rows != top.cols || first.rows < 1 {
			return fmt.Errorf("%s has %d outputs but %s reads %d", Describe(first.node), first.rows, Describe(top.node), top.cols)
		}
		pp.Act = cell.ActReLU
		if an.OpType == "Tanh" {
			pp.Act = cell.ActTanh
		}
		pp.Units, pp.W1, pp.B1 = first.rows, first.w, first.b
		r.vName = first.input
		r.Linears = []string{first.node.Name, top.node.Name}
	}
	if n, _ := r.producer(r.vName); n != nil {
		_, more, err := r.readLinear(consts, r.vName, "extra layer")
		if err != nil {
			return err // not a Linear layer either (an Add of two heads): what it is
		}
		if more || n.OpType == "Relu" || n.OpType == "Tanh" {
			return fmt.Errorf("%s before the classifier: classifiers of more than two Linear layers, or with an activation before the first, are not supported", Describe(n))
		}
		r.HeadNode = n.Name
	}
	d := r.Params.Hidden * dirsOf(r.Params.Bidirectional)
	cols := top.cols
	if pp.Act != cell.ActNone {
		cols = len(pp.W1) / pp.Units
	}
	if cols != d {
		return fmt.Errorf("the classifier (node %q) reads %d values, but the LSTM gives %d (H·directions)", r.Linears[0], cols, d)
	}
	return nil
}

// readInput finds the embedding: the one Gather whose table is a constant
// and whose indices depend on the input. A float input is dense features.
func (r *Recognized) readInput(consts map[string]*Tensor) error {
	p := r.prog
	var in *ValueInfo
	for i := range p.Graph.Inputs {
		if p.Graph.Inputs[i].Name == p.Input {
			in = &p.Graph.Inputs[i]
		}
	}
	r.Rank = len(in.Shape)
	if !in.HasShape || r.Rank < 1 || r.Rank > 3 {
		return fmt.Errorf("the graph's input %q has no shape or rank %d; want [batch, T] token ids", in.Name, r.Rank)
	}
	dense := in.ElemType == TypeFloat || in.ElemType == TypeDouble
	if !dense && in.ElemType != TypeInt64 && in.ElemType != TypeInt32 {
		return fmt.Errorf("the graph's input %q is %s; want token ids (int64) or features (float)", in.Name, TypeName(in.ElemType))
	}
	if dense {
		return r.readDense(in)
	}
	dep := p.DependsOnInput()
	var gathers []*Node
	for _, i := range p.Live {
		n := &p.Graph.Nodes[i]
		if n.OpType == "Gather" && len(n.Inputs) == 2 && !dep[n.Inputs[0]] && dep[n.Inputs[1]] {
			gathers = append(gathers, n)
		}
	}
	if len(gathers) != 1 {
		return fmt.Errorf("%d Gather nodes look up the token ids in a constant table; want exactly one (the embedding)", len(gathers))
	}
	g := gathers[0]
	emb, err := constInput(consts, g, 0, "table")
	if err != nil {
		return err
	}
	if len(emb.Shape) != 2 || emb.Shape[0] < 1 || attrInt(g, "axis", 0) != 0 {
		return fmt.Errorf("%s: the embedding must be a [V, E] table looked up on axis 0; have %v", Describe(g), emb.Shape)
	}
	if emb.Shape[1] != r.Params.Input {
		return fmt.Errorf("%s: embedding of size %d, but %s reads %d features", Describe(g), emb.Shape[1], Describe(r.lstms[0]), r.Params.Input)
	}
	r.Embedding, r.Vocab, r.EmbeddingTensor = emb.F, emb.Shape[0], g.Inputs[0]
	r.Roles[g.Inputs[0]] = "embedding"
	if r.Rank == 3 {
		return fmt.Errorf("the graph's input %q of token ids has rank 3: token ids are [batch, T]", in.Name)
	}
	if r.Rank == 1 {
		r.SeqAxis = 0
		return r.fixedLength(in, in.Shape[0])
	}
	return r.sequenceAxis(in, in.Shape)
}

// readDense reads the shape of a features input: [batch, T, E], [T,
// batch, E] or [T, E].
func (r *Recognized) readDense(in *ValueInfo) error {
	dims := in.Shape
	if r.Rank < 2 {
		return fmt.Errorf("the graph's input %q holds features of rank %d; want [batch, T, E]", in.Name, r.Rank)
	}
	if e := dims[r.Rank-1]; e.Fixed && e.Value != int64(r.Params.Input) {
		return fmt.Errorf("the graph's input %q has %d features, but %s reads %d", in.Name, e.Value, Describe(r.lstms[0]), r.Params.Input)
	}
	r.Dense = true
	if r.Rank == 2 {
		r.SeqAxis = 0
		return r.fixedLength(in, dims[0])
	}
	return r.sequenceAxis(in, dims[:2])
}

// sequenceAxis chooses the sequence axis of the first two dimensions:
// [batch, T] unless fixed dimensions say [T, batch].
func (r *Recognized) sequenceAxis(in *ValueInfo, dims []Dim) error {
	r.SeqAxis = 1
	switch {
	case dims[0].Fixed && !dims[1].Fixed:
	case !dims[0].Fixed && dims[1].Fixed:
		r.SeqAxis = 0
	case dims[0].Fixed && dims[1].Fixed:
		if dims[0].Value != 1 {
			r.SeqAxis = 0
		}
	default:
		r.bothDynamic = true // tried as [batch, T], then [T, batch]
	}
	if other := dims[1-r.SeqAxis]; other.Fixed && other.Value != 1 {
		return fmt.Errorf("the graph's input %q has batch size %d fixed; want 1 or dynamic", in.Name, other.Value)
	}
	return r.fixedLength(in, dims[r.SeqAxis])
}

func (r *Recognized) fixedLength(in *ValueInfo, d Dim) error {
	if d.Fixed {
		if d.Value < 1 || d.Value > 1<<16 {
			return fmt.Errorf("the graph's input %q has a sequence length of %d", in.Name, d.Value)
		}
		r.SeqLen = int(d.Value)
	}
	return nil
}

// input returns the graph input for a probe of ids (features: the rows of
// x), laid out on SeqAxis.
func (r *Recognized) input(ids []int, x []float64) *Tensor {
	if !r.Dense {
		return r.Inputs(ids)
	}
	t, e := len(x)/r.Params.Input, r.Params.Input
	v := &Tensor{DataType: TypeDouble, Shape: []int{t, e}, F: x}
	switch {
	case r.Rank == 3 && r.SeqAxis == 1:
		v.Shape = []int{1, t, e}
	case r.Rank == 3:
		v.Shape = []int{t, 1, e}
	}
	return v
}

// Inputs returns the graph input holding ids, laid out on SeqAxis.
func (r *Recognized) Inputs(ids []int) *Tensor {
	t := &Tensor{DataType: TypeInt64, Shape: []int{len(ids)}}
	switch {
	case r.Rank == 2 && r.SeqAxis == 1:
		t.Shape = []int{1, len(ids)}
	case r.Rank == 2:
		t.Shape = []int{len(ids), 1}
	}
	for _, v := range ids {
		t.I = append(t.I, int64(v))
	}
	return t
}

// ProbeLengths are the lengths the graph is checked at (for a fixed-axis
// graph, its length only).
func (r *Recognized) ProbeLengths() []int {
	if r.SeqLen > 0 {
		return []int{r.SeqLen, r.SeqLen, r.SeqLen}
	}
	return []int{1, 2, 7}
}

// probeInput returns deterministic pseudo-random ids for probe k, and
// their embedding (or, for a dense model, features) as T×E rows.
func (r *Recognized) probeInput(k, t int) ([]int, []float64) {
	rng := rand.New(rand.NewPCG(uint64(k)+1, 0x6f6e6e78))
	e := r.Params.Input
	x := make([]float64, 0, t*e)
	if r.Dense {
		for range t * e {
			x = append(x, rng.NormFloat64())
		}
		return nil, x
	}
	ids := make([]int, t)
	for i := range ids {
		ids[i] = rng.IntN(r.Vocab)
		x = append(x, r.Embedding[ids[i]*e:(ids[i]+1)*e]...)
	}
	return ids, x
}

func markers(rng *rand.Rand, shape ...int) *Tensor {
	t := &Tensor{DataType: TypeDouble, Shape: shape, F: make([]float64, numel(shape))}
	for i := range t.F {
		t.F[i] = rng.NormFloat64()
	}
	return t
}

// lstmOut holds a layer's outputs in a layout-free form (batch 1).
type lstmOut struct {
	y  [][]float64 // [T][dirs·H]: the output sequence, forward first
	yh []float64   // [dirs·H]: h_n, forward first
}

// markLSTM makes marker outputs for node k: Y, Y_h, Y_c in its layout,
// and their layout-free view.
func (r *Recognized) markLSTM(rng *rand.Rand, k, t int) (map[string]*Tensor, lstmOut) {
	n := r.lstms[k]
	h, dirs := r.Params.Hidden, dirsOf(r.Params.Bidirectional)
	var o lstmOut
	y := markers(rng, t, dirs, 1, h)
	yh := markers(rng, dirs, 1, h)
	yc := markers(rng, dirs, 1, h)
	o.y = make([][]float64, t)
	for s := range t {
		o.y[s] = slices.Clone(y.F[s*dirs*h : (s+1)*dirs*h])
	}
	o.yh = slices.Clone(yh.F)
	if r.layout[k] == 1 { // [1, T, dirs, H] and [1, dirs, H]: the same order for batch 1
		y.Shape = []int{1, t, dirs, h}
		yh.Shape, yc.Shape = []int{1, dirs, h}, []int{1, dirs, h}
	}
	ov := map[string]*Tensor{}
	for i, v := range []*Tensor{y, yh, yc} {
		if i < len(n.Outputs) && n.Outputs[i] != "" {
			ov[n.Outputs[i]] = v
		}
	}
	return ov, o
}

// sequence returns the layer input X of node k as [T][features], checking
// its layout's shape (batch 1).
func (r *Recognized) sequence(env *Env, k, t int) ([][]float64, error) {
	n := r.lstms[k]
	x := env.Values[n.Inputs[0]]
	want := []int{t, 1}
	if r.layout[k] == 1 {
		want = []int{1, t}
	}
	if x == nil || !x.IsFloat() || len(x.Shape) != 3 || x.Shape[0] != want[0] || x.Shape[1] != want[1] {
		return nil, fmt.Errorf("%s reads X of shape %v for an input of length %d; want [%d %d E]", Describe(n), shapeOf2(x), t, want[0], want[1])
	}
	f := x.Shape[2]
	seq := make([][]float64, t)
	for s := range t {
		seq[s] = x.F[s*f : (s+1)*f]
	}
	return seq, nil
}

func shapeOf2(t *Tensor) []int {
	if t == nil {
		return nil
	}
	return t.Shape
}

func sameSeq(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// probe evaluates the graph on probes with markers in place of the
// embedding table and of each layer's outputs, and checks that each LSTM
// reads exactly the one below (the first: the embedded ids, in order),
// that its initial states are zero and its sequence_lens the length, and
// which head the classifier reads.
func (r *Recognized) probe() error {
	err := r.probeAxis()
	if err != nil && r.bothDynamic && r.SeqAxis == 1 {
		r.SeqAxis = 0
		if r.probeAxis() == nil {
			return nil
		}
		r.SeqAxis = 1
	}
	return err
}

func (r *Recognized) probeAxis() error {
	rng := rand.New(rand.NewPCG(7, 22))
	heads := cell.Heads()
	if r.Params.Attention != nil { // read from the graph: it must be what it computes
		heads = []cell.Head{cell.HeadAttention}
	}
	for k, t := range r.ProbeLengths() {
		ids, feats := r.probeInput(k, t)
		in := r.input(ids, feats)
		// The embedding: LSTM 0 reads the marker rows of the ids in order
		// (or the features, in order).
		e := r.Params.Input
		want := make([][]float64, t)
		ov := map[string]*Tensor{}
		if r.Dense {
			for s := range t {
				want[s] = feats[s*e : (s+1)*e]
			}
		} else {
			table := markers(rng, r.Vocab, e)
			ov[r.EmbeddingTensor] = table
			for s, id := range ids {
				want[s] = table.F[id*e : (id+1)*e]
			}
		}
		env, err := r.prog.Run(in, ov)
		if err != nil {
			return err
		}
		x, err := r.sequence(env, 0, t)
		if err != nil {
			return err
		}
		if !sameSeq(x, want) {
			if r.Dense {
				return fmt.Errorf("%s does not read the graph's input features in order (X is not the input as [T, 1, E]): not supported", Describe(r.lstms[0]))
			}
			return fmt.Errorf("%s does not read the embedding of the ids in order (the input X is not Gather(%q, ids) of shape [T, 1, E]): not supported", Describe(r.lstms[0]), r.EmbeddingTensor)
		}
		// Initial states and sequence lengths, on the real values.
		if env, err = r.prog.Run(in, nil); err != nil {
			return err
		}
		for _, n := range r.lstms {
			if err := zeroStates(env, n, t); err != nil {
				return err
			}
		}
		for kk := range r.lstms {
			ov, o := r.markLSTM(rng, kk, t)
			env, err := r.prog.Run(in, ov)
			if err != nil {
				return err
			}
			if kk+1 < len(r.lstms) {
				x, err := r.sequence(env, kk+1, t)
				if err != nil {
					return err
				}
				if !sameSeq(x, o.y) {
					return fmt.Errorf("%s does not read the output sequence of %s (both directions, forward first): not supported", Describe(r.lstms[kk+1]), Describe(r.lstms[kk]))
				}
				continue
			}
			v := env.Values[r.vName]
			if v == nil || v.Len() != len(o.yh) || !v.IsFloat() {
				return fmt.Errorf("the classifier's input %q has shape %v, want [1 %d]", r.vName, shapeOf2(v), len(o.yh))
			}
			heads = slices.DeleteFunc(heads, func(h cell.Head) bool { return !near(v.F, r.headOf(h, o)) })
		}
	}
	what := fmt.Sprintf("the classifier's input %q (written by node %q)", r.vName, r.HeadNode)
	switch {
	case len(heads) == 0:
		if r.Params.Attention != nil {
			return fmt.Errorf("%s is not the attention pooling read from nodes %q (softmax over the time axis of the scores of %s's outputs, times the outputs, summed over time): not supported", what, r.AttentionNodes, Describe(r.lstms[len(r.lstms)-1]))
		}
		return fmt.Errorf("%s is none of the heads of %s (hn, hn-bf, last, mean, max): the graph computes something else from the LSTM (c_n, attention, another layer): not supported", what, Describe(r.lstms[len(r.lstms)-1]))
	case len(heads) > 1 && !(len(heads) == 2 && heads[0] == cell.HeadHN && heads[1] == cell.HeadHNBF):
		return fmt.Errorf("%s matches several heads (%v) at the graph's fixed length %d; export with a dynamic sequence axis", what, heads, r.SeqLen)
	}
	r.Params.Head = heads[0]
	return nil
}

func near(a, b []float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12*max(1, math.Abs(b[i])) {
			return false
		}
	}
	return true
}

// headOf computes head h from marker outputs.
func headOf(h cell.Head, o lstmOut, bi bool) []float64 {
	d := len(o.yh)
	v := make([]float64, d)
	half := d / 2
	switch h {
	case cell.HeadHN:
		copy(v, o.yh)
	case cell.HeadHNBF:
		copy(v, o.yh)
		if bi {
			copy(v, o.yh[half:])
			copy(v[half:], o.yh[:half])
		}
	case cell.HeadLast:
		copy(v, o.y[len(o.y)-1])
	case cell.HeadMean:
		for _, row := range o.y {
			for i := range v {
				v[i] += row[i]
			}
		}
		for i := range v {
			v[i] /= float64(len(o.y))
		}
	case cell.HeadMax:
		copy(v, o.y[0])
		for _, row := range o.y[1:] {
			for i := range v {
				v[i] = max(v[i], row[i])
			}
		}
	}
	return v
}

// zeroStates checks that node n starts from zero states and reads whole
// sequences of length t.
func zeroStates(env *Env, n *Node, t int) error {
	for k, what := range map[int]string{5: "initial_h", 6: "initial_c"} {
		if k >= len(n.Inputs) || n.Inputs[k] == "" {
			continue
		}
		v := env.Values[n.Inputs[k]]
		if v == nil || !v.IsFloat() || slices.ContainsFunc(v.F, func(x float64) bool { return x != 0 }) {
			return fmt.Errorf("%s: its %s is not zero: only zero initial states are supported", Describe(n), what)
		}
	}
	if len(n.Inputs) > 4 && n.Inputs[4] != "" {
		v := env.Values[n.Inputs[4]]
		if v == nil || v.IsFloat() || slices.ContainsFunc(v.I, func(x int64) bool { return x != int64(t) }) {
			return fmt.Errorf("%s: its sequence_lens are not the input's length", Describe(n))
		}
	}
	return nil
}

// Describe says in one line what was recognised.
func (r *Recognized) Describe() string {
	var b strings.Builder
	kind := "LSTM"
	if r.Params.Kind == cell.LayerGRU {
		kind = "GRU"
	}
	fmt.Fprintf(&b, "%s nodes %q, head %v from node %q, classifier %q", kind, r.LSTMNodes, r.Params.Head, r.HeadNode, r.Linears)
	if r.AttentionNodes != nil {
		fmt.Fprintf(&b, ", attention %q", r.AttentionNodes)
	}
	return b.String()
}

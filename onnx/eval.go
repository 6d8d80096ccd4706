package onnx

import (
	"fmt"
	"slices"
	"strconv"
)

// The interpreter evaluates a graph node by node in float64 (integers as
// int64), for exactly the operators of PyTorch's LSTM exports (Supported).
// It is written from the ONNX operator specification, independently of the
// cell package's engine, so that comparing the two checks both.

// Supported lists the operators the interpreter evaluates.
var supportedOps = []string{
	"Add", "Concat", "Constant", "ConstantOfShape", "Expand", "Gather", "Gemm", "GRU", "Identity", "LSTM",
	"MatMul", "Mul", "ReduceMax", "ReduceMean", "ReduceSum", "Relu", "Reshape", "Shape", "Slice", "Softmax",
	"Squeeze", "Tanh", "Transpose", "Unsqueeze",
}

// Supported returns the list above, a new slice each call.
func Supported() []string { return slices.Clone(supportedOps) }

// Limits of one evaluation, so that a hostile graph (an Expand to 2^40
// elements, an LSTM over a huge sequence) is an error rather than an
// exhausted machine. They grow with the weights: a real export evaluated
// on a probe (batch 1, a few steps) computes a few values per weight and
// a few multiply-adds per weight and step.
const (
	evalElements    = 1 << 20 // values computed, plus the weights' count
	evalMACs        = 1 << 24 // multiply-adds, plus 8 per weight
	evalMACsPerInit = 8
)

// NodeError is an evaluation error of one node.
type NodeError struct {
	Index  int // in Graph.Nodes
	Node   *Node
	Err    error
	OpType string
}

func (e *NodeError) Error() string { return Describe(e.Node) + ": " + e.Err.Error() }

func (e *NodeError) Unwrap() error { return e.Err }

// Describe names node n as errors do: its op type and name, quoted (the
// op type only when it is not a plain identifier), so that the file's
// strings reach a terminal escaped.
func Describe(n *Node) string { return fmt.Sprintf("%s node %q", ident(n.OpType), n.Name) }

// ident returns s as it is when it is a plain identifier (an op type),
// else quoted with Go's escapes.
func ident(s string) string {
	for i, c := range s {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return strconv.Quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}

// Program is a graph checked for evaluation: every input of every node is
// defined before it (a graph input, an initializer or an earlier node's
// output), each name is defined once, and Live lists the nodes the graph's
// outputs depend on, in order.
type Program struct {
	Graph    *Graph
	Opset    int64
	Inits    map[string]*Tensor
	Producer map[string]int // tensor name → index of the node that writes it
	Live     []int
	Input    string // the graph's one input that is not an initializer

	maxElements, maxMACs int64 // the limits of one Run
}

// Prepare checks g's structure and finds its live nodes.
func Prepare(m *Model) (*Program, error) {
	g := &m.Graph
	p := &Program{Graph: g, Opset: m.Opset, Inits: map[string]*Tensor{}, Producer: map[string]int{}}
	defined := map[string]bool{}
	for _, t := range g.Initializers {
		if t.Name == "" || defined[t.Name] {
			return nil, fmt.Errorf("onnx: initializer %q: empty or defined twice", t.Name)
		}
		defined[t.Name] = true
		p.Inits[t.Name] = t
		p.maxElements += int64(t.Len())
	}
	p.maxMACs = evalMACs + evalMACsPerInit*p.maxElements
	p.maxElements += evalElements
	var inputs []string
	for _, v := range g.Inputs {
		if defined[v.Name] && p.Inits[v.Name] != nil {
			continue // older exports list the initializers as inputs too
		}
		if v.Name == "" || defined[v.Name] {
			return nil, fmt.Errorf("onnx: graph input %q: empty or defined twice", v.Name)
		}
		defined[v.Name] = true
		inputs = append(inputs, v.Name)
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("onnx: the graph has %d inputs %q; a classifier of one input (the token ids, or dense features) is expected", len(inputs), inputs)
	}
	p.Input = inputs[0]
	for i := range g.Nodes {
		n := &g.Nodes[i]
		for _, in := range n.Inputs {
			if in != "" && !defined[in] {
				return nil, fmt.Errorf("onnx: %s reads %q, which no earlier node, initializer or input defines (nodes must be in topological order)", Describe(n), in)
			}
		}
		for _, out := range n.Outputs {
			if out == "" {
				continue
			}
			if defined[out] {
				return nil, fmt.Errorf("onnx: %s writes %q, which is already defined", Describe(n), out)
			}
			defined[out] = true
			p.Producer[out] = i
		}
	}
	if len(g.Outputs) != 1 {
		return nil, fmt.Errorf("onnx: the graph has %d outputs; a classifier with one output (the logits) is expected", len(g.Outputs))
	}
	out := g.Outputs[0].Name
	if _, ok := p.Producer[out]; !ok {
		return nil, fmt.Errorf("onnx: no node writes the graph's output %q", out)
	}
	p.Live = p.ancestors(out)
	// Attributes are checked once, here, so that the accessors can read
	// the field of the declared type; another operator is refused by name.
	for _, i := range p.Live {
		n := &g.Nodes[i]
		if (n.Domain == "" || n.Domain == "ai.onnx") && slices.Contains(supportedOps, n.OpType) {
			if err := checkAttrs(n); err != nil {
				return nil, fmt.Errorf("onnx: %v", err)
			}
		}
	}
	return p, nil
}

// ancestors returns, in order, the nodes that the tensor name depends on.
func (p *Program) ancestors(name string) []int {
	live := map[int]bool{}
	stack := []string{name}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i, ok := p.Producer[s]
		if !ok || live[i] {
			continue
		}
		live[i] = true
		for _, in := range p.Graph.Nodes[i].Inputs {
			if in != "" {
				stack = append(stack, in)
			}
		}
	}
	var idx []int
	for i := range live {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	return idx
}

// DependsOnInput reports which tensors depend on the graph's input (the
// others are constants: initializers and what is computed from them).
func (p *Program) DependsOnInput() map[string]bool {
	dep := map[string]bool{p.Input: true}
	for i := range p.Graph.Nodes {
		n := &p.Graph.Nodes[i]
		d := false
		for _, in := range n.Inputs {
			d = d || dep[in]
		}
		for _, out := range n.Outputs {
			dep[out] = d
		}
	}
	return dep
}

// Env holds the values of one evaluation.
type Env struct {
	Values               map[string]*Tensor
	elements, macs       int64
	maxElements, maxMACs int64
}

func (e *Env) alloc(n int) error {
	e.elements += int64(n)
	if n < 0 || e.elements > e.maxElements {
		return fmt.Errorf("the evaluation needs more than %d values (the limit for a graph of these weights)", e.maxElements)
	}
	return nil
}

func (e *Env) work(n int64) error {
	e.macs += n
	if n < 0 || e.macs > e.maxMACs {
		return fmt.Errorf("the evaluation needs more than %d multiply-adds (the limit for a graph of these weights)", e.maxMACs)
	}
	return nil
}

func (e *Env) floats(n int) ([]float64, error) {
	if err := e.alloc(n); err != nil {
		return nil, err
	}
	return make([]float64, n), nil
}

// Run evaluates the live nodes with the graph input set to in. A tensor
// named in overrides takes that value instead of its own (an initializer,
// or a node's output: the node is still evaluated, its output replaced),
// which is how the recogniser probes the graph. It returns every value.
func (p *Program) Run(in *Tensor, overrides map[string]*Tensor) (*Env, error) {
	env := &Env{Values: map[string]*Tensor{}, maxElements: p.maxElements, maxMACs: p.maxMACs}
	for name, t := range p.Inits {
		env.Values[name] = t
	}
	env.Values[p.Input] = in
	for name, t := range overrides {
		if _, ok := p.Producer[name]; !ok {
			env.Values[name] = t
		}
	}
	for _, i := range p.Live {
		n := &p.Graph.Nodes[i]
		if n.Domain != "" && n.Domain != "ai.onnx" {
			return env, &NodeError{Index: i, Node: n, Err: fmt.Errorf("custom operator of domain %q: not supported", n.Domain)}
		}
		args := make([]*Tensor, len(n.Inputs))
		for k, name := range n.Inputs {
			if name != "" {
				args[k] = env.Values[name]
			}
		}
		outs, err := env.eval(p.Opset, n, args)
		if err != nil {
			return env, &NodeError{Index: i, Node: n, Err: err}
		}
		for k, name := range n.Outputs {
			if name == "" || k >= len(outs) {
				continue
			}
			if o, ok := overrides[name]; ok {
				env.Values[name] = o
			} else {
				env.Values[name] = outs[k]
			}
		}
	}
	return env, nil
}

// Output returns the graph output's value after Run.
func (p *Program) Output(env *Env) *Tensor { return env.Values[p.Graph.Outputs[0].Name] }

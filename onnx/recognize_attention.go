package onnx

import (
	"fmt"
	"math"

	"github.com/whitebox-lstm/whitebox/cell"
)

// Attention pooling (cell.HeadAttention) as torch.onnx.export writes
// PyTorch's
//
//	e = score(output); α = torch.softmax(e, dim=1); v = (α * output).sum(dim=1)
//
// with score one Linear(D, 1) or Linear(D, A) → tanh → Linear(A, 1): the
// classifier's input is ReduceSum(Mul(Softmax(e), output)), e is one
// Linear layer (Gemm, MatMul + Add or MatMul) or two around a Tanh. Only
// the structure is read here, from the classifier's input backward; that
// the score reads the top layer's outputs, that the softmax runs over the
// time axis and that the product and sum are the pooling is established
// by the probes (probeAxis), which evaluate the graph on marker outputs
// and compare the classifier's input with the attention head computed
// from the weights read, as for every head.

// readAttention reads an attention head writing r.vName, if there is one:
// the pooling ReduceSum(Mul(α, output)), or Squeeze(MatMul(α, output)) as
// torch.bmm and torch.matmul export it (α transposed or unsqueezed to
// [B, 1, T], or output transposed to [B, D, T] and α unsqueezed to
// [B, T, 1]), α a Softmax, possibly behind shape operators, of scores
// possibly squeezed from [B, T, 1] to [B, T].
func (r *Recognized) readAttention(consts map[string]*Tensor) error {
	pool, _ := r.producer(r.vName)
	if pool == nil {
		return nil
	}
	switch pool.OpType {
	case "ReduceSum":
		if pool, _ = r.producer(pool.Inputs[0]); pool == nil || pool.OpType != "Mul" {
			return nil
		}
	case "Squeeze", "Reshape":
		if pool, _ = r.producer(pool.Inputs[0]); pool == nil || pool.OpType != "MatMul" {
			return nil
		}
		for _, in := range pool.Inputs {
			if _, c := consts[in]; c {
				return nil // a Linear layer, not a pooling
			}
		}
	default:
		return nil
	}
	if len(pool.Inputs) != 2 {
		return nil
	}
	var sm *Node
	for _, in := range pool.Inputs {
		if n, _ := r.producer(r.behindShapes(in)); n != nil && n.OpType == "Softmax" {
			sm = n
		}
	}
	if sm == nil {
		return nil
	}
	head, _ := r.producer(r.vName)
	scores := r.behindShapes(sm.Inputs[0]) // the score layer's output
	role := "attention score"
	top, ok, err := r.readLinear(consts, scores, role)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s does not read the scores of a Linear layer (an attention head's score must be Linear(D, 1) or Linear(D, A) → Tanh → Linear(A, 1))", Describe(sm))
	}
	if top.rows != 1 {
		return fmt.Errorf("%s gives %d scores per step; an attention score gives 1", Describe(top.node), top.rows)
	}
	d := r.Params.Hidden * dirsOf(r.Params.Bidirectional)
	a := &cell.Attention{}
	nodes := []string{top.node.Name}
	if tn, _ := r.producer(top.input); tn != nil && tn.OpType == "Tanh" {
		first, ok, err := r.readLinear(consts, tn.Inputs[0], "attention hidden layer")
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s of the attention score does not read a Linear layer", Describe(tn))
		}
		if first.rows != top.cols || first.cols != d {
			return fmt.Errorf("the attention score's layers %s (%d×%d) and %s (1×%d) do not chain from the LSTM's %d outputs", Describe(first.node), first.rows, first.cols, Describe(top.node), top.cols, d)
		}
		a.Units, a.W1, a.B1, a.W2 = first.rows, first.w, first.b, top.w
		if top.b != nil {
			a.B2 = top.b
		}
		nodes = []string{first.node.Name, top.node.Name}
	} else {
		if top.cols != d {
			return fmt.Errorf("the attention score %s reads %d values, but the LSTM gives %d (H·directions)", Describe(top.node), top.cols, d)
		}
		a.W1, a.B1 = top.w, top.b
	}
	r.Params.Attention = a
	r.AttentionNodes = append(nodes, sm.Name, pool.Name)
	r.HeadNode = head.Name
	return nil
}

// behindShapes returns the tensor that name is made from by shape
// operators (Unsqueeze, Squeeze, Reshape, Transpose), or name: they move
// α's and the scores' axes about, and what they do to the values is
// established by the probes, as for the rest of the head.
func (r *Recognized) behindShapes(name string) string {
	for range 8 { // a chain of shape operators is short; a cycle is not followed
		n, _ := r.producer(name)
		if n == nil || !isShapeOp(n) || len(n.Inputs) == 0 {
			return name
		}
		name = n.Inputs[0]
	}
	return name
}

func isShapeOp(n *Node) bool {
	switch n.OpType {
	case "Unsqueeze", "Squeeze", "Reshape", "Transpose":
		return true
	}
	return false
}

// headOf computes head h from marker outputs; the attention head by the
// weights read (PyTorch's expression, a two-pass softmax).
func (r *Recognized) headOf(h cell.Head, o lstmOut) []float64 {
	if h != cell.HeadAttention {
		return headOf(h, o, r.Params.Bidirectional)
	}
	a := r.Params.Attention
	d := len(o.yh)
	rows := max(a.Units, 1)
	e := make([]float64, len(o.y))
	for t, y := range o.y {
		hid := make([]float64, rows)
		for m := range rows {
			if a.B1 != nil {
				hid[m] = a.B1[m]
			}
			for i, w := range a.W1[m*d : (m+1)*d] {
				hid[m] += w * y[i]
			}
		}
		if a.Units == 0 {
			e[t] = hid[0]
			continue
		}
		if a.B2 != nil {
			e[t] = a.B2[0]
		}
		for m, w := range a.W2 {
			e[t] += w * math.Tanh(hid[m])
		}
	}
	mx := math.Inf(-1)
	for _, v := range e {
		mx = max(mx, v)
	}
	sum := 0.0
	for t := range e {
		e[t] = math.Exp(e[t] - mx)
		sum += e[t]
	}
	v := make([]float64, d)
	for t, y := range o.y {
		for i := range v {
			v[i] += e[t] / sum * y[i]
		}
	}
	return v
}

package onnx

import (
	"fmt"
	"math"
)

// lstm evaluates the ONNX LSTM operator as its specification writes it:
// gates in the order i, o, f, c; W [dirs, 4H, in], R [dirs, 4H, H], B
// [dirs, 8H] (Wb then Rb), optional sequence_lens, initial_h, initial_c
// and peepholes P [dirs, 3H] (i, o, f); layout 0 (X [T, batch, in], Y [T,
// dirs, batch, H], Y_h [dirs, batch, H]) or 1 (batch first: X [batch, T,
// in], Y [batch, T, dirs, H], Y_h [batch, dirs, H]). Only the default
// activations (Sigmoid, Tanh, Tanh), no clip and input_forget 0 are
// evaluated.
//
//	i = σ(Wi x + Ri h + Pi ⊙ c + Wbi + Rbi)
//	f = σ(Wf x + Rf h + Pf ⊙ c + Wbf + Rbf)
//	g = tanh(Wc x + Rc h + Wbc + Rbc)
//	c' = f ⊙ c + i ⊙ g
//	o = σ(Wo x + Ro h + Po ⊙ c' + Wbo + Rbo)
//	h' = o ⊙ tanh(c')
func (e *Env) lstm(n *Node, args []*Tensor) ([]*Tensor, error) {
	if err := need(args, 3); err != nil {
		return nil, err
	}
	if err := lstmAttrs(n); err != nil {
		return nil, err
	}
	hs, dir, dirs, layout, err := rnnShape(n)
	if err != nil {
		return nil, err
	}
	x, w, r := args[0], args[1], args[2]
	for k, t := range args {
		if t != nil && k != 4 && !t.IsFloat() {
			return nil, fmt.Errorf("input %d is %s, want floats", k, TypeName(t.DataType))
		}
	}
	if len(x.Shape) != 3 || len(w.Shape) != 3 || len(r.Shape) != 3 {
		return nil, fmt.Errorf("inputs X, W, R of shapes %v, %v, %v: want rank 3", x.Shape, w.Shape, r.Shape)
	}
	T, B, in := x.Shape[0], x.Shape[1], x.Shape[2]
	if layout == 1 {
		T, B = B, T
	}
	if hs < 1 || w.Shape[0] != dirs || w.Shape[1] != 4*hs || w.Shape[2] != in || r.Shape[0] != dirs || r.Shape[1] != 4*hs || r.Shape[2] != hs {
		return nil, fmt.Errorf("inputs W %v, R %v for hidden_size %d, %d direction(s) and input %v", w.Shape, r.Shape, hs, dirs, x.Shape)
	}
	bias, err := e.floats(dirs * 8 * hs)
	if err != nil {
		return nil, err
	}
	if b := optional(args, 3); b != nil {
		if len(b.Shape) != 2 || b.Shape[0] != dirs || b.Shape[1] != 8*hs {
			return nil, fmt.Errorf("input B of shape %v, want [%d %d]", b.Shape, dirs, 8*hs)
		}
		copy(bias, b.F)
	}
	lens := make([]int, B)
	for i := range lens {
		lens[i] = T
	}
	if s := optional(args, 4); s != nil {
		v, err := ints(s, "sequence_lens")
		if err != nil {
			return nil, err
		}
		if len(v) != B {
			return nil, fmt.Errorf("sequence_lens of %d values for batch %d", len(v), B)
		}
		for i, l := range v {
			if l < 0 || l > int64(T) {
				return nil, fmt.Errorf("sequence_lens[%d] = %d outside [0, %d]", i, l, T)
			}
			lens[i] = int(l)
		}
	}
	// states in layout 0: [dirs, B, H]
	state := func(k int) ([]float64, error) {
		v, err := e.floats(dirs * B * hs)
		if err != nil {
			return nil, err
		}
		t := optional(args, k)
		if t == nil {
			return v, nil
		}
		want := []int{dirs, B, hs}
		if layout == 1 {
			want = []int{B, dirs, hs}
		}
		if len(t.Shape) != 3 || t.Shape[0] != want[0] || t.Shape[1] != want[1] || t.Shape[2] != want[2] {
			return nil, fmt.Errorf("initial state of shape %v, want %v", t.Shape, want)
		}
		for d := range dirs {
			for b := range B {
				src := (d*B + b) * hs
				if layout == 1 {
					src = (b*dirs + d) * hs
				}
				copy(v[(d*B+b)*hs:(d*B+b+1)*hs], t.F[src:src+hs])
			}
		}
		return v, nil
	}
	h0, err := state(5)
	if err != nil {
		return nil, err
	}
	c0, err := state(6)
	if err != nil {
		return nil, err
	}
	var peep []float64
	if p := optional(args, 7); p != nil {
		if len(p.Shape) != 2 || p.Shape[0] != dirs || p.Shape[1] != 3*hs {
			return nil, fmt.Errorf("input P of shape %v, want [%d %d]", p.Shape, dirs, 3*hs)
		}
		peep = p.F
	}
	if err := e.work(int64(dirs) * int64(T) * int64(B) * 4 * int64(hs) * int64(in+hs)); err != nil {
		return nil, err
	}
	y, err := e.floats(T * dirs * B * hs) // layout 0 [T, dirs, B, H]
	if err != nil {
		return nil, err
	}
	yh, err := e.floats(dirs * B * hs)
	if err != nil {
		return nil, err
	}
	yc, err := e.floats(dirs * B * hs)
	if err != nil {
		return nil, err
	}
	xRow := func(t, b int) []float64 {
		if layout == 1 {
			return x.F[(b*T+t)*in : (b*T+t+1)*in]
		}
		return x.F[(t*B+b)*in : (t*B+b+1)*in]
	}
	gates := make([]float64, 4*hs)
	for d := range dirs {
		reverse := dir == "reverse" || d == 1
		W, R := w.F[d*4*hs*in:(d+1)*4*hs*in], r.F[d*4*hs*hs:(d+1)*4*hs*hs]
		wb, rb := bias[d*8*hs:d*8*hs+4*hs], bias[d*8*hs+4*hs:(d+1)*8*hs]
		for b := range B {
			h := append([]float64(nil), h0[(d*B+b)*hs:(d*B+b+1)*hs]...)
			c := append([]float64(nil), c0[(d*B+b)*hs:(d*B+b+1)*hs]...)
			for s := range lens[b] {
				t := s
				if reverse {
					t = lens[b] - 1 - s
				}
				xt := xRow(t, b)
				for g := range 4 * hs {
					gates[g] = wb[g] + rb[g] + dot(W[g*in:(g+1)*in], xt) + dot(R[g*hs:(g+1)*hs], h)
				}
				for j := range hs {
					gi, gf := gates[j], gates[2*hs+j]
					if peep != nil {
						gi += peep[d*3*hs+j] * c[j]
						gf += peep[d*3*hs+2*hs+j] * c[j]
					}
					it, ft, gt := sigmoid(gi), sigmoid(gf), math.Tanh(gates[3*hs+j])
					c[j] = ft*c[j] + it*gt
					go_ := gates[hs+j]
					if peep != nil {
						go_ += peep[d*3*hs+hs+j] * c[j]
					}
					h[j] = sigmoid(go_) * math.Tanh(c[j])
				}
				copy(y[((t*dirs+d)*B+b)*hs:], h)
			}
			copy(yh[(d*B+b)*hs:], h)
			copy(yc[(d*B+b)*hs:], c)
		}
	}
	outs := []*Tensor{
		{DataType: TypeDouble, Shape: []int{T, dirs, B, hs}, F: y},
		{DataType: TypeDouble, Shape: []int{dirs, B, hs}, F: yh},
		{DataType: TypeDouble, Shape: []int{dirs, B, hs}, F: yc},
	}
	if layout == 1 {
		var err error
		if outs[0], err = e.permute(outs[0], []int64{2, 0, 1, 3}); err != nil {
			return nil, err
		}
		for k := 1; k < 3; k++ {
			if outs[k], err = e.permute(outs[k], []int64{1, 0, 2}); err != nil {
				return nil, err
			}
		}
	}
	return outs, nil
}

// permute transposes x by perm.
func (e *Env) permute(x *Tensor, perm []int64) (*Tensor, error) {
	n := &Node{OpType: "Transpose", Attrs: []Attr{{Name: "perm", Type: AttrInts, Ints: perm}}}
	return e.transpose(n, []*Tensor{x})
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// dot is Σ a[i]·b[i], in four running sums (added in a fixed order, so
// the same bits every run): the interpreter checks every attributed input
// of an ONNX model, at the cost of about one forward pass.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func optional(args []*Tensor, k int) *Tensor {
	if k < len(args) {
		return args[k]
	}
	return nil
}

func attrBytes(n *Node, name, def string) []byte {
	if a := attr(n, name); a != nil {
		return a.S
	}
	return []byte(def)
}

// lstmAttrs refuses the attributes the interpreter does not evaluate.
func lstmAttrs(n *Node) error {
	for _, a := range n.Attrs {
		switch a.Name {
		case "hidden_size", "direction", "layout":
		case "input_forget":
			if a.I != 0 {
				return fmt.Errorf("input_forget = %d: not supported", a.I)
			}
		case "activations":
			want := []string{"Sigmoid", "Tanh", "Tanh"}
			for i, s := range a.Strings {
				if string(s) != want[i%3] {
					return fmt.Errorf("activations %q: only Sigmoid, Tanh, Tanh are supported", a.Strings)
				}
			}
		default:
			return fmt.Errorf("attribute %q: not supported", a.Name)
		}
	}
	return nil
}

// rnnShape reads the attributes an LSTM and a GRU node share: the hidden
// size, the direction (and its number of directions) and the layout.
func rnnShape(n *Node) (hs int, dir string, dirs int, layout int64, err error) {
	hs, dirs = int(attrInt(n, "hidden_size", 0)), 1
	dir = string(attrBytes(n, "direction", "forward"))
	switch dir {
	case "forward", "reverse":
	case "bidirectional":
		dirs = 2
	default:
		return 0, "", 0, 0, fmt.Errorf("direction %q", dir)
	}
	layout = attrInt(n, "layout", 0)
	if layout != 0 && layout != 1 {
		return 0, "", 0, 0, fmt.Errorf("layout %d", layout)
	}
	return hs, dir, dirs, layout, nil
}

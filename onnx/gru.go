package onnx

import (
	"fmt"
	"math"
)

// gru evaluates the ONNX GRU operator as its specification writes it:
// gates in the order z, r, h; W [dirs, 3H, in], R [dirs, 3H, H], B
// [dirs, 6H] (Wb then Rb), optional sequence_lens and initial_h; layout 0
// (X [T, batch, in], Y [T, dirs, batch, H], Y_h [dirs, batch, H]) or 1
// (batch first). Only linear_before_reset = 1 (what PyTorch exports: its
// nn.GRU applies r after W_hn·h + b_hn), the default activations
// (Sigmoid, Tanh) and no clip are evaluated (gruAttrs).
//
//	z = σ(Wz x + Wbz + Rz h + Rbz)
//	r = σ(Wr x + Wbr + Rr h + Rbr)
//	ĥ = tanh(Wh x + Wbh + r ⊙ (Rh h + Rbh))
//	h' = (1 − z) ⊙ ĥ + z ⊙ h
func (e *Env) gru(n *Node, args []*Tensor) ([]*Tensor, error) {
	if err := need(args, 3); err != nil {
		return nil, err
	}
	if err := gruAttrs(n); err != nil {
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
	if hs < 1 || w.Shape[0] != dirs || w.Shape[1] != 3*hs || w.Shape[2] != in || r.Shape[0] != dirs || r.Shape[1] != 3*hs || r.Shape[2] != hs {
		return nil, fmt.Errorf("inputs W %v, R %v for hidden_size %d, %d direction(s) and input %v", w.Shape, r.Shape, hs, dirs, x.Shape)
	}
	bias, err := e.floats(dirs * 6 * hs)
	if err != nil {
		return nil, err
	}
	if b := optional(args, 3); b != nil {
		if len(b.Shape) != 2 || b.Shape[0] != dirs || b.Shape[1] != 6*hs {
			return nil, fmt.Errorf("input B of shape %v, want [%d %d]", b.Shape, dirs, 6*hs)
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
	h0, err := e.floats(dirs * B * hs) // layout 0: [dirs, B, H]
	if err != nil {
		return nil, err
	}
	if t := optional(args, 5); t != nil {
		want := []int{dirs, B, hs}
		if layout == 1 {
			want = []int{B, dirs, hs}
		}
		if len(t.Shape) != 3 || t.Shape[0] != want[0] || t.Shape[1] != want[1] || t.Shape[2] != want[2] {
			return nil, fmt.Errorf("initial_h of shape %v, want %v", t.Shape, want)
		}
		for d := range dirs {
			for b := range B {
				src := (d*B + b) * hs
				if layout == 1 {
					src = (b*dirs + d) * hs
				}
				copy(h0[(d*B+b)*hs:(d*B+b+1)*hs], t.F[src:src+hs])
			}
		}
	}
	if err := e.work(int64(dirs) * int64(T) * int64(B) * 3 * int64(hs) * int64(in+hs)); err != nil {
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
	xRow := func(t, b int) []float64 {
		if layout == 1 {
			return x.F[(b*T+t)*in : (b*T+t+1)*in]
		}
		return x.F[(t*B+b)*in : (t*B+b+1)*in]
	}
	wx, rh := make([]float64, 3*hs), make([]float64, 3*hs)
	for d := range dirs {
		reverse := dir == "reverse" || d == 1
		W, R := w.F[d*3*hs*in:(d+1)*3*hs*in], r.F[d*3*hs*hs:(d+1)*3*hs*hs]
		wb, rb := bias[d*6*hs:d*6*hs+3*hs], bias[d*6*hs+3*hs:(d+1)*6*hs]
		for b := range B {
			h := append([]float64(nil), h0[(d*B+b)*hs:(d*B+b+1)*hs]...)
			for s := range lens[b] {
				t := s
				if reverse {
					t = lens[b] - 1 - s
				}
				xt := xRow(t, b)
				for g := range 3 * hs {
					wx[g] = wb[g] + dot(W[g*in:(g+1)*in], xt)
					rh[g] = rb[g] + dot(R[g*hs:(g+1)*hs], h)
				}
				for j := range hs {
					z := sigmoid(wx[j] + rh[j])
					rt := sigmoid(wx[hs+j] + rh[hs+j])
					ht := math.Tanh(wx[2*hs+j] + rt*rh[2*hs+j])
					h[j] = (1-z)*ht + z*h[j]
				}
				copy(y[((t*dirs+d)*B+b)*hs:], h)
			}
			copy(yh[(d*B+b)*hs:], h)
		}
	}
	outs := []*Tensor{
		{DataType: TypeDouble, Shape: []int{T, dirs, B, hs}, F: y},
		{DataType: TypeDouble, Shape: []int{dirs, B, hs}, F: yh},
	}
	if layout == 1 {
		var err error
		if outs[0], err = e.permute(outs[0], []int64{2, 0, 1, 3}); err != nil {
			return nil, err
		}
		if outs[1], err = e.permute(outs[1], []int64{1, 0, 2}); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// gruAttrs refuses, by name, the attributes of a GRU node the interpreter
// does not evaluate and the engine cannot express: linear_before_reset
// other than 1 (r applied before R_h, which PyTorch's nn.GRU does not
// do), activations other than Sigmoid, Tanh, clip, and any other.
func gruAttrs(n *Node) error {
	lbr := false
	for _, a := range n.Attrs {
		switch a.Name {
		case "hidden_size", "direction", "layout":
		case "linear_before_reset":
			if a.I != 1 {
				return fmt.Errorf("linear_before_reset = %d: not supported (only 1, PyTorch's nn.GRU, which applies r after R_h·h + Rb_h)", a.I)
			}
			lbr = true
		case "activations":
			want := []string{"Sigmoid", "Tanh"}
			for i, s := range a.Strings {
				if string(s) != want[i%2] {
					return fmt.Errorf("activations %q: only Sigmoid, Tanh are supported", a.Strings)
				}
			}
		case "clip":
			return fmt.Errorf("clip = %v: not supported", a.F)
		default:
			return fmt.Errorf("attribute %q: not supported", a.Name)
		}
	}
	if !lbr {
		return fmt.Errorf("linear_before_reset = 0 (the default): not supported (only 1, PyTorch's nn.GRU, which applies r after R_h·h + Rb_h)")
	}
	return nil
}

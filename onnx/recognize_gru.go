package onnx

import (
	"fmt"

	"github.com/whitebox-lstm/whitebox/cell"
)

// gruGateOrder maps PyTorch's GRU gate blocks (r, z, n) to ONNX's (z, r,
// h): PyTorch's block g is ONNX's block gruGateOrder[g].
var gruGateOrder = [3]int{1, 0, 2}

// readGRUs is readLSTMs for GRU nodes (PyTorch's nn.GRU as
// torch.onnx.export writes it: linear_before_reset = 1): each layer's W,
// R and B, reordered from ONNX's gates z, r, h to PyTorch's r, z, n, with
// B's two halves kept apart as bias_ih (Wb) and bias_hh (Rb), since Rb_h
// lies inside r ⊙ (R_h·h + Rb_h).
func (r *Recognized) readGRUs(consts map[string]*Tensor) error {
	pp := &r.Params
	pp.Kind = cell.LayerGRU
	for k, n := range r.lstms {
		if err := gruAttrs(n); err != nil {
			return fmt.Errorf("%s: %v", Describe(n), err)
		}
		dirs := 1
		switch d := string(attrBytes(n, "direction", "forward")); d {
		case "forward":
		case "bidirectional":
			dirs = 2
		case "reverse":
			return fmt.Errorf("%s: direction reverse alone (a backward-only GRU) is not supported; forward and bidirectional are", Describe(n))
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
		if w == nil || rr == nil || len(w.Shape) != 3 || len(rr.Shape) != 3 {
			return fmt.Errorf("%s: W and R must be 3-D constants", Describe(n))
		}
		h := int(attrInt(n, "hidden_size", 0))
		in := w.Shape[2]
		if h < 1 || w.Shape[0] != dirs || w.Shape[1] != 3*h || rr.Shape[0] != dirs || rr.Shape[1] != 3*h || rr.Shape[2] != h {
			return fmt.Errorf("%s: W %v and R %v do not fit hidden_size %d with %d direction(s)", Describe(n), w.Shape, rr.Shape, h, dirs)
		}
		if b != nil && (len(b.Shape) != 2 || b.Shape[0] != dirs || b.Shape[1] != 6*h) {
			return fmt.Errorf("%s: B of shape %v, want [%d %d]", Describe(n), b.Shape, dirs, 6*h)
		}
		if k == 0 {
			pp.Input, pp.Hidden, pp.Bidirectional = in, h, dirs == 2
		} else if h != pp.Hidden || (dirs == 2) != pp.Bidirectional || in != h*dirs {
			return fmt.Errorf("%s: hidden size %d, %d direction(s), input %d; layer 0 has hidden size %d and %d direction(s) (every layer must have the same, reading the one below)", Describe(n), h, dirs, in, pp.Hidden, dirsOf(pp.Bidirectional))
		}
		for d := range dirs {
			c := cell.CellParams{Wih: make([]float64, 3*h*in), Whh: make([]float64, 3*h*h)}
			for g, og := range gruGateOrder {
				copy(c.Wih[g*h*in:(g+1)*h*in], w.F[(d*3+og)*h*in:(d*3+og+1)*h*in])
				copy(c.Whh[g*h*h:(g+1)*h*h], rr.F[(d*3+og)*h*h:(d*3+og+1)*h*h])
			}
			if b != nil {
				c.B, c.Bhh = make([]float64, 3*h), make([]float64, 3*h)
				for g, og := range gruGateOrder {
					copy(c.B[g*h:(g+1)*h], b.F[d*6*h+og*h:d*6*h+(og+1)*h])
					copy(c.Bhh[g*h:(g+1)*h], b.F[d*6*h+3*h+og*h:d*6*h+3*h+(og+1)*h])
				}
			}
			pp.Cells = append(pp.Cells, c)
		}
		pp.Layers++
		role := fmt.Sprintf("layer %d", k)
		for i, part := range []string{"W (weight_ih, gates z r h)", "R (weight_hh, gates z r h)", "B (bias_ih, bias_hh)"} {
			if i+1 < len(n.Inputs) && n.Inputs[i+1] != "" {
				r.Roles[n.Inputs[i+1]] = role + " " + part
			}
		}
	}
	return nil
}

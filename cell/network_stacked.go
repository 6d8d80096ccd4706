package cell

import "slices"

// AsStacked returns n as a Stacked model: one layer, one direction, the
// head hn (the last state) and a single Linear decoder, with n's weights.
// It computes n's function with n's bits on n's input: the logits, the
// gradients, LRP (with the Network's definition, see Network.LRP), occlusion
// and IG (on one-hot input IG sums
// each lane's input gradient, as the Batcher does; on dense rows made from
// one-hot input, AppendDense, it sums dz first, and the last bits of IG
// differ: TestAsStackedSameBits). It lets the methods written for Stacked
// models, such as DeepLIFT and contextual decomposition, run on the
// white-box networks, which read dense rows (Input.AppendDense).
func (n *Network) AsStacked() (*Stacked, error) {
	p := n.p
	s, err := NewStacked(StackedParams{
		Input: p.Input, Hidden: p.Hidden, Layers: 1, Classes: p.Classes,
		Cells: []StackedCell{{Wih: p.Wx, Whh: p.Wh, B: p.B}},
		Wy:    p.Wy, By: p.By, Head: HeadHN,
	})
	if err != nil {
		return nil, err
	}
	s.netLRP = true // LRP keeps the Network's definition (Network.LRP)
	return s, nil
}

// AppendDense appends x's T×d values, as a model with d input features
// reads them (scale applied, one-hot rows expanded, −1 rows zero), to dst
// and returns the extended slice. It checks x against d first.
func (x Input) AppendDense(dst []float64, d int) ([]float64, error) {
	if err := x.check(d); err != nil {
		return dst, err
	}
	n := len(dst)
	dst = slices.Grow(dst, x.t*d)[:n+x.t*d] // no allocation when dst has room
	out := dst[n:]
	clear(out)
	if x.dense != nil {
		for i, v := range x.dense {
			out[i] = x.feature(v)
		}
		return dst, nil
	}
	for t, s := range x.symbols {
		if s >= 0 {
			out[t*d+s] = x.scale
		}
	}
	return dst, nil
}

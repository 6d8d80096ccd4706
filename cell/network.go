// Package cell is an LSTM classifier: one LSTM layer followed by a linear
// decoder on the last hidden state. It runs the forward pass, the analytic
// gradient of a logit with respect to every input feature (backpropagation
// through time) and layer-wise relevance propagation (the ε-rule through the
// LSTM, as in Arras et al. 2017), for one input or for a batch of inputs.
//
// A Network is immutable and safe for concurrent use; each goroutine brings
// its own Workspace, which holds the trace of the forward pass and is reused
// from call to call, so that steady-state calls allocate nothing.
//
// A Batcher runs many variants of one input at once (the α-scaled copies of
// Integrated Gradients, the occluded copies of Occlusion) as lanes of a
// batch, in chunks on several goroutines, within a memory budget, with
// checkpointed backprop for long inputs; its results are the bits of the
// single-input path whatever the number of goroutines, lanes or budget.
//
// Stacked models (several layers, two directions, PyTorch's heads) run on
// a StackedRunner, which also computes DeepLIFT against a reference input:
// the Rescale multiplier at every sigmoid, tanh and ReLU, the symmetric
// (Shapley) split m_a = b₀ + Δb/2, m_b = a₀ + Δa/2 at every product of two
// varying quantities, gradients through Linear layers and the mean head,
// and max pooling's change split between the maximising steps a (of the
// input) and b (of the reference) in the proportion λ = (h_a − h_b) /
// ((h_a − h_b) + (h₀_b − h₀_a)) to 1 − λ, so that the scores sum to the
// change of the logit (stacked_deeplift.go has the rules). A Network runs
// it as its Stacked form (AsStacked).
package cell

import (
	"fmt"
	"math"
	"math/bits"
)

// Params are the weights of an LSTM classifier in PyTorch's layout and gate
// order (i, f, g, o), flat and row-major. PyTorch's two biases b_ih and b_hh
// add up to B.
type Params struct {
	Hidden  int // H
	Input   int // D, the number of input features (the alphabet size for one-hot input)
	Classes int // C

	Wx []float64 // 4H×D: weight_ih
	Wh []float64 // 4H×H: weight_hh
	B  []float64 // 4H: bias_ih + bias_hh
	Wy []float64 // C×H: the decoder's weight
	By []float64 // C: the decoder's bias
}

// Network is a validated LSTM classifier with its weights packed for the
// kernels.
type Network struct {
	p       Params
	h, d, c int
	gates   int // 4H

	// Forward pass: z += x[j]·wxT[j] and z += h[j]·whT[j], rows of length 4H.
	wxT, whT []float64
	// Backprop and LRP: the rows of Wx and Wh (lengths D and H), as given.
	wx, wh []float64
	// The decoder transposed: logits += h[j]·wyT[j].
	wyT []float64
}

// MaxWeights caps the number of weights of a Network, 4H·D + 4H·H + 4H +
// C·H + C: 2^27 (about 134 million, 1 GiB of float64). A Network keeps
// two copies of its weights (as given and transposed for the kernels).
const MaxWeights = 1 << 27

// Weights returns the number of weights of a network with h units, d input
// features and c classes, 4H·D + 4H·H + 4H + C·H + C, computed without
// overflow. It returns an error naming the sizes when one is not positive
// or the count exceeds MaxWeights, before anything is allocated.
func Weights(h, d, c int) (int, error) {
	if h < 1 || d < 1 || c < 1 {
		return 0, fmt.Errorf("cell: sizes must be positive: Hidden=%d Input=%d Classes=%d", h, d, c)
	}
	total := uint64(0)
	for _, t := range [][2]uint64{{4 * uint64(h), uint64(d) + uint64(h) + 1}, {uint64(c), uint64(h) + 1}} {
		hi, lo := bits.Mul64(t[0], t[1])
		var carry uint64
		total, carry = bits.Add64(total, lo, 0)
		if hi != 0 || carry != 0 || total > MaxWeights {
			return 0, fmt.Errorf("cell: Hidden=%d Input=%d Classes=%d need more than %d weights (%d MiB each copy), the most a network may have", h, d, c, MaxWeights, MaxWeights*8>>20)
		}
	}
	return int(total), nil
}

// New validates p and packs its weights. It returns an error naming the
// problem for non-positive sizes, sizes whose weights exceed MaxWeights,
// slices of the wrong length and NaN or infinite weights. New copies the
// weights; p may be reused afterwards.
func New(p Params) (*Network, error) {
	if _, err := Weights(p.Hidden, p.Input, p.Classes); err != nil {
		return nil, err
	}
	h, d, c := p.Hidden, p.Input, p.Classes
	for _, s := range []struct {
		name string
		v    []float64
		want int
		dims string
	}{
		{"Wx", p.Wx, 4 * h * d, fmt.Sprintf("4H×D = 4×%d×%d", h, d)},
		{"Wh", p.Wh, 4 * h * h, fmt.Sprintf("4H×H = 4×%d×%d", h, h)},
		{"B", p.B, 4 * h, fmt.Sprintf("4H = 4×%d", h)},
		{"Wy", p.Wy, c * h, fmt.Sprintf("C×H = %d×%d", c, h)},
		{"By", p.By, c, fmt.Sprintf("C = %d", c)},
	} {
		if len(s.v) != s.want {
			return nil, fmt.Errorf("cell: %s has %d elements, want %s = %d", s.name, len(s.v), s.dims, s.want)
		}
		for i, v := range s.v {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("cell: %s[%d] is %v; weights must be finite", s.name, i, v)
			}
		}
	}
	n := &Network{h: h, d: d, c: c, gates: 4 * h}
	n.p = Params{Hidden: h, Input: d, Classes: c,
		Wx: clone(p.Wx), Wh: clone(p.Wh), B: clone(p.B), Wy: clone(p.Wy), By: clone(p.By)}
	// A bias of −0 becomes +0. Then no sum the kernels build is ever −0
	// (round-to-nearest gives +0 for x + (−x)), so skipping terms with a
	// zero factor, which the kernels may do on either factor, never changes
	// a bit.
	for _, b := range [][]float64{n.p.B, n.p.By} {
		for i := range b {
			b[i] += 0
		}
	}
	n.wx, n.wh = n.p.Wx, n.p.Wh
	n.wxT = transpose(p.Wx, 4*h, d)
	n.whT = transpose(p.Wh, 4*h, h)
	n.wyT = transpose(p.Wy, c, h)
	return n, nil
}

// Hidden returns H, the number of LSTM units.
func (n *Network) Hidden() int { return n.h }

// Input returns D, the number of input features.
func (n *Network) Input() int { return n.d }

// Classes returns C, the number of logits.
func (n *Network) Classes() int { return n.c }

// Params returns a copy of the network's weights.
func (n *Network) Params() Params {
	p := n.p
	p.Wx, p.Wh, p.B, p.Wy, p.By = clone(p.Wx), clone(p.Wh), clone(p.B), clone(p.Wy), clone(p.By)
	return p
}

func clone(v []float64) []float64 { return append([]float64(nil), v...) }

// transpose returns the cols×rows transpose of a rows×cols matrix.
func transpose(m []float64, rows, cols int) []float64 {
	t := make([]float64, rows*cols)
	for r := range rows {
		for c := range cols {
			t[c*rows+r] = m[r*cols+c]
		}
	}
	return t
}

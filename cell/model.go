package cell

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// Model is an LSTM classifier of PyTorch's usual shape: nn.LSTM with one
// or more layers, one or two directions, a head, then a classifier. The
// head (see Head and head_pool.go) maps the top layer's outputs to one
// vector: by default (HeadHN) the final states — h_n[-1] for one
// direction, cat(h_n[-2], h_n[-1]) for two: the forward direction's state
// after the last step and the backward direction's state after it has
// read the first step; or hn-bf, last, mean or max. The classifier is
// nn.Linear, or Linear → ReLU or Tanh → Linear. Layer k+1 reads the output
// sequence of layer k, both directions concatenated (forward first).
// Initial states are zero. It reads dense input (an embedding layer, if
// any, is the caller's: attribution is on the embedded input) and, except
// in DeepLIFT and contextual decomposition, one-hot input: a fast path of
// the first layer, whose gates without recurrent weights come from
// per-symbol tables (tables.go) and whose IG sums each lane's
// input gradient.
//
// It is the one engine: the white-box networks (package whitebox) are its
// one-layer, one-direction models with head hn and one Linear decoder,
// built with the LRP rule LRPHao (Params.LRP). A Model is
// immutable and safe for concurrent use; a Runner holds the
// buffers of one goroutine.
type Model struct {
	p       Params
	in, h   int // input size of layer 0, H
	dirs    int // 1 or 2
	c       int
	cells   []packedCell // [layer*dirs + dir]
	wy, wyT []float64    // C×k and its transpose
	by      []float64    // C (zeros when the decoder has no bias)
	k       int          // the decoder's inputs: H·dirs, or Units
	w1, w1T []float64    // Units×(H·dirs) and its transpose (hidden layer)
	b1      []float64    // Units (zeros without bias)
	tabs    *tableSet    // layer 0's gates read from tables on one-hot input (tables.go), or nil

	att *attnHead // the attention head's scoring layers, or nil

	// nonzero: no weight of the cells, W1 or Wy is ±0 (kernel.Nonzero),
	// so that their products skip the kernel's scan for ±0 coefficients
	// (kernel.MulAddRowsNonzero).
	nonzero bool
}

// Params are the weights of a classifier in PyTorch's layout
// and gate order (i, f, g, o), flat and row-major.
type Params struct {
	Input         int  // E: the input features of layer 0
	Hidden        int  // H
	Layers        int  // num_layers, at least 1
	Bidirectional bool // two directions per layer
	Classes       int  // C

	// Kind is the kind of every layer: LayerLSTM (the zero value) or
	// LayerGRU (layer_gru.go).
	Kind LayerKind

	// Cells holds layer k's directions at [k*dirs] (forward) and
	// [k*dirs+1] (backward, PyTorch's _reverse tensors).
	Cells []CellParams
	Wy    []float64 // C×(H·dirs), or C×Units with a hidden layer: the decoder's weight
	By    []float64 // C, or nil for a decoder without bias

	// Head maps the top layer's outputs to the classifier's input (zero:
	// HeadHN, h_n).
	Head Head

	// A classifier with a hidden layer (Act ≠ ActNone) computes
	// logits = Wy·act(W1·v + B1) + By, v the head's output: W1 is
	// Units×(H·dirs), B1 is Units or nil. With Act = ActNone, Units, W1
	// and B1 must be zero.
	Act   Activation
	Units int
	W1    []float64
	B1    []float64

	// LRP is the rule LRP follows (LRPArras, the zero value, or LRPHao,
	// the white-box networks' rule: one layer, one direction, head hn,
	// a single Linear classifier, LSTM layers only).
	LRP LRPRule

	// Attention is the scoring layers of the attention head
	// (head_attention.go): required for HeadAttention, kept (checked,
	// unused) for the other heads.
	Attention *Attention
}

// CellParams is one direction of one layer: weight_ih (4H×in, where in is
// Input for layer 0 and H·dirs above), weight_hh (4H×H) and the sum of
// bias_ih and bias_hh (4H; nil for an LSTM built with bias=False).
//
// A GRU's (Kind LayerGRU) are PyTorch's 3H×in and 3H×H, gates r, z, n, with
// B its bias_ih and Bhh its bias_hh (3H each; both nil for bias=False),
// kept apart since b_hn sits inside r⊙(W_hn·h + b_hn).
type CellParams struct {
	Wih, Whh, B []float64
	Bhh         []float64 // GRU only: bias_hh (nil for an LSTM)
}

// packedCell is a CellParams packed for the products.
type packedCell struct {
	in         int
	wih, wihT  []float64 // 4H×in and in×4H
	whh, whhT  []float64 // 4H×H and H×4H
	b          []float64 // 4H (zeros without bias)
	terms      cellTerms // the sparse matrices' nonzero terms
	hasBias    bool
	reverse    bool // the backward direction: runs from the last step to the first
	layer, dir int
}

// MaxModelWeights bounds the number of weights NewModel accepts
// (2^31 − 1, 16 GiB of float64 with the packed copies): sizes beyond it are
// refused before anything is allocated.
const MaxModelWeights = 1<<31 - 1

// Head returns the model's head.
func (s *Model) Head() Head { return s.p.Head }

// Activation returns the activation of the classifier's hidden layer
// (ActNone for a single Linear layer).
func (s *Model) Activation() Activation { return s.p.Act }

// NewModel validates p and packs its weights. It returns an error naming
// the problem for bad sizes, slices of the wrong length and NaN or infinite
// weights. The weights are copied.
func NewModel(p Params) (*Model, error) {
	if p.Input < 1 || p.Hidden < 1 || p.Layers < 1 || p.Classes < 1 {
		return nil, fmt.Errorf("cell: sizes must be positive: Input=%d Hidden=%d Layers=%d Classes=%d", p.Input, p.Hidden, p.Layers, p.Classes)
	}
	dirs := 1
	if p.Bidirectional {
		dirs = 2
	}
	h := p.Hidden
	if !countWeights(p, dirs) {
		return nil, fmt.Errorf("cell: a model of Input=%d Hidden=%d Layers=%d directions=%d Classes=%d has more than %d weights", p.Input, h, p.Layers, dirs, p.Classes, MaxModelWeights)
	}
	if len(p.Cells) != p.Layers*dirs {
		return nil, fmt.Errorf("cell: %d cells for %d layers × %d directions", len(p.Cells), p.Layers, dirs)
	}
	if p.Kind != LayerLSTM && p.Kind != LayerGRU {
		return nil, fmt.Errorf("cell: unknown layer kind %v", p.Kind)
	}
	s := &Model{in: p.Input, h: h, dirs: dirs, c: p.Classes}
	if err := checkLRPRule(p, dirs); err != nil {
		return nil, err
	}
	s.p = Params{Input: p.Input, Hidden: h, Layers: p.Layers, Bidirectional: p.Bidirectional, Classes: p.Classes, Kind: p.Kind, LRP: p.LRP}
	for k := range p.Layers {
		for d := range dirs {
			pc := p.Cells[k*dirs+d]
			if p.Kind == LayerGRU {
				c, err := newGRUCell(pc, k, d, h, s.layerInput(k))
				if err != nil {
					return nil, err
				}
				s.cells = append(s.cells, c)
				s.p.Cells = append(s.p.Cells, CellParams{Wih: clone(pc.Wih), Whh: clone(pc.Whh), B: clone(pc.B), Bhh: clone(pc.Bhh)})
				continue
			}
			c, err := newPackedCell(pc, k, d, h, s.layerInput(k))
			if err != nil {
				return nil, err
			}
			s.cells = append(s.cells, c)
			s.p.Cells = append(s.p.Cells, CellParams{Wih: c.wih, Whh: c.whh, B: clone(pc.B)})
		}
	}
	if err := checkHead(p, h*dirs); err != nil {
		return nil, err
	}
	s.setHead(p)
	s.wy = clone(p.Wy)
	s.wyT = transpose(s.wy, p.Classes, s.k)
	s.by = make([]float64, p.Classes)
	if p.By != nil {
		if err := checkWeights("decoder bias", p.By, p.Classes, fmt.Sprintf("C = %d", p.Classes)); err != nil {
			return nil, err
		}
		copy(s.by, p.By)
		for i := range s.by {
			s.by[i] += 0
		}
	}
	s.p.Wy, s.p.By = s.wy, clone(p.By)
	if dirs == 1 && p.Kind == LayerLSTM { // tables are an LSTM path (layer_gru.go)
		s.tabs = oneHotTables(&s.cells[0], h)
	}
	s.nonzero = kernel.Nonzero(s.wy) && kernel.Nonzero(s.w1)
	for _, c := range s.cells {
		s.nonzero = s.nonzero && kernel.Nonzero(c.wih) && kernel.Nonzero(c.whh)
	}
	return s, nil
}

// checkLRPRule checks p.LRP: LRPHao is defined for one layer of LSTM
// cells, one direction, the head hn and a single Linear classifier.
func checkLRPRule(p Params, dirs int) error {
	switch p.LRP {
	case LRPArras:
		return nil
	case LRPHao:
		if p.Layers != 1 || dirs != 1 || p.Kind != LayerLSTM || p.Head != HeadHN || p.Act != ActNone {
			return fmt.Errorf("cell: LRP rule %v is for one LSTM layer, one direction, head hn and a single Linear classifier", p.LRP)
		}
		return nil
	}
	return fmt.Errorf("cell: unknown LRP rule %v", p.LRP)
}

// LRPRule returns the rule the model's LRP follows (Params.LRP).
func (s *Model) LRPRule() LRPRule { return s.p.LRP }

// countWeights reports whether p's weights number at most
// MaxModelWeights, counted without overflow before any size is trusted.
func countWeights(p Params, dirs int) bool {
	for _, v := range []int{p.Input, p.Hidden, p.Layers, p.Classes} {
		if v > MaxModelWeights {
			return false
		}
	}
	total := uint64(0)
	add := func(a, b int) bool { // total += a·b, each ≤ 2^33 here
		hi, lo := bits.Mul64(uint64(a), uint64(b))
		var carry uint64
		total, carry = bits.Add64(total, lo, 0)
		return hi == 0 && carry == 0 && total <= MaxModelWeights
	}
	h := p.Hidden
	for k := range p.Layers {
		in := p.Input
		if k > 0 {
			in = h * dirs
		}
		for range dirs {
			if !add(4*h, in+h+1) {
				return false
			}
		}
	}
	if p.Act != ActNone {
		if p.Units > MaxModelWeights || (p.Units > 0 && !add(p.Units, h*dirs+1)) {
			return false
		}
		return add(p.Classes, max(p.Units, 0)+1)
	}
	return add(p.Classes, h*dirs+1)
}

// layerInput is the input size of layer k: Input, then H·directions.
func (s *Model) layerInput(k int) int {
	if k == 0 {
		return s.in
	}
	return s.h * s.dirs
}

// newPackedCell checks and packs direction d of layer k, whose input has
// in features.
func newPackedCell(pc CellParams, k, d, h, in int) (packedCell, error) {
	name := cellName(k, d)
	if err := checkWeights(name+" weight_ih", pc.Wih, 4*h*in, fmt.Sprintf("4H×in = 4×%d×%d", h, in)); err != nil {
		return packedCell{}, err
	}
	if err := checkWeights(name+" weight_hh", pc.Whh, 4*h*h, fmt.Sprintf("4H×H = 4×%d×%d", h, h)); err != nil {
		return packedCell{}, err
	}
	if pc.B != nil {
		if err := checkWeights(name+" bias", pc.B, 4*h, fmt.Sprintf("4H = 4×%d", h)); err != nil {
			return packedCell{}, err
		}
	}
	c := packedCell{in: in, layer: k, dir: d, reverse: d == 1, hasBias: pc.B != nil}
	c.wih, c.whh = clone(pc.Wih), clone(pc.Whh)
	c.b = make([]float64, 4*h)
	copy(c.b, pc.B)
	for i := range c.b {
		c.b[i] += 0 // −0 becomes +0, as in New
	}
	c.wihT = transpose(c.wih, 4*h, in)
	c.whhT = transpose(c.whh, 4*h, h)
	c.terms = cellTerms{
		wih: sparseOf(c.wih, 4*h, in), whh: sparseOf(c.whh, 4*h, h),
		wihT: sparseOf(c.wihT, in, 4*h), whhT: sparseOf(c.whhT, h, 4*h),
	}
	return c, nil
}

// cellName names layer k's direction d as PyTorch's tensors do: l0, l0_reverse.
func cellName(k, d int) string {
	if d == 1 {
		return fmt.Sprintf("layer %d (reverse)", k)
	}
	return fmt.Sprintf("layer %d", k)
}

func checkWeights(name string, v []float64, want int, dims string) error {
	if len(v) != want {
		return fmt.Errorf("cell: %s has %d elements, want %s = %d", name, len(v), dims, want)
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("cell: %s[%d] is %v; weights must be finite", name, i, x)
		}
	}
	return nil
}

// Input returns the number of input features of layer 0.
func (s *Model) Input() int { return s.in }

// Hidden returns H, the number of units of each direction of each layer.
func (s *Model) Hidden() int { return s.h }

// Layers returns the number of layers.
func (s *Model) Layers() int { return s.p.Layers }

// Directions returns 1, or 2 for a bidirectional model.
func (s *Model) Directions() int { return s.dirs }

// Classes returns C, the number of logits.
func (s *Model) Classes() int { return s.c }

// HasDecoderBias reports whether the decoder has a bias.
func (s *Model) HasDecoderBias() bool { return s.p.By != nil }

// HasLSTMBias reports whether the LSTM has biases (bias=True in PyTorch).
func (s *Model) HasLSTMBias() bool { return s.cells[0].hasBias }

// Params returns a copy of the weights.
func (s *Model) Params() Params {
	p := s.p
	p.Cells = make([]CellParams, len(s.p.Cells))
	for i, c := range s.p.Cells {
		p.Cells[i] = CellParams{Wih: clone(c.Wih), Whh: clone(c.Whh), B: clone(c.B), Bhh: clone(c.Bhh)}
	}
	p.Wy, p.By = clone(s.p.Wy), clone(s.p.By)
	p.W1, p.B1 = clone(s.p.W1), clone(s.p.B1)
	p.Attention = s.Attention()
	return p
}

// Weights returns the number of weights (the parameters of the LSTM and the
// decoder).
func (s *Model) Weights() int {
	n := len(s.wy) + len(s.p.By) + len(s.p.W1) + len(s.p.B1) + s.p.attnWeights()
	for _, c := range s.p.Cells {
		n += len(c.Wih) + len(c.Whh) + len(c.B) + len(c.Bhh)
	}
	return n
}

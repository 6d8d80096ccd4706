package cell

import (
	"fmt"
	"strings"
)

// Head says how a model turns its top layer's outputs into the
// vector its classifier reads, each exactly PyTorch's expression. output
// is the top layer's output sequence (batch_first, both directions
// concatenated, forward first) and h_n its final states. For one
// direction hn, hn-bf and last are one function, h_n[-1] (the top layer's
// final state; hn-bf has no backward half to put first). Max pooling's
// ties go to the earliest step, as PyTorch's CPU max(dim) (its indices,
// which its backward follows, are the first maximal ones); gradients and
// LRP follow head_pool.go's rules.
type Head int

// The heads. HeadHN is the zero value and the default.
const (
	HeadHN   Head = iota // torch.cat((h_n[-2], h_n[-1]), dim=1); h_n[-1] for one direction
	HeadHNBF             // torch.cat((h_n[-1], h_n[-2]), dim=1): backward direction first
	HeadLast             // output[:, -1, :] (the backward half has read the last token only)
	HeadMean             // output.mean(dim=1)
	HeadMax              // output.max(dim=1).values

	// HeadAttention is attention pooling, Σ_t softmax_t(score(out_t))·out_t
	// (head_attention.go); it needs Params.Attention.
	HeadAttention
)

// Heads lists the pooling heads, hn to max, in the order above: those
// that need no weights of their own (HeadAttention is not among them). A
// new slice each call.
func Heads() []Head { return []Head{HeadHN, HeadHNBF, HeadLast, HeadMean, HeadMax} }

var headNames = [...]string{"hn", "hn-bf", "last", "mean", "max", "attention"}

// String returns the head's name: hn, hn-bf, last, mean, max or attention.
func (h Head) String() string {
	if h < 0 || int(h) >= len(headNames) {
		return fmt.Sprintf("Head(%d)", int(h))
	}
	return headNames[h]
}

// ParseHead returns the head called s.
func ParseHead(s string) (Head, error) {
	for k, name := range headNames {
		if s == name {
			return Head(k), nil
		}
	}
	return 0, fmt.Errorf("unknown head %q (heads: %s)", s, strings.Join(headNames[:], ", "))
}

// Activation is the activation between the two Linear layers of a
// classifier with a hidden layer. ActNone (the zero value) is a classifier
// of one Linear layer.
type Activation int

// The activations.
const (
	ActNone Activation = iota // one Linear layer: no hidden layer
	ActReLU                   // Linear → ReLU → Linear
	ActTanh                   // Linear → Tanh → Linear
)

var actNames = [...]string{"none", "relu", "tanh"}

// String returns the activation's name: none, relu or tanh.
func (a Activation) String() string {
	if a < 0 || int(a) >= len(actNames) {
		return fmt.Sprintf("Activation(%d)", int(a))
	}
	return actNames[a]
}

// ParseActivation returns the activation called s (relu or tanh; none for
// a classifier of one Linear layer).
func ParseActivation(s string) (Activation, error) {
	for k, name := range actNames {
		if s == name {
			return Activation(k), nil
		}
	}
	return 0, fmt.Errorf("unknown activation %q (activations: relu, tanh)", s)
}

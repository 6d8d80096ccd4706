package model

import (
	"errors"
	"fmt"
	"strings"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/internal/visible"
	"github.com/whitebox-lstm/whitebox/tensorfile"
)

// HeadMetadataKey is the safetensors __metadata__ key that records a
// model's head: its value is a head spec (see ParseHeadSpec).
const HeadMetadataKey = "whitebox.head"

// HeadSpec writes a head and activation as one string: the head's name,
// and "+" and the activation's name for a classifier with a hidden layer
// ("mean", "hn-bf", "max+relu").
func HeadSpec(h cell.Head, a cell.Activation) string {
	if a == cell.ActNone {
		return h.String()
	}
	return h.String() + "+" + a.String()
}

// ParseHeadSpec reads HeadSpec's format: "HEAD" or "HEAD+ACT", HEAD one of
// hn, hn-bf, last, mean, max and ACT relu or tanh.
func ParseHeadSpec(s string) (cell.Head, cell.Activation, error) {
	// The spec is echoed once, by a window (visible.Quote): a file's
	// metadata value may be a megabyte.
	hs, as, hasAct := strings.Cut(s, "+")
	h, err := cell.ParseHead(hs)
	if err != nil {
		heads := cell.Heads()
		names := make([]string, len(heads), len(heads)+1)
		for i, h := range heads {
			names[i] = h.String()
		}
		names = append(names, cell.HeadAttention.String())
		return 0, 0, fmt.Errorf("head spec %s: unknown head (heads: %s, each optionally followed by +relu or +tanh)", visible.Quote(s), strings.Join(names, ", "))
	}
	if !hasAct {
		return h, cell.ActNone, nil
	}
	a, err := cell.ParseActivation(as)
	if err != nil || a == cell.ActNone {
		return 0, 0, fmt.Errorf("head spec %s: unknown activation after the + (activations: relu, tanh)", visible.Quote(s))
	}
	return h, a, nil
}

// resolveHead chooses the head and activation of f's model: o's, else the
// metadata's, else HeadHN and no activation. A malformed metadata value
// is an error naming the key.
func resolveHead(f *tensorfile.File, o Options) (h cell.Head, a cell.Activation, source string, err error) {
	h, a, source = cell.HeadHN, cell.ActNone, HeadDefault
	if v, ok := f.Metadata[HeadMetadataKey]; ok {
		mh, ma, err := ParseHeadSpec(v)
		if err != nil {
			return 0, 0, "", fmt.Errorf("safetensors metadata %q: %w", HeadMetadataKey, err)
		}
		h, a, source = mh, ma, HeadFromMetadata
	}
	if o.Head != nil {
		if _, err := cell.ParseHead(o.Head.String()); err != nil {
			return 0, 0, "", fmt.Errorf("options: %w", err)
		}
		h, source = *o.Head, HeadFromOptions
	}
	if o.Act != cell.ActNone {
		if _, err := cell.ParseActivation(o.Act.String()); err != nil {
			return 0, 0, "", fmt.Errorf("options: %w", err)
		}
		a = o.Act
	}
	return h, a, source, nil
}

// WithHead returns a model with m's weights and another head and
// activation (HeadSource HeadFromOptions). The activation must be ActNone
// for a classifier of one Linear layer and relu or tanh for one of two.
// m is unchanged; the two share the embedding and the tensor list.
func (m *Model) WithHead(h cell.Head, a cell.Activation) (*Model, error) {
	if m == nil || m.Net == nil {
		return nil, fmt.Errorf("model: no model (nil or not made by Load)")
	}
	p := m.Net.Params()
	if err := checkAct(a, p.Units > 0, m.Names.Decoder, m.OutputLayer); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	p.Head, p.Act = h, a
	net, err := cell.NewModel(p)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	c := *m
	c.Net, c.Head, c.Act, c.HeadSource = net, h, a, HeadFromOptions
	return &c, nil
}

// ErrNoActivation is wrapped by the error of a classifier of two Linear
// layers whose activation neither Options.Act nor the file's metadata
// gives: the file was read, but the model cannot be built without it.
var ErrNoActivation = errors.New("give the activation between them with Options.Act (activations: relu, tanh)")

// checkAct checks an activation against the classifier: required for two
// Linear layers (first, second), refused for one.
func checkAct(a cell.Activation, two bool, first, second string) error {
	if two && a == cell.ActNone {
		return fmt.Errorf("the classifier has two Linear layers (%s → %s): %w", visible.String(first), visible.String(second), ErrNoActivation)
	}
	if !two && a != cell.ActNone {
		return fmt.Errorf("activation %v given, but the classifier is one Linear layer (%s) with no activation", a, visible.String(first))
	}
	return nil
}

// actName is the hidden layer's activation as Summary writes it. A
// classifier of two Linear layers with ActNone, which Load never returns,
// is a copy made to show a file whose activation nothing gives (whitebox
// inspect builds it with one to read it at all): it reads "activation
// unknown".
func (m *Model) actName() string {
	if m.Act == cell.ActNone {
		return "activation unknown"
	}
	return m.Act.String()
}

// HeadExpression is the PyTorch expression of head h for a model of dirs
// directions (for one direction hn, hn-bf and last are all h_n[-1]).
func HeadExpression(h cell.Head, dirs int) string {
	switch {
	case h == cell.HeadMean:
		return "output.mean(dim=1)"
	case h == cell.HeadMax:
		return "output.max(dim=1).values"
	case h == cell.HeadAttention:
		return "(softmax(score(output), dim=1) * output).sum(dim=1)"
	case dirs == 1:
		return "h_n[-1]"
	case h == cell.HeadHNBF:
		return "cat(h_n[-1], h_n[-2])"
	case h == cell.HeadLast:
		return "output[:, -1, :]"
	}
	return "cat(h_n[-2], h_n[-1])"
}

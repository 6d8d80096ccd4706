package model

import (
	"fmt"
	"strings"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/internal/visible"
)

// The attention head's scoring layers (cell.HeadAttention): one Linear(D,
// 1), or Linear(D, A) → tanh → Linear(A, 1), D = H·directions. They are
// found, before the classifier, by name: the unused 2-D <prefix>.weight
// tensors under a module whose name is attention, attn or att (or starts
// with attn, attention or att_: attn_fc, attention_layer), e.g.
// attention.weight [1, D], or attn.0.weight [A, D] and attn.2.weight [1,
// A] of an nn.Sequential; Names.Attention names the module instead. When
// the head is attention (Options.Head, the metadata) and no name says
// which, they are found by shape: one chain [A, D] → [1, A] of Linear
// layers in one module, or else one [1, D] Linear beside another
// classifier candidate.

// HeadFromTensors is Model.HeadSource for a head the file's tensors give:
// attention scoring layers found by name make the head attention.
const HeadFromTensors = "tensors"

// attnModule reports whether a name's part names an attention module.
func attnModule(part string) bool {
	p := strings.ToLower(part)
	return p == "att" || strings.HasPrefix(p, "attn") || strings.HasPrefix(p, "attention") || strings.HasPrefix(p, "att_")
}

// attnPrefix returns the prefix of X up to its first part that names an
// attention module, or "".
func attnPrefix(x string) string {
	parts := strings.Split(x, ".")
	for i, p := range parts {
		if attnModule(p) {
			return strings.Join(parts[:i+1], ".")
		}
	}
	return ""
}

// attnLayers are the prefixes of the scoring layers: second "" for one.
type attnLayers struct{ first, second string }

// attnOf returns the scoring layers among the Linear candidates c (the
// members of one module), or false if they are not one [1, hd] or a chain
// [A, hd] → [1, A].
func attnOf(c []linearCandidate, hd int) (attnLayers, bool) {
	switch len(c) {
	case 1:
		if c[0].rows == 1 && c[0].cols == hd {
			return attnLayers{first: c[0].prefix}, true
		}
	case 2:
		for _, o := range [][2]int{{0, 1}, {1, 0}} {
			a, b := c[o[0]], c[o[1]]
			if a.cols == hd && b.rows == 1 && b.cols == a.rows && (a.rows != 1 || hd != 1 || inOrder(a.prefix, b.prefix)) {
				return attnLayers{a.prefix, b.prefix}, true
			}
		}
	}
	return attnLayers{}, false
}

// unusedLinears lists the unused 2-D <prefix>.weight tensors.
func (b *builder) unusedLinears() []linearCandidate {
	var lins []linearCandidate
	for _, t := range b.f.Tensors {
		p, ok := strings.CutSuffix(t.Name, ".weight")
		if !ok || b.used[t.Name] != "" || len(t.Shape) != 2 {
			continue
		}
		lins = append(lins, linearCandidate{p, t.Shape[0], t.Shape[1]})
	}
	return lins
}

// findAttention finds the attention scoring layers (see above); found is
// false when the file has none by name and the head is not attention.
func (b *builder) findAttention(names Names, hd int) (l attnLayers, found bool, err error) {
	lins := b.unusedLinears()
	if names.Attention != "" {
		var in []linearCandidate
		for _, c := range lins {
			if c.prefix == names.Attention || strings.HasPrefix(c.prefix, names.Attention+".") {
				in = append(in, c)
			}
		}
		l, ok := attnOf(in, hd)
		if !ok {
			return l, false, fmt.Errorf("attention %s: want %s.weight of shape [1, %d], or two Linear layers under it of shapes [A, %d] and [1, A]; found %s", visible.Quote(names.Attention), names.Attention, hd, hd, describeLinears(in))
		}
		return l, true, nil
	}
	groups := map[string][]linearCandidate{}
	var order, all []string
	var named []linearCandidate
	for _, c := range lins {
		p := attnPrefix(c.prefix)
		if p == "" || embLike(c.prefix) {
			continue
		}
		if groups[p] == nil {
			order = append(order, p)
		}
		groups[p] = append(groups[p], c)
		named = append(named, c)
	}
	var valid []attnLayers
	for _, p := range order {
		if l, ok := attnOf(groups[p], hd); ok {
			valid = append(valid, l)
			all = append(all, p)
		}
	}
	if len(valid) == 0 && len(order) > 1 { // attn1 → attn2: two modules
		if l, ok := attnOf(named, hd); ok {
			valid = append(valid, l)
		}
	}
	switch {
	case len(valid) == 1:
		return valid[0], true, nil
	case len(valid) > 1:
		return l, false, fmt.Errorf("several attention candidates: %s; name one with Names.Attention", list(all))
	case b.head != cell.HeadAttention:
		return l, false, nil
	}
	// By shape: the head is attention.
	var pairs []attnLayers
	var singles []string
	others := 0
	for _, a := range lins {
		if embLike(a.prefix) || a.cols != hd {
			continue
		}
		if a.rows == 1 {
			singles = append(singles, a.prefix)
		} else {
			others++
		}
		for _, c := range lins {
			if c.prefix != a.prefix && c.rows == 1 && c.cols == a.rows && inOrder(a.prefix, c.prefix) {
				pairs = append(pairs, attnLayers{a.prefix, c.prefix})
			}
		}
	}
	switch {
	case len(pairs) == 1:
		return pairs[0], true, nil
	case len(pairs) == 0 && len(singles) == 1 && others > 0:
		return attnLayers{first: singles[0]}, true, nil
	}
	return l, false, fmt.Errorf("the head is attention, but its scoring layers (Linear(%d, 1), or Linear(%d, A) → tanh → Linear(A, 1)) were not found by name (attention, attn, att) or by shape; name them with Names.Attention (-attention)", hd, hd)
}

func describeLinears(c []linearCandidate) string {
	if len(c) == 0 {
		return "no Linear layer"
	}
	var s []string
	for _, x := range c {
		s = append(s, fmt.Sprintf("%s.weight [%d, %d]", x.prefix, x.rows, x.cols))
	}
	return cut(s, 5)
}

// attention reads the scoring layers l into p.Attention.
func (b *builder) attention(l attnLayers) (*cell.Attention, error) {
	n, w, bias, err := b.linear(l.first, "attention score", "units")
	if err != nil {
		return nil, err
	}
	if l.second == "" {
		if n != 1 {
			return nil, fmt.Errorf("attention %s has %d outputs, want 1", visible.Quote(l.first), n)
		}
		return &cell.Attention{W1: w, B1: bias}, nil
	}
	a := &cell.Attention{Units: n, W1: w, B1: bias}
	b.used[l.first+".weight"] = "attention hidden weight"
	if bias != nil {
		b.used[l.first+".bias"] = "attention hidden bias"
	}
	m, w2, b2, err := b.linear(l.second, "attention score", "output")
	if err != nil {
		return nil, err
	}
	if m != 1 {
		return nil, fmt.Errorf("attention %s has %d outputs, want 1", visible.Quote(l.second), m)
	}
	a.W2, a.B2 = w2, b2
	return a, nil
}

// AttentionName returns the prefix of the attention head's scoring layers
// ("" without): the first, and "→" and the second for two.
func (m *Model) AttentionName() string { return m.attnName }

// attnModuleName is the module that holds the scoring layers l (its
// Names.Attention): the first's prefix for one, their common parent for
// two.
func attnModuleName(l attnLayers) string {
	if l.second == "" {
		return l.first
	}
	p1, _ := splitLast(l.first)
	p2, _ := splitLast(l.second)
	if p1 == p2 && p1 != "" {
		return p1
	}
	return l.first
}

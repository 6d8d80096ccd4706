package model

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/whitebox-lstm/whitebox/internal/visible"
)

// The classifier: one Linear layer on the head's output (C × H·dirs), or
// two with an activation between them (Units × H·dirs, then C × Units),
// as fc1/fc2, hidden/out or an nn.Sequential's classifier.0/classifier.2
// write them. The activation is not in a state_dict: Options.Act (or the
// file's metadata) gives it.

// classifierParts are the prefixes of the classifier's Linear layers:
// first reads the head's output; second, if not "", reads first's.
type classifierParts struct {
	first, second string
}

// linearCandidate is an unused 2-D <prefix>.weight.
type linearCandidate struct {
	prefix     string
	rows, cols int
}

// classifier finds the classifier among the tensors the LSTM does not use:
// a pair of Linear layers chained by their shapes and ordered by their
// names (fc1 → fc2, x.0 → x.2, hidden → out), else the single Linear of
// shape [C, hd]. names.Decoder, if given, names the first Linear (or an
// nn.Sequential holding it); its second is then found by shape alone.
func (b *builder) classifier(names Names, hd int) (classifierParts, error) {
	var lins []linearCandidate
	for _, t := range b.f.Tensors {
		p, ok := strings.CutSuffix(t.Name, ".weight")
		if !ok || b.used[t.Name] != "" || len(t.Shape) != 2 {
			continue
		}
		lins = append(lins, linearCandidate{p, t.Shape[0], t.Shape[1]})
	}
	var firsts []string
	for _, c := range lins {
		if c.cols == hd {
			firsts = append(firsts, c.prefix)
		}
	}
	seconds := func(first string, ordered bool) []string {
		var rows int
		for _, c := range lins {
			if c.prefix == first {
				rows = c.rows
			}
		}
		var s []string
		for _, c := range lins {
			if c.prefix != first && c.cols == rows && !embLike(c.prefix) && (!ordered || inOrder(first, c.prefix)) {
				s = append(s, c.prefix)
			}
		}
		return s
	}
	if names.Decoder != "" {
		first := names.Decoder
		if t := b.f.Get(first + ".weight"); t == nil {
			// An nn.Sequential: its one member that reads H·dirs.
			var in []string
			for _, p := range firsts {
				if strings.HasPrefix(p, first+".") {
					in = append(in, p)
				}
			}
			if len(in) == 1 {
				first = in[0]
			}
		}
		t := b.f.Get(first + ".weight")
		if t == nil || len(t.Shape) != 2 || t.Shape[1] != hd {
			return classifierParts{}, fmt.Errorf("decoder %q: want a tensor %q of shape [C, %d] (or [Units, %d] before a second Linear); candidates: %s", names.Decoder, names.Decoder+".weight", hd, hd, list(firsts))
		}
		s := seconds(first, false)
		switch len(s) {
		case 0:
			return classifierParts{first: first}, nil
		case 1:
			return classifierParts{first, s[0]}, nil
		}
		if o := seconds(first, true); len(o) == 1 {
			return classifierParts{first, o[0]}, nil
		}
		return classifierParts{}, fmt.Errorf("decoder %q: several Linear layers could follow it: %s", names.Decoder, list(s))
	}
	var pairs []classifierParts
	for _, p := range firsts {
		if embLike(p) {
			continue
		}
		for _, s := range seconds(p, true) {
			pairs = append(pairs, classifierParts{p, s})
		}
	}
	for _, p := range pairs {
		if third := seconds(p.second, true); len(third) > 0 {
			return classifierParts{}, fmt.Errorf("a classifier of more than two Linear layers (%s → %s → %s) is not supported", visible.String(p.first), visible.String(p.second), visible.String(third[0]))
		}
	}
	switch len(pairs) {
	case 0:
	case 1:
		return pairs[0], nil
	default:
		var l []string
		for _, p := range pairs {
			l = append(l, p.first+" → "+p.second)
		}
		return classifierParts{}, fmt.Errorf("several two-layer classifiers: %s; name the first Linear with Names.Decoder", list(l))
	}
	firsts = prefer(firsts, func(p string) bool { return !embLike(p) })
	if len(firsts) == 0 {
		return classifierParts{}, fmt.Errorf("no decoder: no tensor <prefix>.weight of shape [C, %d] (H·directions); tensors: %s", hd, list(b.names()))
	}
	if len(firsts) > 1 {
		return classifierParts{}, fmt.Errorf("several decoder candidates of shape [C, %d]: %s; name one with Names.Decoder", hd, list(firsts))
	}
	return classifierParts{first: firsts[0]}, nil
}

func embLike(p string) bool { return strings.Contains(strings.ToLower(p), "emb") }

// outputNames are the usual names of a classifier's last Linear.
var outputNames = map[string]bool{"out": true, "output": true, "fc": true, "classifier": true, "decoder": true,
	"head": true, "logits": true, "cls": true, "pred": true, "final": true, "fc_out": true, "out_proj": true}

// inOrder reports whether the Linear first plausibly comes before second
// in one classifier: both in the same module, and second's name is an
// output's (out, fc, classifier, …) or follows first's in natural order
// (fc1 < fc2 < fc10, 0 < 2, hidden < out).
func inOrder(first, second string) bool {
	pf, lf := splitLast(first)
	ps, ls := splitLast(second)
	if pf != ps {
		return false
	}
	if outputNames[strings.ToLower(ls)] && !outputNames[strings.ToLower(lf)] {
		return true
	}
	return naturalLess(lf, ls)
}

// splitLast splits a dotted name into its parent and its last part.
func splitLast(p string) (parent, last string) {
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return "", p
}

// naturalLess compares a and b with their trailing numbers as numbers.
func naturalLess(a, b string) bool {
	sa, na, oka := trailingNumber(a)
	sb, nb, okb := trailingNumber(b)
	if oka && okb && sa == sb {
		return na < nb
	}
	return a < b
}

func trailingNumber(s string) (stem string, n uint64, ok bool) {
	i := len(s)
	for i > 0 && unicode.IsDigit(rune(s[i-1])) {
		i--
	}
	if i == len(s) || len(s)-i > 18 {
		return s, 0, false
	}
	n, err := strconv.ParseUint(s[i:], 10, 64)
	return s[:i], n, err == nil
}

package verify

import (
	"fmt"
	"strings"

	"github.com/whitebox-lstm/whitebox/model"
)

// Flags writes a head spec as the command's flags: "-head mean", "-head
// max -act relu".
func Flags(spec string) string {
	h, a, _ := strings.Cut(spec, "+")
	if a == "" {
		return "-head " + h
	}
	return "-head " + h + " -act " + a
}

// Apply checks m against the cases. With auto false, m's own head must
// match: otherwise the error names the worst line and its difference and
// the heads that would match. With auto true, every candidate is tried
// and the model with the matching head is returned; none, or several
// that are different functions of the input, is an error naming them.
// With fixAct (an activation given), auto tries m's activation only.
// name is the verify file, for messages.
func Apply(m *model.Model, cases []Case, name string, auto, fixAct bool) (*model.Model, error) {
	return apply(m, caseList(cases), name, auto, fixAct)
}

// apply is Apply on any source.
func apply(m *model.Model, src source, name string, auto, fixAct bool) (*model.Model, error) {
	if !auto {
		v, err := check(m, src)
		if err != nil {
			return nil, fmt.Errorf("-verify %s: %v", name, err)
		}
		if v.Match() {
			return m, nil
		}
		all, err := verdicts(m, src)
		if err != nil {
			return nil, fmt.Errorf("-verify %s: %v", name, err)
		}
		return nil, fmt.Errorf("-verify %s: the logits do not match %s: line %d differs by %.3g (relative; at most %g allowed); %s",
			name, Flags(v.Spec()), v.WorstLine, v.Worst, Tolerance, Hint(all))
	}
	all, err := verdicts(m, src)
	if err != nil {
		return nil, fmt.Errorf("-verify %s: %v", name, err)
	}
	if fixAct {
		var keep []Verdict
		for _, v := range all {
			if v.Act == m.Act {
				keep = append(keep, v)
			}
		}
		all = keep
	}
	specs, classes := Matching(all)
	switch len(specs) {
	case 0:
		return nil, fmt.Errorf("-head auto -verify %s: %s", name, Hint(all))
	case 1:
		h, a, err := model.ParseHeadSpec(specs[0])
		if err != nil {
			return nil, err
		}
		return m.WithHead(h, a)
	}
	return nil, fmt.Errorf("-head auto -verify %s: the logits match heads that are different functions of the input: %s; the lines do not tell them apart (add lines of several tokens) — give -head", name, strings.Join(classes, ", "))
}

// Hint says which heads match, or which comes closest.
func Hint(all []Verdict) string {
	specs, _ := Matching(all)
	if len(specs) > 0 {
		var fl []string
		for _, s := range specs {
			fl = append(fl, Flags(s))
		}
		return "the logits match " + strings.Join(fl, ", and ")
	}
	b := Best(all)[0]
	return fmt.Sprintf("no head matches (the closest, %s, differs by %.3g at line %d): is the file the model that wrote the logits, with its embedding and classifier?", Flags(b.Spec()), b.Worst, b.WorstLine)
}

// Report writes the verdict of every head, one per line, for inspect.
func Report(m *model.Model, cases []Case) (string, error) { return report(m, caseList(cases)) }

// report is Report on any source.
func report(m *model.Model, src source) (string, error) {
	all, err := verdicts(m, src)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "verify (%d lines, relative tolerance %g):\n", src.len(), Tolerance)
	for _, v := range all {
		same := ""
		if strings.Contains(v.Class, "=") {
			same = " (" + v.Class + ": one function for one direction)"
		}
		mark := "  "
		if v.Head == m.Head && v.Act == m.Act {
			mark = "* "
		}
		fmt.Fprintf(&b, "%s%s%s\n", mark, v, same)
	}
	specs, classes := Matching(all)
	switch len(specs) {
	case 0:
		fmt.Fprintf(&b, "no head matches\n")
	case 1:
		fmt.Fprintf(&b, "the logits match %s\n", Flags(specs[0]))
	default:
		fmt.Fprintf(&b, "the logits match heads that are different functions: %s (add lines of several tokens)\n", strings.Join(classes, ", "))
	}
	return b.String(), nil
}

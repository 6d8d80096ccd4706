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

// options writes a head spec as the model.Options that give it, for the
// package's messages: "Options.Head = mean", "Options.Head = max with
// Options.Act = relu" (package score turns them into Flags' form).
func options(spec string) string {
	h, a, _ := strings.Cut(spec, "+")
	if a == "" {
		return "Options.Head = " + h
	}
	return "Options.Head = " + h + " with Options.Act = " + a
}

// Apply checks m against the cases. With auto false, m's own head must
// match (m is returned; an assumed head, HeadSource model.HeadDefault, is
// then model.HeadFromVerify): otherwise the error names the worst line and
// its difference and the heads that would match. With auto true, every
// candidate is tried and the model with the matching head is returned
// (Pick's); none, or several that are different functions of the input,
// is an error naming them.
// With fixAct (an activation given), auto tries m's activation only.
// name is the verify file, for messages: "verify NAME: …".
func Apply(m *model.Model, cases []Case, name string, auto, fixAct bool) (*model.Model, error) {
	return apply(m, caseList(cases), name, auto, fixAct)
}

// apply is Apply on any source.
func apply(m *model.Model, src source, name string, auto, fixAct bool) (*model.Model, error) {
	if !auto {
		v, err := check(m, src)
		if err != nil {
			return nil, fmt.Errorf("verify %s: %v", name, err)
		}
		if v.Match() {
			if m.HeadSource == model.HeadDefault { // checked now: no longer assumed
				c := *m
				c.HeadSource = model.HeadFromVerify
				return &c, nil
			}
			return m, nil
		}
		all, err := verdicts(m, src)
		if err != nil {
			return nil, fmt.Errorf("verify %s: %v", name, err)
		}
		return nil, fmt.Errorf("verify %s: the logits do not match %s: line %d differs by %.3g (relative; at most %g allowed); %s",
			name, options(v.Spec()), v.WorstLine, v.Worst, Tolerance, Hint(all))
	}
	all, err := verdicts(m, src)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %v", name, err)
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
		return nil, fmt.Errorf("verify %s: %s", name, Hint(all))
	case 1:
		return Pick(m, all)
	}
	return nil, fmt.Errorf("verify %s: the logits match heads that are different functions of the input: %s; the lines do not tell them apart (add lines of several tokens) — give Options.Head", name, strings.Join(classes, ", "))
}

// Hint says which heads match, or which comes closest, as the
// padHint is said when no head matches: a model that packs padded inputs
// (pack_padded_sequence) never sees its trailing pads, and lines recorded
// with them match only once the pad id is known.
const padHint = " (if your model packs padded inputs, give its pad id with Options.Pad)"

// model.Options that give them.
func Hint(all []Verdict) string {
	specs, _ := Matching(all)
	if len(specs) > 0 {
		var fl []string
		for _, s := range specs {
			fl = append(fl, options(s))
		}
		return "the logits match " + strings.Join(fl, ", and ")
	}
	b := Best(all)[0]
	return fmt.Sprintf("no head matches (the closest, %s, differs by %.3g at line %d): is the file the model that wrote the logits, with its embedding and classifier?%s", options(b.Spec()), b.Worst, b.WorstLine, padHint)
}

// Pick is the model that the verdicts of m's heads (All's) point to: m
// with the head and activation that match (HeadSource
// model.HeadFromVerify), when those that match are one function of the
// input; m itself when none matches or several that differ do.
func Pick(m *model.Model, all []Verdict) (*model.Model, error) {
	specs, _ := Matching(all)
	if len(specs) != 1 {
		return m, nil
	}
	h, a, err := model.ParseHeadSpec(specs[0])
	if err != nil {
		return nil, err
	}
	p, err := m.WithHead(h, a)
	if err != nil {
		return nil, err
	}
	p.HeadSource = model.HeadFromVerify
	return p, nil
}

// Report writes the verdict of every head, one per line, for inspect (see
// Render).
func Report(m *model.Model, cases []Case) (string, error) { return report(m, caseList(cases)) }

// report is Report on any source.
func report(m *model.Model, src source) (string, error) {
	all, err := verdicts(m, src)
	if err != nil {
		return "", err
	}
	shown, err := Pick(m, all)
	if err != nil {
		return "", err
	}
	return Render(all, src.len(), shown), nil
}

// Render writes verdicts already computed on a file of lines lines (All's),
// one per line, and what they conclude; * marks the head and activation
// of shown, the model described beside them (Pick's: the match, when there
// is one).
func Render(all []Verdict, lines int, shown *model.Model) string {
	var b strings.Builder
	fmt.Fprintf(&b, "verify (%d lines, relative tolerance %g):\n", lines, Tolerance)
	for _, v := range all {
		same := ""
		if strings.Contains(v.Class, "=") {
			same = " (" + v.Class + ": one function for one direction)"
		}
		mark := "  "
		if v.Head == shown.Head && v.Act == shown.Act {
			mark = "* "
		}
		fmt.Fprintf(&b, "%s%s%s\n", mark, v, same)
	}
	specs, classes := Matching(all)
	switch len(specs) {
	case 0:
		fmt.Fprintf(&b, "no head matches%s\n", padHint)
	case 1:
		fmt.Fprintf(&b, "the logits match %s\n", options(specs[0]))
	default:
		fmt.Fprintf(&b, "the logits match heads that are different functions: %s (add lines of several tokens)\n", strings.Join(classes, ", "))
	}
	return b.String()
}

package verify

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
)

// Tolerance is the largest relative difference of a match (see the
// package doc).
const Tolerance = 1e-4

// Verdict is how the logits of one head and activation compare with the
// recorded ones.
type Verdict struct {
	Head cell.Head
	Act  cell.Activation
	// Worst is the largest relative difference over the lines, and
	// WorstLine its line (the first of equal ones).
	Worst     float64
	WorstLine int
	// Class names the heads that are the same function of the input for
	// this model (for one direction hn, hn-bf and last: h_n[-1] is the
	// last output): "hn = hn-bf = last"; the head alone otherwise.
	Class string
}

// Spec is the head spec of the verdict ("mean", "max+relu").
func (v Verdict) Spec() string { return model.HeadSpec(v.Head, v.Act) }

// Match reports whether the logits match within Tolerance.
func (v Verdict) Match() bool { return v.Worst <= Tolerance }

// String is one line: the head, match or not, the worst difference.
func (v Verdict) String() string {
	word := "no match"
	if v.Match() {
		word = "match"
	}
	return fmt.Sprintf("%-10s %-8s worst relative difference %.3g (line %d)", v.Spec(), word, v.Worst, v.WorstLine)
}

// Check runs the cases through m (its own head) and compares the logits.
// An error is an input the model cannot run (wrong vocabulary size, …).
func Check(m *model.Model, cases []Case) (Verdict, error) { return check(m, caseList(cases)) }

// check is Check on any source: a case whose forward pass would take more
// than the source's budget is an error before it runs.
func check(m *model.Model, src source) (Verdict, error) {
	if m == nil || m.Net == nil {
		return Verdict{}, fmt.Errorf("verify: no model")
	}
	if m.Embedding == nil {
		return Verdict{}, fmt.Errorf("verify: the model reads features, not token ids: verification needs a model with an embedding")
	}
	r, err := cell.NewRunner(m.Net)
	if err != nil {
		return Verdict{}, err
	}
	defer r.Close() // its trace goes with the pass, not when collected
	v := Verdict{Head: m.Head, Act: m.Act, Class: className(m.Head, m.Net.Directions())}
	budget := src.budget()
	err = src.each(func(c *Case) error {
		if len(c.Logits) != m.Net.Classes() {
			return fmt.Errorf("line %d: %d logits; the model has %d classes", c.Line, len(c.Logits), m.Net.Classes())
		}
		if need := forwardBytes(m, len(c.IDs)); budget > 0 && need > budget {
			return fmt.Errorf("line %d: its %d tokens need about %d bytes for their rows and the forward pass, more than verify.Open's budget %d allows: raise verify.Open's budget, or record shorter lines", c.Line, len(c.IDs), need, budget)
		}
		x, err := m.Embed(c.IDs)
		if err != nil {
			return fmt.Errorf("line %d: %v", c.Line, err)
		}
		y, err := r.Forward(x)
		if err != nil {
			return fmt.Errorf("line %d: %v", c.Line, err)
		}
		if d := difference(y, c.Logits); d > v.Worst || v.WorstLine == 0 {
			v.Worst, v.WorstLine = d, c.Line
		}
		return nil
	})
	if err != nil {
		return Verdict{}, err
	}
	return v, nil
}

// forwardBytes is the memory of a line of steps tokens run through m: its
// ids and embedded rows, and the forward pass's trace (kept by the runner
// for the longest line).
func forwardBytes(m *model.Model, steps int) int64 {
	return 8*int64(steps)*int64(1+m.Input()) + m.Net.TraceBytes(steps)
}

// difference is max_k |y_k − ref_k| / max(1, max_k |ref_k|); NaN logits of
// ours are +Inf.
func difference(y, ref []float64) float64 {
	scale, d := 1.0, 0.0
	for k := range ref {
		scale = max(scale, math.Abs(ref[k]))
	}
	for k := range ref {
		e := math.Abs(y[k] - ref[k])
		if math.IsNaN(e) {
			return math.Inf(1)
		}
		d = max(d, e)
	}
	return d / scale
}

// Candidate is a head and an activation.
type Candidate struct {
	Head cell.Head
	Act  cell.Activation
}

// Candidates are the heads and activations a model of m's shape may have:
// every head, with relu and with tanh for a classifier of two Linear
// layers.
func Candidates(m *model.Model) []Candidate {
	acts := []cell.Activation{cell.ActNone}
	if m.Net.Units() > 0 {
		acts = []cell.Activation{cell.ActReLU, cell.ActTanh}
	}
	var out []Candidate
	heads := cell.Heads()
	if m.Net.Attention() != nil { // its scoring layers: the attention head too
		heads = append(heads, cell.HeadAttention)
	}
	for _, h := range heads {
		for _, a := range acts {
			out = append(out, Candidate{h, a})
		}
	}
	return out
}

// All checks every candidate head and activation (Candidates), in order.
func All(m *model.Model, cases []Case) ([]Verdict, error) { return verdicts(m, caseList(cases)) }

// verdicts is All on any source: one pass over it per candidate, one
// candidate's model at a time.
func verdicts(m *model.Model, src source) ([]Verdict, error) {
	var out []Verdict
	for _, c := range Candidates(m) {
		mh, err := m.WithHead(c.Head, c.Act)
		if err != nil {
			return nil, err
		}
		v, err := check(mh, src)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// className names the heads that are one function with h for a model of
// dirs directions.
func className(h cell.Head, dirs int) string {
	if dirs == 1 && (h == cell.HeadHN || h == cell.HeadHNBF || h == cell.HeadLast) {
		return "hn = hn-bf = last"
	}
	return h.String()
}

// Matching returns the head specs that match, one per class of heads that
// are the same function (the first of each class, in Candidates' order),
// with the class's name.
func Matching(vs []Verdict) (specs, classes []string) {
	seen := map[string]bool{}
	for _, v := range vs {
		key := v.Class + "+" + v.Act.String()
		if v.Match() && !seen[key] {
			seen[key] = true
			specs = append(specs, v.Spec())
			cls := v.Class
			switch {
			case v.Act != cell.ActNone && strings.Contains(cls, "="):
				cls = "(" + cls + ")+" + v.Act.String()
			case v.Act != cell.ActNone:
				cls += "+" + v.Act.String()
			}
			classes = append(classes, cls)
		}
	}
	return specs, classes
}

// Best returns the verdicts sorted by their worst difference, smallest
// first (stable: Candidates' order among equals).
func Best(vs []Verdict) []Verdict {
	s := append([]Verdict(nil), vs...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].Worst < s[j].Worst })
	return s
}

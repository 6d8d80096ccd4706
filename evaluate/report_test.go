package evaluate

import (
	"bytes"
	"strings"
	"testing"
)

func TestWorst(t *testing.T) {
	w := Worst{K: 2}
	w.Add(Example{Line: 1, Failed: []string{"a"}})
	w.Add(Example{Line: 2})
	w.Add(Example{Line: 3, Failed: []string{"a", "b"}})
	w.Add(Example{Line: 4, Failed: []string{"a"}})
	w.Add(Example{Line: 5, Failed: []string{"a", "b"}})
	got := w.Examples()
	if len(got) != 2 || got[0].Line != 3 || got[1].Line != 5 {
		t.Errorf("worst %+v, want lines 3 and 5", got)
	}
	var none Worst
	none.Add(Example{Failed: []string{"a"}})
	if len(none.Examples()) != 0 {
		t.Error("the zero Worst kept an example")
	}
}

func TestReportFormats(t *testing.T) {
	r := &Report{Net: "bracket", Class: "predicted", Data: "test", Sources: []Source{{
		Name: "<tool>", Inputs: 1, Skipped: 2,
		Summaries: []Summary{{Criterion: "last-unclosed", Inputs: 1, Applicable: 1, Defined: 1, Mean: 0}},
		Worst:     []Example{{Line: 1, Input: "((", Tokens: []string{"(", "("}, Scores: []float64{1, 0.5}, Failed: []string{"last-unclosed"}}},
	}}}
	for _, f := range []string{"text", "json", "markdown", "html"} {
		var b bytes.Buffer
		if err := r.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "last-unclosed") {
			t.Errorf("%s: no criterion in %q", f, b.String())
		}
		if f == "html" && strings.Contains(b.String(), "<tool>") {
			t.Error("html: name not escaped")
		}
	}
	if err := r.Write(&bytes.Buffer{}, "pdf"); err == nil {
		t.Error("unknown format: no error")
	}
}

func TestCollector(t *testing.T) {
	c := NewCollector("tool", []string{"x", "y"}, 1)
	if err := c.Add(Example{Line: 1}, []Value{defined(1, true), defined(0, false)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(Example{Line: 2}, []Value{defined(1, true)}); err == nil {
		t.Error("one value for two criteria: no error")
	}
	c.Skip(2)
	s := c.Source()
	if s.Name != "tool" || s.Inputs != 1 || s.Skipped != 2 || len(s.Summaries) != 2 || len(s.Worst) != 1 || s.Worst[0].Failed[0] != "y" {
		t.Errorf("source %+v", s)
	}
}

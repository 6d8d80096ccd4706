package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// cdRecord is the part of a -method cd record these tests read.
type cdRecord struct {
	Input  string    `json:"input"`
	Scores []float64 `json:"scores"`
	Span   *struct {
		Start, Stop int
		Score       float64
	} `json:"span"`
}

func decodeCD(t *testing.T, out string) []cdRecord {
	t.Helper()
	var recs []cdRecord
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r cdRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("bad JSON line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestAttributeCDSpan: -method cd writes the library's token scores and,
// with -span, the span's score, to the bit, for a white-box network and an
// imported model; a span outside an input fails that input only.
func TestAttributeCDSpan(t *testing.T) {
	net, err := whitebox.New("sp-counter", whitebox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	status, out, errOut := runCLI(t, "", "attribute", "-net", "sp-counter", "-method", "cd", "-span", "0:1", "abcd", "acb", "b", "dcab")
	if status != 1 || !strings.Contains(errOut, `"b": attrib: span 0:1 is not within the input's 1 tokens`) {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	recs := decodeCD(t, out)
	if len(recs) != 3 {
		t.Fatalf("%d records: %s", len(recs), out)
	}
	for _, r := range recs {
		sym, _ := net.Task.Encode(r.Input)
		want, err := attrib.Attribute(t.Context(), net.Model, attrib.ContextualDecomposition, cell.OneHot(sym), attrib.Options{Span: &attrib.Span{Start: 0, Stop: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Span == nil || r.Span.Start != 0 || r.Span.Stop != 1 || math.Float64bits(r.Span.Score) != math.Float64bits(want.SpanScore) {
			t.Errorf("%s: span %+v, want 0:1 = %v", r.Input, r.Span, want.SpanScore)
		}
		for i, v := range r.Scores {
			if math.Float64bits(v) != math.Float64bits(want.Scores[i]) {
				t.Errorf("%s token %d: %v, the library %v", r.Input, i, v, want.Scores[i])
			}
		}
	}
	// Without -span, no "span" field; with -format text, the span's score.
	if _, out, _ := runCLI(t, "", "attribute", "-net", "sp-counter", "-method", "cd", "abcd"); strings.Contains(out, `"span"`) {
		t.Errorf("a span without -span: %s", out)
	}
	if _, out, _ := runCLI(t, "", "attribute", "-net", "sp-counter", "-method", "cd", "-span", "0:1", "-format", "text", "abcd"); !strings.Contains(out, "\tspan 0:1=") {
		t.Errorf("-format text: %q", out)
	}

	m, err := model.Load("../../model/testdata/uni1.safetensors", model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := m.Embed([]int{3, 1, 4, 1})
	if err != nil {
		t.Fatal(err)
	}
	want, err := attrib.Attribute(t.Context(), m, attrib.ContextualDecomposition, x, attrib.Options{Class: attrib.ClassIndex(2), Span: &attrib.Span{Start: 1, Stop: 3}})
	if err != nil {
		t.Fatal(err)
	}
	status, out, errOut = runCLI(t, "", "attribute", "-model", "../../model/testdata/uni1.safetensors", "-head", "hn", "-method", "cd", "-class", "2", "-span", "1:3", "3 1 4 1")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	r := decodeCD(t, out)[0]
	if r.Span == nil || math.Float64bits(r.Span.Score) != math.Float64bits(want.SpanScore) || len(r.Scores) != 4 || r.Scores[3] != want.Scores[3] {
		t.Errorf("uni1: %s; the library: scores %v, span %v", out, want.Scores, want.SpanScore)
	}
}

// TestAttributeCDFlags: what -method cd and -span refuse, as usage errors.
func TestAttributeCDFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-net", "sp-counter", "-method", "ig", "-span", "0:1"}, "-span is for -method cd, not ig"},
		{[]string{"-net", "sp-counter", "-method", "cd", "-span", "1"}, `-span "1": want i:j`},
		{[]string{"-net", "sp-counter", "-method", "cd", "-span", "-1:2"}, `-span "-1:2"`},
		{[]string{"-net", "sp-counter", "-method", "cd", "-span", "3:2"}, "ends at 2, before it starts at 3"},
		{[]string{"-model", "../../model/testdata/bi2.safetensors", "-method", "cd"}, "the model has 2 layers"},
		{[]string{"-model", "../../model/testdata/heads/hnbf_bi1.safetensors", "-method", "cd"}, "bidirectional"},
		{[]string{"-model", "../../model/testdata/uni1.safetensors", "-method", "cd", "-baseline", "id:1"}, "not cd"},
	} {
		status, _, errOut := runCLI(t, "", append(append([]string{"attribute"}, c.args...), "1 2")...)
		if status != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, stderr %q; want 2 and %q", c.args, status, errOut, c.want)
		}
	}
}

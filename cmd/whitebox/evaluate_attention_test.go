package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/evaluate"
)

// TestEvaluateAttention: lines that carry an attention model's weights
// ("attention", as attribute's records of such a model do) are judged as
// one more source, "attention weights", once an input (from the first
// method's lines), with the numbers a scores file of those weights gets;
// a line with bad weights is reported by number and skipped, as any
// malformed line.
func TestEvaluateAttention(t *testing.T) {
	status, gen, _ := runCLI(t, "", "generate", "-net", "sp-counter", "-n", "30", "-len", "4..12")
	if status != 0 {
		t.Fatal("generate failed")
	}
	records := map[string][]map[string]any{}
	for _, m := range []string{"lrp", "gxi", "occlusion"} {
		status, out, errOut := runCLI(t, gen, "attribute", "-net", "sp-counter", "-method", m)
		if status != 0 {
			t.Fatalf("attribute %s: %s", m, errOut)
		}
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			var r map[string]any
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			records[m] = append(records[m], r)
		}
	}
	// The lrp and gxi lines carry weights: occlusion's scores, made
	// non-negative (weights are), as another tool's attention would be.
	var file, alphaFile strings.Builder
	for _, m := range []string{"lrp", "gxi"} {
		for i, r := range records[m] {
			var alpha []float64
			for _, s := range records["occlusion"][i]["scores"].([]any) {
				v := s.(float64)
				alpha = append(alpha, v*v)
			}
			r["attention"] = alpha
			b, _ := json.Marshal(r)
			file.Write(append(b, '\n'))
			if m == "lrp" {
				a, _ := json.Marshal(map[string]any{"input": r["input"], "class": r["class"], "scores": alpha, "method": "alpha"})
				alphaFile.Write(append(a, '\n'))
			}
		}
	}
	status, out, errOut := runCLI(t, file.String(), "evaluate", "-net", "sp-counter", "-scores", "-", "-n", "30", "-len", "4..12", "-format", "json")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	r := evalReport(t, out)
	var names []string
	byName := map[string]evaluate.Source{}
	for _, s := range r.Sources {
		names = append(names, s.Name)
		byName[s.Name] = s
	}
	if want := []string{"lrp", "attention weights", "gxi"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("sources %q, want %q", names, want)
	}
	if s := byName["attention weights"]; s.Inputs != 30 || s.Skipped != 0 {
		t.Errorf("attention weights: %d inputs, %d skipped; want 30 (once an input) and 0", s.Inputs, s.Skipped)
	}
	status, out, errOut = runCLI(t, alphaFile.String(), "evaluate", "-net", "sp-counter", "-scores", "-", "-format", "json")
	if status != 0 {
		t.Fatalf("the weights as scores: status %d: %s", status, errOut)
	}
	want := evalReport(t, out).Sources[0]
	if got := byName["attention weights"]; !reflect.DeepEqual(got.Summaries, want.Summaries) {
		t.Errorf("attention weights judged %+v; as a scores file %+v", got.Summaries, want.Summaries)
	}

	// Bad weights: the wrong number, a null.
	bad := `{"input":"ab","scores":[1,2],"method":"m","attention":[0.5,0.5]}` + "\n" +
		`{"input":"ab","scores":[1,2],"method":"m","attention":[0.5]}` + "\n" +
		`{"input":"ab","scores":[1,2],"method":"m","attention":[0.5,null]}` + "\n" +
		`{"input":"ab","scores":[1,2],"method":"m","attention":[0.25,0.75]}` + "\n"
	status, out, errOut = runCLI(t, bad, "evaluate", "-net", "sp-counter", "-scores", "-", "-format", "json")
	for _, w := range []string{":2: 1 attention weights for an input of 2 symbols", ":3: attention weight 1 is null"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("no %q in %q", w, errOut)
		}
	}
	r = evalReport(t, out)
	got := fmt.Sprintf("%d %s %d %d %s %d", len(r.Sources), r.Sources[0].Name, r.Sources[0].Inputs, r.Sources[0].Skipped, r.Sources[1].Name, r.Sources[1].Inputs)
	if status != 1 || got != "2 m 2 2 attention weights 2" {
		t.Errorf("bad weights: status %d, sources (count, name, inputs, skipped, name, inputs) %s; want 1 and 2 m 2 2 attention weights 2", status, got)
	}
}

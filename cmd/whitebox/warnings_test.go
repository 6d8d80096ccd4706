package main

import (
	"strings"
	"testing"
)

// Issue 24, item 7: a white-box network's wrong prediction is in its
// record ("correct":false, with the true answer) and counted in one
// warning for the run; right ones say "correct":true.
func TestWrongPrediction(t *testing.T) {
	deep := "[" + strings.Repeat("(", 38) + strings.Repeat(")", 38) // depth 39 > BracketExactDepth
	status, out, errOut := runCLI(t, deep+"\n(()\n"+deep+"\n", "attribute", "-net", "bracket", "-method", "saliency")
	if status != 0 {
		t.Fatalf("status %d, %s", status, errOut)
	}
	recs := decode(t, out)
	if len(recs) != 3 || recs[0].Prediction != ")" || recs[0].Truth != "]" || *recs[0].Correct || !*recs[1].Correct || recs[1].Truth != "(" && recs[1].Truth != ")" {
		t.Fatalf("records %+v", recs)
	}
	if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "not the task's true answer on 2 of 3 inputs") || !strings.Contains(errOut, `line 1: "[((`) {
		t.Errorf("stderr %q", errOut)
	}
	// An imported model has no task: no such fields.
	_, out, _ = runCLI(t, "", "attribute", "-model", testModel, "-method", "saliency", "1 2 3")
	if strings.Contains(out, "truth") || strings.Contains(out, "correct") {
		t.Errorf("-model record: %s", out)
	}
}

// Issue 24, item 6: IG's completeness warning is printed for the first
// few inputs of a corpus, then counted in one line; every record keeps
// its delta.
func TestWarningSummary(t *testing.T) {
	in := strings.Repeat("dbbdcbcddadabdcabacdadabcbcddcaacccbadcdbc\n", 10)
	status, out, errOut := runCLI(t, in, "attribute", "-net", "sp-fsa", "-method", "ig", "-steps", "20")
	if status != 0 {
		t.Fatalf("status %d, %s", status, errOut)
	}
	if n := strings.Count(errOut, "warning: IG's completeness gap 0"); n != shownWarnings {
		t.Errorf("%d warnings shown one by one, want %d:\n%s", n, shownWarnings, errOut)
	}
	if !strings.Contains(errOut, "exceeds -tol on 10 of 10 inputs") || strings.Count(errOut, "\n") != shownWarnings+1 {
		t.Errorf("stderr:\n%s", errOut)
	}
	for _, r := range decode(t, out) {
		if r.Delta == nil || *r.Delta == 0 {
			t.Fatalf("record without its delta: %+v", r)
		}
	}
}

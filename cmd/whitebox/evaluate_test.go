package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/evaluate"
)

func evalReport(t *testing.T, out string) evaluate.Report {
	t.Helper()
	var r evaluate.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r
}

func criterion(t *testing.T, s evaluate.Source, name string) evaluate.Summary {
	t.Helper()
	for _, c := range s.Summaries {
		if c.Criterion == name {
			return c
		}
	}
	t.Fatalf("%s: no criterion %s", s.Name, name)
	return evaluate.Summary{}
}

// TestEvaluateOurs: the paper's findings on generated inputs.
func TestEvaluateOurs(t *testing.T) {
	status, out, errOut := runCLI(t, "", "evaluate", "-net", "sp-counter", "-n", "60", "-format", "json")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	r := evalReport(t, out)
	want := len(attrib.AllMethods()) // the paper's five, DeepLIFT and CD
	if len(r.Sources) != want {
		t.Fatalf("%d sources, want %d: %s", len(r.Sources), want, errOut)
	}
	byName := map[string]evaluate.Source{}
	for _, s := range r.Sources {
		byName[s.Name] = s
	}
	// IG on the counter network: nonzero exactly on the subsequences.
	if c := criterion(t, byName["ig"], "recall"); c.Applicable == 0 || c.Met != c.Applicable {
		t.Errorf("ig recall %+v, want met everywhere", c)
	}
	// LRP misses the first symbol of each subsequence.
	if c := criterion(t, byName["lrp"], "recall"); c.Met != 0 {
		t.Errorf("lrp recall %+v, want never met", c)
	}
	// DeepLIFT against the zero reference, like IG: exactly the subsequences.
	if c := criterion(t, byName["deeplift"], "recall"); c.Applicable == 0 || c.Met != c.Applicable {
		t.Errorf("deeplift recall %+v, want met everywhere", c)
	}
	if c := criterion(t, byName["ig"], "ablation-recomputed"); c.Defined == 0 {
		t.Errorf("no recomputed ablation: %+v", c)
	}
}

func TestEvaluateScoresFile(t *testing.T) {
	// Our IG through attribute, then through evaluate -scores: the same
	// numbers as evaluate running IG itself.
	status, gen, _ := runCLI(t, "", "generate", "-net", "bracket", "-n", "40", "-len", "2..10")
	if status != 0 {
		t.Fatal("generate failed")
	}
	status, lines, errOut := runCLI(t, gen, "attribute", "-net", "bracket", "-method", "lrp")
	if status != 0 {
		t.Fatalf("attribute: %s", errOut)
	}
	file := filepath.Join(t.TempDir(), "scores.jsonl")
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	status, out, errOut := runCLI(t, "", "evaluate", "-net", "bracket", "-scores", file, "-n", "40", "-len", "2..10", "-format", "json")
	if status != 0 {
		t.Fatalf("evaluate -scores: status %d, %s", status, errOut)
	}
	got := criterion(t, evalReport(t, out).Sources[0], "last-unclosed")
	_, out, _ = runCLI(t, "", "evaluate", "-net", "bracket", "-method", "lrp", "-n", "40", "-len", "2..10", "-format", "json")
	want := criterion(t, evalReport(t, out).Sources[0], "last-unclosed")
	if got != want {
		t.Errorf("from the scores file %+v, ours %+v", got, want)
	}
	// Bad lines: reported by number, the rest scored, status 1.
	bad := `{"input":"((","scores":[1,2]}` + "\n" +
		"not json\n" +
		`{"input":"(x","scores":[1,2]}` + "\n" +
		`{"input":"((","scores":[1]}` + "\n" +
		`{"input":"((","scores":[NaN,2]}` + "\n" +
		`{"input":"((","scores":[null,2]}` + "\n" +
		`{"input":"((","scores":[1,2]}` + "\n"
	status, out, errOut = runCLI(t, bad, "evaluate", "-net", "bracket", "-scores", "-", "-format", "json")
	if status != 1 {
		t.Errorf("bad lines: status %d, want 1", status)
	}
	for _, n := range []string{":2:", ":3:", ":4:", ":5:", ":6:"} {
		if !strings.Contains(errOut, n) {
			t.Errorf("no error for line %s in %q", n, errOut)
		}
	}
	r := evalReport(t, out)
	if s := r.Sources[0]; s.Skipped != 5 || s.Inputs != 2 {
		t.Errorf("skipped %d, scored %d; want 5 and 2", s.Skipped, s.Inputs)
	}
	// Lines that are not the generated inputs, and missing lines.
	status, _, errOut = runCLI(t, `{"input":"((","scores":[1,2]}`+"\n", "evaluate", "-net", "bracket", "-scores", "-", "-n", "3", "-seed", "1")
	if status != 1 || !strings.Contains(errOut, "not generated input 1") || !strings.Contains(errOut, "2 of the 3 generated inputs are missing") {
		t.Errorf("mismatch: status %d, %q", status, errOut)
	}
}

func TestEvaluateFormats(t *testing.T) {
	for _, f := range []string{"text", "markdown", "html", "json"} {
		status, out, errOut := runCLI(t, "", "evaluate", "-net", "counting", "-n", "20", "-class", "True", "-format", f)
		if status != 0 || out == "" {
			t.Fatalf("%s: status %d, %s", f, status, errOut)
		}
		if f == "html" && (!strings.Contains(out, "<!DOCTYPE html>") || !strings.Contains(out, "background-color") || strings.Contains(out, "<script")) {
			t.Errorf("html report without heatmaps or not self-contained")
		}
	}
}

func TestEvaluateUsage(t *testing.T) {
	for _, args := range [][]string{
		{"evaluate"},
		{"evaluate", "-net", "nope"},
		{"evaluate", "-net", "counting", "-format", "pdf"},
		{"evaluate", "-net", "counting", "-class", "Maybe"},
		{"evaluate", "-net", "counting", "-method", "shap"},
		{"evaluate", "-net", "counting", "-worst", "-1"},
		{"evaluate", "-net", "counting", "-scores", "-", "-class", "True"},
		{"evaluate", "-net", "counting", "-scores", "/nonexistent/file"},
		{"evaluate", "-net", "counting", "-len", "0"},
	} {
		if status, _, errOut := runCLI(t, "", args...); status != 2 || errOut == "" {
			t.Errorf("%v: status %d, stderr %q; want 2 and a message", args, status, errOut)
		}
	}
}

// TestEvaluateCores: the report does not depend on the number of cores.
func TestEvaluateCores(t *testing.T) {
	args := []string{"evaluate", "-net", "sp-fsa", "-n", "30", "-len", "5..15", "-format", "json"}
	prev := runtime.GOMAXPROCS(1)
	_, one, _ := runCLI(t, "", args...)
	runtime.GOMAXPROCS(4)
	_, four, _ := runCLI(t, "", args...)
	runtime.GOMAXPROCS(prev)
	if one != four || one == "" {
		t.Errorf("1 core:\n%s\n4 cores:\n%s", one, four)
	}
}

// TestEvaluateMethods: one file with the lines of several methods gives a
// source per method, each with our numbers for it.
func TestEvaluateMethods(t *testing.T) {
	_, gen, _ := runCLI(t, "", "generate", "-net", "sp-counter", "-n", "25", "-len", "3..12")
	var all strings.Builder
	for _, m := range []string{"ig", "occlusion"} {
		status, lines, errOut := runCLI(t, gen, "attribute", "-net", "sp-counter", "-method", m)
		if status != 0 {
			t.Fatalf("attribute: %s", errOut)
		}
		all.WriteString(lines)
	}
	status, out, errOut := runCLI(t, all.String(), "evaluate", "-net", "sp-counter", "-scores", "-", "-n", "25", "-len", "3..12", "-format", "json")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	r := evalReport(t, out)
	if len(r.Sources) != 2 || r.Sources[0].Name != "ig" || r.Sources[1].Name != "occlusion" {
		t.Fatalf("sources %+v", r.Sources)
	}
	for _, s := range r.Sources {
		_, mine, _ := runCLI(t, "", "evaluate", "-net", "sp-counter", "-method", s.Name, "-n", "25", "-len", "3..12", "-format", "json")
		for _, c := range []string{"precision", "recall", "pointing", "ablation"} {
			if got, want := criterion(t, s, c), criterion(t, evalReport(t, mine).Sources[0], c); got != want {
				t.Errorf("%s %s: from the file %+v, ours %+v", s.Name, c, got, want)
			}
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func runCLI(t *testing.T, stdin string, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status = run(args, strings.NewReader(stdin), &out, &errOut)
	return status, out.String(), errOut.String()
}

type jsonLine struct {
	Net        string             `json:"net"`
	Model      string             `json:"model"`
	Head       string             `json:"head"`
	Baseline   string             `json:"baseline"`
	Features   [][]float64        `json:"features"`
	Method     string             `json:"method"`
	Input      string             `json:"input"`
	Tokens     []string           `json:"tokens"`
	Class      string             `json:"class"`
	Prediction string             `json:"prediction"`
	Truth      string             `json:"truth"`
	Correct    *bool              `json:"correct"`
	Logits     map[string]float64 `json:"logits"`
	Scores     []float64          `json:"scores"`
	Delta      *float64           `json:"delta"`
	IGSteps    int                `json:"steps"`
}

func decode(t *testing.T, out string) []jsonLine {
	t.Helper()
	var recs []jsonLine
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r jsonLine
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("bad JSON line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

func TestAttributeJSON(t *testing.T) {
	status, out, errOut := runCLI(t, "", "attribute", "-net", "sp-counter", "-method", "ig", "accb")
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	// The documented field order (net, method, input, tokens, class,
	// prediction, truth, correct, logits, scores, delta), logits in class
	// order.
	if !strings.HasPrefix(out, `{"net":"sp-counter","method":"ig","input":"accb","tokens":["a","c","c","b"],"class":"True","prediction":"True","truth":"True","correct":true,"logits":{"False":`) {
		t.Errorf("unexpected layout: %s", out)
	}
	r := decode(t, out)[0]
	if math.Abs(r.Logits["True"]-0.5325204920919716) > 1e-12 || len(r.Scores) != 4 || r.Delta == nil || math.Abs(*r.Delta) > 1e-6 {
		t.Errorf("record %+v", r)
	}
	if r.Scores[0] < 0.48 || r.Scores[3] < 0.04 || math.Abs(r.Scores[1]) > 1e-9 {
		t.Errorf("scores %v: want a and b positive, c ≈ 0", r.Scores)
	}
	// Only IG has a delta; -class picks the relevance class.
	_, out, _ = runCLI(t, "", "attribute", "-net", "counting", "-method", "lrp", "-class", "False", "aab")
	if r := decode(t, out)[0]; r.Delta != nil || r.Class != "False" || r.Prediction != "True" {
		t.Errorf("record %+v", r)
	}
}

func TestAttributeBadLines(t *testing.T) {
	stdin := "acb\r\n\naxb\n\nab\n"
	status, out, errOut := runCLI(t, stdin, "attribute", "-net", "sp-fsa", "-method", "occlusion")
	if status != 1 {
		t.Errorf("status %d, want 1", status)
	}
	recs := decode(t, out)
	if len(recs) != 2 || recs[0].Input != "acb" || recs[1].Input != "ab" {
		t.Errorf("records %+v: want acb and ab", recs)
	}
	if !strings.Contains(errOut, `line 3: "axb": sp: unknown symbol 'x' at position 1`) {
		t.Errorf("stderr %q", errOut)
	}
	status, out, errOut = runCLI(t, "", "attribute", "-net", "bracket", "-k", "2", "-method", "lrp", "(()", "(((", "())")
	if status != 1 || len(decode(t, out)) != 1 || !strings.Contains(errOut, "stack overflow") || !strings.Contains(errOut, "not a valid prefix") {
		t.Errorf("status %d\nstdout %s\nstderr %s", status, out, errOut)
	}
	status, _, errOut = runCLI(t, "", "attribute", "-net", "counting", "-method", "gxi", "")
	if status != 1 || !strings.Contains(errOut, "empty input") {
		t.Errorf("status %d, stderr %q", status, errOut)
	}
}

func TestAttributeUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"attribute", "-method", "ig"}, "-method and one of -net and -model are required"},
		{[]string{"attribute", "-net", "lstm", "-method", "ig"}, `unknown network "lstm"`},
		{[]string{"attribute", "-net", "counting", "-method", "shap"}, `unknown method "shap"`},
		{[]string{"attribute", "-net", "counting", "-method", "ig", "-class", "Maybe"}, `unknown class "Maybe"`},
		{[]string{"attribute", "-net", "counting", "-method", "ig", "-format", "pdf"}, `unknown -format "pdf"`},
		{[]string{"attribute", "-net", "counting", "-method", "ig", "-quadrature", "simpson"}, "simpson"},
		{[]string{"attribute", "-net", "counting", "-method", "ig", "-steps", "0"}, "-steps 0"},
		{[]string{"attribute", "-net", "counting", "-method", "lrp", "-eps", "-1"}, "-eps -1"},
		{[]string{"attribute", "-net", "bracket", "-method", "lrp", "-u", "2"}, "no parameter u"},
		{[]string{"attribute", "-net", "counting", "-method", "lrp", "-m", "0"}, "m = 0"},
		{[]string{"attribute", "-bogus"}, "flag provided but not defined"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		status, _, errOut := runCLI(t, "", tc.args...)
		if status != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: status %d, stderr %q; want 2 and %q", tc.args, status, errOut, tc.want)
		}
	}
	if status, out, _ := runCLI(t, "", "help", "attribute"); status != 0 || !strings.Contains(out, "-quadrature") {
		t.Errorf("help attribute: %d %q", status, out)
	}
	if status, out, _ := runCLI(t, "", "version"); status != 0 || !strings.Contains(out, "whitebox") {
		t.Errorf("version: %d %q", status, out)
	}
}

func TestAttributeFormats(t *testing.T) {
	_, out, _ := runCLI(t, "", "attribute", "-net", "counting", "-method", "occlusion", "-format", "text", "aab")
	if !strings.HasPrefix(out, "aab\tocclusion (class True, predicted True)\ta:+") || strings.Contains(out, "\x1b[") {
		t.Errorf("text (not a terminal): %q", out)
	}
	_, out, _ = runCLI(t, "", "attribute", "-net", "counting", "-method", "occlusion", "-format", "latex", "ab")
	if !strings.Contains(out, `\textcolor[rgb]{`) || !strings.Contains(out, `{\textbf{b}}`) {
		t.Errorf("latex: %q", out)
	}
	_, out, _ = runCLI(t, "", "attribute", "-net", "counting", "-method", "lrp", "-format", "html", "ab", "aab")
	if !strings.Contains(out, "<html") || strings.Count(out, "background-color:#") < 5 || strings.Contains(out, "http") {
		t.Errorf("html: %q", out)
	}
}

// -method deeplift on a white-box network: the scores sum to
// ŷ_True(accb) − ŷ_True(0) (the record's delta is the residual), a and b
// positive, the cs zero; -method cd runs.
func TestAttributeDeepLIFTAndCD(t *testing.T) {
	status, out, errOut := runCLI(t, "", "attribute", "-net", "sp-counter", "-method", "deeplift", "accb")
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	r := decode(t, out)[0]
	if r.Delta == nil || math.Abs(*r.Delta) > 1e-9 || r.Class != "True" {
		t.Fatalf("record %+v", r)
	}
	if r.Scores[0] <= 0 || r.Scores[3] <= 0 || math.Abs(r.Scores[1]) > 1e-9 {
		t.Errorf("scores %v: want a and b positive, c ≈ 0", r.Scores)
	}
	status, out, errOut = runCLI(t, "", "attribute", "-net", "sp-counter", "-method", "cd", "accb")
	if status != 0 || len(decode(t, out)[0].Scores) != 4 {
		t.Errorf("cd: status %d, stderr %q, %s", status, errOut, out)
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportAttribute: an exported network read back by attribute -model
// gives the white-box network's logits and scores.
func TestExportAttribute(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sp.safetensors")
	if status, _, errOut := runCLI(t, "", "export", "-net", "sp-counter", "-o", file); status != 0 {
		t.Fatalf("export: %s", errOut)
	}
	_, white, _ := runCLI(t, "", "attribute", "-net", "sp-counter", "-method", "gxi", "accb")
	// Token ids: a=0, b=1, c=2, d=3.
	status, imported, errOut := runCLI(t, "", "attribute", "-model", file, "-method", "gxi", "0 2 2 1")
	if status != 0 {
		t.Fatalf("attribute -model: %s", errOut)
	}
	var w, m struct {
		Logits map[string]float64 `json:"logits"`
		Scores []float64          `json:"scores"`
	}
	if json.Unmarshal([]byte(white), &w) != nil || json.Unmarshal([]byte(imported), &m) != nil {
		t.Fatalf("bad output %q %q", white, imported)
	}
	if w.Logits["False"] != m.Logits["0"] || w.Logits["True"] != m.Logits["1"] {
		t.Errorf("logits %v white-box, %v exported", w.Logits, m.Logits)
	}
	for i := range w.Scores {
		if w.Scores[i] != m.Scores[i] {
			t.Errorf("score %d: %v white-box, %v exported", i, w.Scores[i], m.Scores[i])
		}
	}
}

func TestExportUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"export", "-net", "counting"},
		{"export", "-net", "counting", "-o", filepath.Join(dir, "x.txt")},
		{"export", "-net", "nope", "-o", filepath.Join(dir, "x.safetensors")},
		{"export", "-net", "counting", "-k", "2", "-o", filepath.Join(dir, "x.safetensors")},
		{"export", "-o", filepath.Join(dir, "x.safetensors")},
		{"export", "-dfa", filepath.Join(dir, "none.json"), "-o", filepath.Join(dir, "x.safetensors")},
		{"export", "-dfa", "testdata-parity.json", "-net", "counting", "-o", filepath.Join(dir, "x.safetensors")},
		{"export", "-dfa", "testdata-parity.json", "-k", "3", "-o", filepath.Join(dir, "x.safetensors")},
	} {
		if status, _, errOut := runCLI(t, "", args...); status != 2 || errOut == "" {
			t.Errorf("%v: status %d, stderr %q; want 2 and a message", args, status, errOut)
		}
	}
	status, _, errOut := runCLI(t, "", "export", "-net", "counting", "-o", filepath.Join(dir, "no", "such", "dir.safetensors"))
	if status != 1 || !strings.Contains(errOut, "-o") {
		t.Errorf("unwritable: status %d, %q", status, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left behind: %v", entries)
	}
}

func TestExportDFA(t *testing.T) {
	dir := t.TempDir()
	dfa := filepath.Join(dir, "parity.json")
	if err := os.WriteFile(dfa, []byte(`{"alphabet": ["a", "b"], "delta": [[0, 1], [1, 0]], "classes": ["even", "odd"], "class_of": [0, 1]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "parity.pt")
	if status, _, errOut := runCLI(t, "", "export", "-dfa", dfa, "-o", out); status != 0 {
		t.Fatalf("export -dfa: %s", errOut)
	}
	// b b a b: three b's, odd.
	status, got, errOut := runCLI(t, "", "attribute", "-model", out, "-method", "lrp", "1 1 0 1")
	if status != 0 || !strings.Contains(got, `"prediction":"1"`) {
		t.Errorf("attribute on the exported automaton: status %d, %s %s", status, got, errOut)
	}
}

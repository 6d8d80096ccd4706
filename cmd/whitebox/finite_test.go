package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/export"
)

// overflowFile writes a model of finite weights whose logits overflow:
// Embedding(5, 2) → LSTM(2), its gates saturated (outputs about 0.8) →
// Linear(2, 2) of weights 1.7e308 (class 0) and −1.7e308 (class 1).
func overflowFile(t *testing.T) string {
	t.Helper()
	fill := func(n int, v float64) []float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = v
		}
		return d
	}
	ts := []export.Tensor{
		{Name: "embedding.weight", Shape: []int{5, 2}, Data: fill(10, 0.5)},
		{Name: "lstm.weight_ih_l0", Shape: []int{8, 2}, Data: fill(16, 0.5)},
		{Name: "lstm.weight_hh_l0", Shape: []int{8, 2}, Data: fill(16, 0.1)},
		{Name: "lstm.bias_ih_l0", Shape: []int{8}, Data: fill(8, 1)},
		{Name: "lstm.bias_hh_l0", Shape: []int{8}, Data: fill(8, 1)},
		{Name: "fc.weight", Shape: []int{2, 2}, Data: []float64{1.7e308, 1.7e308, -1.7e308, -1.7e308}},
		{Name: "fc.bias", Shape: []int{2}, Data: fill(2, 0)},
	}
	var b bytes.Buffer
	if err := export.WriteSafetensors(&b, ts, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "overflow.safetensors")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A logit that overflows fails its input (exit status 1) with the cause,
// for every method, one class or all, in every format: no record of
// nulls is written (issue 39, case 2).
func TestAttributeNonFinite(t *testing.T) {
	path := overflowFile(t)
	classes := filepath.Join(t.TempDir(), "classes.txt")
	if err := os.WriteFile(classes, []byte("neg\npos\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range attrib.AllMethods() {
		for _, extra := range [][]string{nil, {"-class", "all"}, {"-classes", classes}, {"-class", "1", "-format", "text"}} {
			args := append([]string{"attribute", "-model", path, "-method", m.String()}, extra...)
			status, out, errOut := runCLI(t, "1 2 3\n4 0\n", args...)
			class := `"0"`
			if len(extra) > 0 && extra[0] == "-classes" {
				class = `"neg"`
			}
			want := "attrib: the logit of class " + class + " is +Inf: the classifier overflows float64 (its input, the LSTM's output after the head, is finite)"
			if status != 1 || out != "" || strings.Count(errOut, want) != 2 {
				t.Errorf("%v: status %d, stdout %q, stderr %q; want 1, nothing and %q twice", args[1:], status, out, errOut, want)
			}
		}
	}
}

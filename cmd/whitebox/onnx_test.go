package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/model"
)

const onnxModel = "../../model/testdata/onnx/mean_bi2_o17.onnx" // Embedding(20, 5) → 2-layer BiLSTM(6) → mean → Linear(12, 3)

// `attribute` and `inspect` read an ONNX export with no head flag: the
// scores are the library's, and inspect says what the graph holds.
func TestONNXCommands(t *testing.T) {
	m, err := model.Load(onnxModel, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := m.Embed([]int{3, 1, 4, 1, 5})
	if err != nil {
		t.Fatal(err)
	}
	want, err := attrib.Attribute(m.Net, attrib.IntegratedGradients, x, attrib.Options{Class: attrib.Predicted, Float32Weights: true})
	if err != nil {
		t.Fatal(err)
	}
	status, out, errOut := runCLI(t, "", "attribute", "-model", onnxModel, "-method", "ig", "3 1 4 1 5")
	if status != 0 {
		t.Fatalf("attribute: status %d: %s", status, errOut)
	}
	rec := decode(t, out)[0]
	for i, s := range want.Scores {
		if rec.Scores[i] != s {
			t.Fatalf("score %d = %v, library %v", i, rec.Scores[i], s)
		}
	}
	status, out, errOut = runCLI(t, "", "inspect", "-model", onnxModel)
	if status != 0 {
		t.Fatalf("inspect: status %d: %s", status, errOut)
	}
	for _, s := range []string{"(onnx, F32)", "output.mean(dim=1) (head mean, graph)", "/lstm/LSTM, /lstm/LSTM_1", "graph:      opset 17"} {
		if !strings.Contains(out, s) {
			t.Errorf("inspect lacks %q:\n%s", s, out)
		}
	}
}

// A GRU export and a truncated file are refused by attribute with exit
// status 2 and the reason.
func TestONNXRefusedCLI(t *testing.T) {
	b, err := os.ReadFile(onnxModel)
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(t.TempDir(), "trunc.onnx")
	if err := os.WriteFile(trunc, b[:len(b)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"../../model/testdata/onnx/gru.onnx": `GRU node "/gru/GRU": a GRU, not an LSTM: not supported`,
		trunc:                                "the file is truncated",
	} {
		status, _, errOut := runCLI(t, "", "attribute", "-model", path, "-method", "ig", "3 1 4")
		if status != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%s: status %d, stderr %q; want 2 and %q", path, status, errOut, want)
		}
	}
}

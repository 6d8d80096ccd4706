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
	want, err := attrib.Attribute(t.Context(), m.Net, attrib.IntegratedGradients, x, attrib.Options{Class: attrib.Predicted, Float32Weights: true})
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

// A truncated file is refused by attribute with exit status 2 and the
// reason (GRU exports are read: TestONNXGRUCLI).
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
		trunc: "the file is truncated",
	} {
		status, _, errOut := runCLI(t, "", "attribute", "-model", path, "-method", "ig", "3 1 4")
		if status != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%s: status %d, stderr %q; want 2 and %q", path, status, errOut, want)
		}
	}
}

// A graph that depends on the length (testdata/onnx/length, gen_length.py)
// is refused at load (exit 2) where it cuts the time axis; else it is
// attributed where it is the model read from it and refused, exit 1,
// naming the cause, where it is not: every method, every class, every
// line. A graph of fixed length is refused at another length.
func TestONNXLengthDependentCLI(t *testing.T) {
	dir := "../../model/testdata/onnx/length/"
	short, long := "3 1 4 1 5", "3 1 4 1 5 9 2 6 5 3 5 8"
	for _, name := range []string{"trunc8", "window_mean8", "tail_max8"} {
		status, out, errOut := runCLI(t, short+"\n", "attribute", "-model", dir+name+".onnx", "-method", "ig")
		if status != 2 || out != "" || !strings.Contains(errOut, `Slice node "/Slice" keeps time steps`) {
			t.Errorf("%s: status %d, stdout %q, stderr %q; want 2 and the Slice named", name, status, out, errOut)
		}
	}
	for _, name := range []string{"h0_from8"} {
		for _, args := range [][]string{{"-method", "saliency"}, {"-method", "ig"}, {"-method", "occlusion"}, {"-method", "lrp"}, {"-method", "deeplift"}, {"-method", "gxi", "-class", "all"}} {
			cmd := append([]string{"attribute", "-model", dir + name + ".onnx"}, args...)
			status, out, errOut := runCLI(t, short+"\n"+long+"\n", cmd...)
			if status != 1 || !strings.Contains(errOut, "differ on this input of 12 tokens") || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"input":"`+short+`"`) {
				t.Errorf("%s %v: status %d, stdout %q, stderr %q; want 1, the short line's record and the long line refused", name, args, status, out, errOut)
			}
		}
	}
	status, _, errOut := runCLI(t, "", "attribute", "-model", dir+"fixed5_pick4.onnx", "-method", "ig", long)
	if status != 1 || !strings.Contains(errOut, "fixed sequence length of 5; this input has 12 tokens") {
		t.Errorf("fixed length: status %d, stderr %q", status, errOut)
	}
	if status, _, errOut := runCLI(t, "", "attribute", "-model", dir+"fixed5_pick4.onnx", "-method", "ig", short); status != 0 {
		t.Errorf("fixed length, at that length: status %d, stderr %q", status, errOut)
	}
}

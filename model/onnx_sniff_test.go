package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A safetensors file or a PyTorch zip named .onnx is refused saying what
// it is and how to name it, not with a protobuf error; under its own
// extension it loads.
func TestONNXNameOfAnotherFormat(t *testing.T) {
	dir := t.TempDir()
	for src, want := range map[string]string{
		"uni1.safetensors": "model: uni1.safetensors.onnx: this is a safetensors file, not an ONNX model: rename it to .safetensors",
		"uni1.pt":          "model: uni1.pt.onnx: this is a PyTorch zip (torch.save), not an ONNX model: rename it to .pt",
	} {
		b, err := os.ReadFile(filepath.Join("testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, src+".onnx")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path, Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s named .onnx: %v; want an error containing %q", src, err, want)
		}
		if _, err := Load(filepath.Join("testdata", src), Options{}); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

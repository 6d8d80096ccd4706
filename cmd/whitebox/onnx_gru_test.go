package main

import (
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/model"
)

// `attribute -model x.onnx` reads an export with ONNX GRU nodes (a
// two-layer bidirectional nn.GRU, model/testdata/gru/gen_gru.py) with no
// head flag: the scores are the library's, DeepLIFT included, and inspect
// names the GRU.
func TestONNXGRUCLI(t *testing.T) {
	const path = "../../model/testdata/gru/onnx/gru_max_bi2.onnx"
	m, err := model.Load(path, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := m.Embed([]int{3, 1, 4, 1, 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flag   string
		method attrib.Method
	}{{"ig", attrib.IntegratedGradients}, {"deeplift", attrib.DeepLIFT}} {
		want, err := attrib.Attribute(t.Context(), m.Net, c.method, x, attrib.Options{Class: attrib.Predicted, Float32Weights: true})
		if err != nil {
			t.Fatal(err)
		}
		status, out, errOut := runCLI(t, "", "attribute", "-model", path, "-method", c.flag, "3 1 4 1 5")
		if status != 0 {
			t.Fatalf("attribute -method %s: status %d: %s", c.flag, status, errOut)
		}
		rec := decode(t, out)[0]
		for i, s := range want.Scores {
			if rec.Scores[i] != s {
				t.Fatalf("%s: score %d = %v, library %v", c.flag, i, rec.Scores[i], s)
			}
		}
	}
	status, out, errOut := runCLI(t, "", "inspect", "-model", path)
	if status != 0 {
		t.Fatalf("inspect: status %d: %s", status, errOut)
	}
	if !strings.Contains(out, "GRU, 2 layer(s)") || !strings.Contains(out, "(head max, graph)") {
		t.Errorf("inspect does not name the GRU and its head:\n%s", out)
	}
}

package model

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
)

// testdata/gru/onnx holds torch.onnx.export files (ONNX GRU nodes) of
// testdata/gru's models, made by gen_gru.py; each <name>.json names the
// model's fixture ("source") whose references apply.
type gruONNXFixture struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	Source string `json:"source"`
	Head   string `json:"head"`
	Layers int    `json:"layers"`
	Bi     bool   `json:"bidirectional"`
	Bias   bool   `json:"bias"`
}

// Every GRU export loads with no options (head and classifier from the
// graph) as a GRU model whose logits, saliency, G×I, IG,
// occlusion and DeepLIFT equal float64 PyTorch's to 1e-8.
func TestGRUONNXFixtures(t *testing.T) {
	sources := map[string]gruFixture{}
	for _, f := range loadJSONFixtures[gruFixture](t, "gru") {
		sources[f.Name+".json"] = f
	}
	worst := map[string]float64{}
	for _, f := range loadJSONFixtures[gruONNXFixture](t, filepath.Join("gru", "onnx")) {
		t.Run(f.Name, func(t *testing.T) {
			src, ok := sources[f.Source]
			if !ok {
				t.Fatalf("no fixture %s", f.Source)
			}
			m, err := Load(filepath.Join("testdata", "gru", "onnx", f.File), Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := m.Net
			head := f.Head
			if !f.Bi && head == "hn-bf" {
				head = "hn"
			}
			if n.Kind() != cell.LayerGRU || n.Layers() != f.Layers || (n.Directions() == 2) != f.Bi || n.HasLSTMBias() != f.Bias || m.Head.String() != head || m.HeadSource != HeadFromGraph || m.Format != "onnx" {
				t.Fatalf("read as %v, %d layers, %d directions, bias %v, head %v (%s), format %s", n.Kind(), n.Layers(), n.Directions(), n.HasLSTMBias(), m.Head, m.HeadSource, m.Format)
			}
			e := mustExplainer(t, n)
			for ci, c := range src.Cases {
				x, err := m.Embed(c.IDs)
				if err != nil {
					t.Fatal(err)
				}
				c.check(t, e, x, fmt.Sprintf("%s case %d", f.Name, ci), src.IGSteps, worst)
			}
			var res attrib.Result
			for ci, c := range src.DeepLIFT {
				x, err := m.Embed(c.IDs)
				if err != nil {
					t.Fatal(err)
				}
				opt := attrib.Options{Class: attrib.ClassIndex(c.Class)}
				if c.BaselineID != nil {
					row, err := m.Embed([]int{*c.BaselineID})
					if err != nil {
						t.Fatal(err)
					}
					opt.Baseline = row.DenseValues()
				}
				if err := e.Attribute(t.Context(), attrib.DeepLIFT, x, opt, &res); err != nil {
					t.Fatal(err)
				}
				worst["deeplift"] = max(worst["deeplift"], agreeTo(t, fmt.Sprintf("%s DeepLIFT %d", f.Name, ci), res.Features, flat(c.Features), 1e-8))
				delta := res.Logits[c.Class] - c.RefLogits[c.Class]
				if math.Abs(res.Delta) > 1e-9*max(math.Abs(delta), 1e-3) {
					t.Errorf("%s DeepLIFT %d: summation-to-delta residual %v of %v", f.Name, ci, res.Delta, delta)
				}
			}
		})
	}
	t.Logf("largest relative differences from float64 PyTorch: %v", worst)
}

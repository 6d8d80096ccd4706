package model

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
)

// testdata/deeplift holds DeepLIFT's references, made by
// testdata/gen_deeplift.py (a float64 PyTorch LSTM unrolled by hand with
// torch.autograd.Functions for Rescale, the product split and max
// pooling's split; see its doc string) for models of testdata: every head
// and classifier, one to three layers, one and two directions, with and
// without biases.
type deepLIFTFixture struct {
	Name  string  `json:"name"`
	Model string  `json:"model"`
	Head  string  `json:"head"`
	Act   *string `json:"act"`
	Cases []struct {
		IDs        []int       `json:"ids"`
		BaselineID *int        `json:"baseline_id"`
		Class      int         `json:"class"`
		Logits     []float64   `json:"logits"`
		RefLogits  []float64   `json:"reference_logits"`
		Features   [][]float64 `json:"features"`
		Scores     []float64   `json:"scores"`
	} `json:"cases"`
}

// DeepLIFT's feature and token scores and the logits equal the
// independent reference to 1e-8 relative, against the zero reference and
// a token's embedding row; the scores sum to delta.
func TestDeepLIFTFixtures(t *testing.T) {
	worst, worstDelta := 0.0, 0.0
	heads := map[string]bool{}
	for _, f := range loadJSONFixtures[deepLIFTFixture](t, "deeplift") {
		spec := f.Head
		if f.Act != nil {
			spec += "+" + *f.Act
		}
		h, a, err := ParseHeadSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		heads[f.Head] = true
		m, err := Load(filepath.Join("testdata", f.Model), Options{Head: new(h), Act: a})
		if err != nil {
			t.Fatal(err)
		}
		e := mustExplainer(t, m)
		var res attrib.Result
		for ci, c := range f.Cases {
			what := fmt.Sprintf("%s case %d (baseline %v)", f.Name, ci, c.BaselineID)
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
				t.Fatalf("%s: %v", what, err)
			}
			agreeTo(t, what+" logits", res.Logits, c.Logits, 1e-8)
			worst = max(worst, agreeTo(t, what+" features", res.Features, flat(c.Features), 1e-8))
			worst = max(worst, agreeTo(t, what+" scores", res.Scores, c.Scores, 1e-8))
			delta := c.Logits[c.Class] - c.RefLogits[c.Class]
			rel := math.Abs(res.Delta) / max(math.Abs(delta), 1e-3)
			worstDelta = max(worstDelta, rel)
			if rel > 1e-9 {
				t.Errorf("%s: summation-to-delta residual %v of %v", what, res.Delta, delta)
			}
		}
	}
	for _, h := range cell.Heads() {
		if !heads[h.String()] {
			t.Errorf("no DeepLIFT fixture with head %v", h)
		}
	}
	t.Logf("largest relative difference from the reference: %.3g; largest summation-to-delta residual: %.3g", worst, worstDelta)
}

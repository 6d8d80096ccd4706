package model

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
)

// testdata/gru holds float32 PyTorch nn.GRU classifiers (.pt and
// .safetensors; every head, both classifier forms, one and two layers and
// directions, with and without biases), made by testdata/gru/gen_gru.py
// with float64 references (see its doc string).

type gruFixture struct {
	headFixture
	Bias     bool             `json:"bias"`
	DeepLIFT []gruDeepLIFTRef `json:"deeplift"`
}

// gruDeepLIFTRef is one DeepLIFT reference of gen_gru.py: the feature
// scores of class Class for IDs against the zero reference (BaselineID
// nil) or the embedding row of token *BaselineID at every position.
type gruDeepLIFTRef struct {
	IDs        []int       `json:"ids"`
	BaselineID *int        `json:"baseline_id"`
	Class      int         `json:"class"`
	RefLogits  []float64   `json:"reference_logits"`
	Features   [][]float64 `json:"features"`
}

// Every GRU fixture, from each of its files: a model with GRU
// layers whose logits, saliency, G×I, IG (Gauss–Legendre, 50 nodes) and
// occlusion equal float64 PyTorch to 1e-8; LRP with bias factor 1
// conserves relevance; DeepLIFT equals gen_gru.py's independent
// reference (TestGRUDeepLIFTFixtures).
func TestGRUFixtures(t *testing.T) {
	fixtures := loadJSONFixtures[gruFixture](t, "gru")
	worst := map[string]float64{}
	heads := map[string]bool{}
	for _, f := range fixtures {
		heads[f.Head] = true
		for _, file := range f.Files {
			t.Run(file, func(t *testing.T) {
				o := f.options(t)
				if f.InMeta && strings.HasSuffix(file, ".safetensors") {
					o = Options{} // the head is the file's metadata
				}
				m, err := Load(filepath.Join("testdata", "gru", file), o)
				if err != nil {
					t.Fatal(err)
				}
				n := m.Net
				want := f.options(t)
				if n.Kind() != cell.LayerGRU || n.Layers() != f.Layers || (n.Directions() == 2) != f.Bi || n.HasLSTMBias() != f.Bias || n.Head() != *want.Head || n.Activation() != want.Act {
					t.Fatalf("model: %v, %d layers, %d directions, bias %v, head %v+%v", n.Kind(), n.Layers(), n.Directions(), n.HasLSTMBias(), n.Head(), n.Activation())
				}
				if m.Names.LSTM != "gru" || m.Names.Decoder != f.Prefixes["decoder"] || m.OutputLayer != f.Prefixes["output_layer"] {
					t.Fatalf("names %+v → %q", m.Names, m.OutputLayer)
				}
				if s := m.Summary(); !strings.Contains(s, "gru:        gru: GRU, ") {
					t.Fatalf("summary does not show the GRU:\n%s", s)
				}
				e := mustExplainer(t, n)
				for ci, c := range f.Cases {
					x, err := m.Embed(c.IDs)
					if err != nil {
						t.Fatal(err)
					}
					c.check(t, e, x, fmt.Sprintf("%s case %d", f.Name, ci), f.IGSteps, worst)
					var res attrib.Result
					if err := e.Attribute(t.Context(), attrib.LRP, x, attrib.Options{Class: attrib.ClassIndex(c.Class), LRPBias: 1}, &res); err != nil {
						t.Fatal(err)
					}
					r := res.Relevance
					if total := sum(res.Scores) + r.Initial; math.Abs(total-r.Output) > 1e-10*max(1, math.Abs(r.Output)) || math.Abs(r.Bias) > 1e-10*max(1, math.Abs(r.Output)) {
						t.Fatalf("case %d: LRP with bias factor 1: tokens %v + initial %v = %v, output %v", ci, sum(res.Scores), r.Initial, total, r.Output)
					}
				}
			})
		}
	}
	t.Logf("largest relative differences from float64 PyTorch: %v", worst)
	for _, h := range []cell.Head{cell.HeadHN, cell.HeadHNBF, cell.HeadLast, cell.HeadMean, cell.HeadMax} {
		if !heads[h.String()] {
			t.Errorf("no GRU fixture with head %v", h)
		}
	}
}

// DeepLIFT on every GRU fixture, from each of its files: the feature and
// token scores, the logits of the input and of the reference equal
// gen_gru.py's float64 PyTorch reference (the GRU unrolled by hand with
// torch.autograd.Functions for Rescale, the product split and max
// pooling's split) to 1e-8 relative, against the zero reference and a
// token's embedding row, one class and all classes at once; the scores
// sum to delta.
func TestGRUDeepLIFTFixtures(t *testing.T) {
	worst, worstDelta := 0.0, 0.0
	n := 0
	for _, f := range loadJSONFixtures[gruFixture](t, "gru") {
		if len(f.DeepLIFT) == 0 {
			t.Fatalf("%s: no DeepLIFT references", f.Name)
		}
		for _, file := range f.Files {
			o := f.options(t)
			if f.InMeta && strings.HasSuffix(file, ".safetensors") {
				o = Options{}
			}
			m, err := Load(filepath.Join("testdata", "gru", file), o)
			if err != nil {
				t.Fatal(err)
			}
			e := mustExplainer(t, m.Net)
			var res attrib.Result
			for ci, c := range f.DeepLIFT {
				what := fmt.Sprintf("%s DeepLIFT %d (baseline %v)", file, ci, c.BaselineID)
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
				want := flat(c.Features)
				worst = max(worst, agreeTo(t, what+" features", res.Features, want, 1e-8))
				tokens := make([]float64, len(c.Features))
				for i, r := range c.Features {
					tokens[i] = sum(r)
				}
				worst = max(worst, agreeTo(t, what+" scores", res.Scores, tokens, 1e-8))
				// the reference's logits: a plain pass over x₀
				steps, width := len(c.Features), len(c.Features[0])
				x0 := make([]float64, 0, steps*width)
				for range steps {
					if opt.Baseline != nil {
						x0 = append(x0, opt.Baseline...)
					} else {
						x0 = append(x0, make([]float64, width)...)
					}
				}
				var ref attrib.Result
				if err := e.Attribute(t.Context(), attrib.Saliency, cell.Dense(x0, steps), attrib.Options{Class: attrib.ClassIndex(c.Class)}, &ref); err != nil {
					t.Fatal(err)
				}
				agreeTo(t, what+" reference logits", ref.Logits, c.RefLogits, 1e-8)
				if ci%3 == 0 { // every class at once: class c's bits
					aopt := opt
					aopt.Class = attrib.Predicted
					var all attrib.MultiResult
					if err := e.AttributeAll(t.Context(), attrib.DeepLIFT, x, aopt, &all); err != nil {
						t.Fatalf("%s: AttributeAll: %v", what, err)
					}
					got := all.Results[c.Class].Features
					for i := range got {
						if math.Float64bits(got[i]) != math.Float64bits(res.Features[i]) {
							t.Fatalf("%s: AttributeAll's feature %d %v, Attribute's %v", what, i, got[i], res.Features[i])
						}
					}
				}
				delta := res.Logits[c.Class] - c.RefLogits[c.Class]
				rel := math.Abs(res.Delta) / max(math.Abs(delta), 1e-3)
				worstDelta = max(worstDelta, rel)
				if rel > 1e-9 {
					t.Errorf("%s: summation-to-delta residual %v of %v", what, res.Delta, delta)
				}
				n++
			}
		}
	}
	t.Logf("%d references; largest relative difference: %.3g; largest summation-to-delta residual: %.3g", n, worst, worstDelta)
}

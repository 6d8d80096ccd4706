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

// testdata/attention holds float32 PyTorch LSTM classifiers with an
// attention head (one- and two-layer scores, with and without biases,
// under the names attention, attn, att, and pool to be found by shape),
// made by testdata/attention/gen_attention.py with float64 references.

type attnFixture struct {
	headFixture
	AttnName  string           `json:"attn_name"`
	AttnUnits int              `json:"attn_units"`
	AttnBias  bool             `json:"attn_bias"`
	ByShape   bool             `json:"by_shape"`
	DeepLIFT  []gruDeepLIFTRef `json:"deeplift"`
	Cases     []struct {
		Attention []float64 `json:"attention"`
	} `json:"cases"`
}

// Every attention fixture, from each of its files, its head detected (by
// name, from the metadata, or by shape with the head given): logits,
// attention weights, saliency, G×I, IG (Gauss–Legendre, 50 nodes) and
// occlusion equal float64 PyTorch to 1e-8; LRP with bias factor 1
// conserves relevance; DeepLIFT: TestAttentionDeepLIFTFixtures.
func TestAttentionFixtures(t *testing.T) {
	fixtures := loadJSONFixtures[attnFixture](t, "attention")
	worst := map[string]float64{}
	for _, f := range fixtures {
		f.headFixture.Cases = nil
		hf := loadJSONFixtures[headFixture](t, "attention")
		for _, h := range hf {
			if h.Name == f.Name {
				f.headFixture = h
			}
		}
		for _, file := range f.Files {
			t.Run(file, func(t *testing.T) {
				var o Options
				if f.ByShape {
					h := cell.HeadAttention
					o.Head = &h
				}
				if f.Act != nil && !(f.InMeta && strings.HasSuffix(file, ".safetensors")) {
					o.Act, _ = cell.ParseActivation(*f.Act)
				}
				m, err := Load(filepath.Join("testdata", "attention", file), o)
				if err != nil {
					t.Fatal(err)
				}
				n := m.Net
				a := n.Attention()
				if n.Head() != cell.HeadAttention || a == nil || a.Units != f.AttnUnits || (a.B1 != nil) != f.AttnBias || n.Layers() != f.Layers || (n.Directions() == 2) != f.Bi {
					t.Fatalf("model: head %v, attention %+v, %d layers, %d directions", n.Head(), a, n.Layers(), n.Directions())
				}
				if m.Names.Attention != f.AttnName || m.Names.Decoder != f.Prefixes["decoder"] || m.OutputLayer != f.Prefixes["output_layer"] {
					t.Fatalf("names %+v → %q", m.Names, m.OutputLayer)
				}
				if s := m.Summary(); !strings.Contains(s, "attention:  "+f.AttnName) || !strings.Contains(s, "head attention") {
					t.Fatalf("summary does not show the attention head:\n%s", s)
				}
				e := mustExplainer(t, n)
				r, err := cell.NewRunner(n)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				for ci, c := range f.headFixture.Cases {
					x, err := m.Embed(c.IDs)
					if err != nil {
						t.Fatal(err)
					}
					what := fmt.Sprintf("%s case %d", f.Name, ci)
					c.check(t, e, x, what, f.IGSteps, worst)
					alpha := make([]float64, len(c.IDs))
					if err := r.AttentionWeights(x, alpha); err != nil {
						t.Fatal(err)
					}
					worst["attention"] = max(worst["attention"], agreeTo(t, what+" attention", alpha, f.Cases[ci].Attention, 1e-8))
					var res attrib.Result
					if err := e.Attribute(t.Context(), attrib.LRP, x, attrib.Options{Class: attrib.ClassIndex(c.Class), LRPBias: 1}, &res); err != nil {
						t.Fatal(err)
					}
					rl := res.Relevance
					if total := sum(res.Scores) + rl.Initial; math.Abs(total-rl.Output) > 1e-10*max(1, math.Abs(rl.Output)) {
						t.Fatalf("case %d: LRP with bias factor 1: tokens %v + initial %v = %v, output %v", ci, sum(res.Scores), rl.Initial, total, rl.Output)
					}
				}
			})
		}
	}
	t.Logf("largest relative differences from float64 PyTorch: %v", worst)
}

// A head given that is not attention, for a file with attention layers,
// is refused naming them.
func TestAttentionHeadContradicted(t *testing.T) {
	h := cell.HeadMean
	_, err := Load(filepath.Join("testdata", "attention", "att_uni1_single.pt"), Options{Head: &h})
	if err == nil || !strings.Contains(err.Error(), "attention") {
		t.Fatalf("got %v", err)
	}
	m, err := Load(filepath.Join("testdata", "attention", "att_uni1_single.pt"), Options{Names: Names{Attention: "attention"}})
	if err != nil || m.Head != cell.HeadAttention || m.HeadSource != HeadFromTensors {
		t.Fatalf("Names.Attention: %v %v", m, err)
	}
}

// DeepLIFT on every attention fixture, from each of its files: the
// feature and token scores and the reference's logits equal
// gen_attention.py's float64 PyTorch reference (the LSTM unrolled by hand,
// torch.autograd.Functions for Rescale, the product split and the
// softmax's rule) to 1e-8 relative, against the zero reference and a
// token's embedding row; all classes at once give class c's bits; the
// scores sum to delta.
func TestAttentionDeepLIFTFixtures(t *testing.T) {
	worst, worstDelta := 0.0, 0.0
	n := 0
	for _, f := range loadJSONFixtures[attnFixture](t, "attention") {
		if len(f.DeepLIFT) == 0 {
			t.Fatalf("%s: no DeepLIFT references", f.Name)
		}
		for _, file := range f.Files {
			var o Options
			if f.ByShape {
				h := cell.HeadAttention
				o.Head = &h
			}
			if f.Act != nil && !(f.InMeta && strings.HasSuffix(file, ".safetensors")) {
				o.Act, _ = cell.ParseActivation(*f.Act)
			}
			m, err := Load(filepath.Join("testdata", "attention", file), o)
			if err != nil {
				t.Fatal(err)
			}
			e := mustExplainer(t, m.Net)
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
				var res attrib.Result
				if err := e.Attribute(t.Context(), attrib.DeepLIFT, x, opt, &res); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				worst = max(worst, agreeTo(t, what+" features", res.Features, flat(c.Features), 1e-8))
				tokens := make([]float64, len(c.Features))
				for i, r := range c.Features {
					tokens[i] = sum(r)
				}
				worst = max(worst, agreeTo(t, what+" scores", res.Scores, tokens, 1e-8))
				if d := res.Logits[c.Class] - c.RefLogits[c.Class]; math.Abs(sum(res.Scores)-d) > 1e-9*max(1, math.Abs(d)) {
					t.Errorf("%s: Σ scores %v, ŷ(x) − PyTorch's ŷ(x₀) = %v", what, sum(res.Scores), d)
				}
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

// Every attention fixture's ONNX export (gen_attention.py: uni- and
// bidirectional, one and two layers, one- and two-layer scores, the
// pooling as a Mul and ReduceSum or as torch.bmm/torch.matmul's MatMul,
// the scores squeezed or not, opsets 13 and 17, a dynamic sequence axis)
// is read as the attention head: its
// logits and attention weights equal the fixture's float64 PyTorch
// references to 1e-8, the graph checked on every input.
func TestAttentionONNX(t *testing.T) {
	files := loadJSONFixtures[struct {
		Name  string `json:"name"`
		Units int    `json:"attn_units"`
		ONNX  struct {
			File  string `json:"file"`
			Opset int    `json:"opset"`
		} `json:"onnx"`
	}](t, "attention")
	refs := map[string]attnFixture{}
	for _, f := range loadJSONFixtures[attnFixture](t, "attention") {
		refs[f.Name] = f
	}
	hrefs := map[string]headFixture{}
	for _, h := range loadJSONFixtures[headFixture](t, "attention") {
		hrefs[h.Name] = h
	}
	opsets := map[int]bool{}
	worst := 0.0
	for _, f := range files {
		if f.ONNX.File == "" {
			t.Fatalf("%s: no ONNX export", f.Name)
		}
		opsets[f.ONNX.Opset] = true
		m, err := Load(filepath.Join("testdata", "attention", f.ONNX.File), Options{})
		if err != nil {
			t.Fatalf("%s: %v", f.ONNX.File, err)
		}
		n := m.Net
		if a := n.Attention(); n.Head() != cell.HeadAttention || a == nil || a.Units != f.Units || m.Names.Attention == "" {
			t.Fatalf("%s: head %v, attention %+v, names %+v", f.ONNX.File, n.Head(), a, m.Names)
		}
		r, err := cell.NewRunner(n)
		if err != nil {
			t.Fatal(err)
		}
		for ci, c := range hrefs[f.Name].Cases {
			x, err := m.Embed(c.IDs)
			if err != nil {
				t.Fatal(err)
			}
			logits, err := r.Forward(x)
			if err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("%s case %d", f.ONNX.File, ci)
			worst = max(worst, agreeTo(t, what+" logits", logits, c.Logits, 1e-8))
			if err := m.CheckGraph(c.IDs, x, logits, 1<<30); err != nil {
				t.Fatalf("%s: the graph: %v", what, err)
			}
			alpha := make([]float64, len(c.IDs))
			if err := r.AttentionWeights(x, alpha); err != nil {
				t.Fatal(err)
			}
			worst = max(worst, agreeTo(t, what+" attention", alpha, refs[f.Name].Cases[ci].Attention, 1e-8))
		}
		r.Close()
	}
	if !opsets[13] || !opsets[17] {
		t.Errorf("opsets %v, want 13 and 17", opsets)
	}
	t.Logf("largest relative difference from float64 PyTorch: %.3g", worst)
}

// Graphs shaped like attention pooling that compute something else are
// refused naming why (gen_attention.py's export_refused): a softmax over
// the features of a (B, T, 1) score (every weight 1: a sum over the
// steps), and weights applied to the embedded input instead of the LSTM's
// outputs.
func TestAttentionONNXRefused(t *testing.T) {
	for file, want := range map[string]string{
		"refused_features_axis.onnx": `is not the attention pooling read from nodes ["/attention/Add" "/Softmax" "/MatMul"]`,
		"refused_input_pooled.onnx":  `reads 5 values, but the LSTM gives 6`,
	} {
		_, err := Load(filepath.Join("testdata", "attention", "onnx", file), Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", file, err, want)
		}
	}
}

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
	AttnName  string `json:"attn_name"`
	AttnUnits int    `json:"attn_units"`
	AttnBias  bool   `json:"attn_bias"`
	ByShape   bool   `json:"by_shape"`
	Cases     []struct {
		Attention []float64 `json:"attention"`
	} `json:"cases"`
}

// Every attention fixture, from each of its files, its head detected (by
// name, from the metadata, or by shape with the head given): logits,
// attention weights, saliency, G×I, IG (Gauss–Legendre, 50 nodes) and
// occlusion equal float64 PyTorch to 1e-8; LRP with bias factor 1
// conserves relevance; DeepLIFT is refused.
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
				r, err := cell.NewStackedRunner(n)
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
					if err := e.Attribute(t.Context(), attrib.DeepLIFT, x, attrib.Options{Class: attrib.ClassIndex(c.Class)}, &res); err == nil || !strings.Contains(err.Error(), "attention") {
						t.Fatalf("DeepLIFT on attention: %v, want a refusal naming the attention head", err)
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

package model

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
)

// IG and Occlusion with the embedding row of a token as the baseline
// (attrib.Options.Baseline) against float64 Captum: LayerIntegratedGradients
// with baselines=torch.full_like(ids, N), and the row replaced by it
// (testdata/gen_baseline.py), to 1e-9 of the case's largest score.
func TestBaselineCaptum(t *testing.T) {
	b, err := os.ReadFile("testdata/baseline/refs.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		File       string    `json:"file"`
		IDs        []int     `json:"ids"`
		BaselineID int       `json:"baseline_id"`
		Class      int       `json:"class"`
		IG         []float64 `json:"ig"`
		IGDelta    float64   `json:"ig_delta"`
		Occlusion  []float64 `json:"occlusion"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 8 {
		t.Fatalf("%d cases", len(cases))
	}
	models := map[string]*Model{}
	worst := 0.0
	defer func() { t.Logf("worst difference: %.3g of the largest score", worst) }()
	for _, c := range cases {
		m := models[c.File]
		if m == nil {
			if m, err = Load("testdata/"+c.File, Options{}); err != nil {
				t.Fatal(err)
			}
			models[c.File] = m
		}
		x, err := m.Embed(c.IDs)
		if err != nil {
			t.Fatal(err)
		}
		e := m.Input()
		row := m.Embedding[c.BaselineID*e : (c.BaselineID+1)*e]
		opt := attrib.Options{Class: attrib.ClassIndex(c.Class), Float32Weights: true, Baseline: row}
		for _, k := range []struct {
			method attrib.Method
			want   []float64
		}{{attrib.IntegratedGradients, c.IG}, {attrib.Occlusion, c.Occlusion}} {
			res, err := attrib.Attribute(t.Context(), m.Net, k.method, x, opt)
			if err != nil {
				t.Fatal(err)
			}
			scale := 0.0
			for _, v := range k.want {
				scale = max(scale, math.Abs(v))
			}
			for i := range k.want {
				d := math.Abs(res.Scores[i] - k.want[i])
				worst = max(worst, d/scale)
				if d > 1e-9*scale {
					t.Errorf("%s %v id:%d %v: token %d: %v, Captum %v (difference %.3g of %.3g)", c.File, c.IDs, c.BaselineID, k.method, i, res.Scores[i], k.want[i], d, scale)
				}
			}
			if k.method == attrib.IntegratedGradients && math.Abs(res.Delta-c.IGDelta) > 1e-9*scale {
				t.Errorf("%s %v id:%d: delta %v, Captum %v", c.File, c.IDs, c.BaselineID, res.Delta, c.IGDelta)
			}
		}
	}
}

// A nil Baseline and an explicit zero row give the same bits; a Baseline
// for another method, of the wrong length or not finite is an error.
func TestBaselineZeroAndErrors(t *testing.T) {
	m, err := Load("testdata/bi2.safetensors", Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := m.Embed([]int{3, 1, 4, 1, 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []attrib.Method{attrib.IntegratedGradients, attrib.Occlusion} {
		a, err := attrib.Attribute(t.Context(), m.Net, method, x, attrib.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := attrib.Attribute(t.Context(), m.Net, method, x, attrib.Options{Baseline: make([]float64, m.Input())})
		if err != nil {
			t.Fatal(err)
		}
		for i := range a.Scores {
			if math.Float64bits(a.Scores[i]) != math.Float64bits(b.Scores[i]) {
				t.Errorf("%v: token %d: %v with no baseline, %v with the zero row", method, i, a.Scores[i], b.Scores[i])
			}
		}
	}
	for _, c := range []struct {
		method attrib.Method
		row    []float64
	}{
		{attrib.Saliency, make([]float64, m.Input())},
		{attrib.IntegratedGradients, make([]float64, m.Input()+1)},
		{attrib.Occlusion, append(make([]float64, m.Input()-1), math.NaN())},
	} {
		if _, err := attrib.Attribute(t.Context(), m.Net, c.method, x, attrib.Options{Baseline: c.row}); err == nil {
			t.Errorf("%v with a baseline of %d values: no error", c.method, len(c.row))
		}
	}
}

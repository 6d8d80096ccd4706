package onnx

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The exports of ../model/testdata/onnx (gen_onnx.py) with their float64
// PyTorch references.
const fixtureDir = "../model/testdata/onnx"

type fixture struct {
	Name      string `json:"name"`
	File      string `json:"file"`
	Opset     int64  `json:"opset"`
	Head      string `json:"head"`
	Act       string `json:"act"`
	Layers    int    `json:"layers"`
	Bi        bool   `json:"bidirectional"`
	BatchFrst bool   `json:"batch_first"`
	SeqLen    int    `json:"seq_len"`
	Units     int    `json:"units"`
	Dense     bool   `json:"dense"`
	Cases     []struct {
		IDs       []int       `json:"ids"`
		Features  [][]float64 `json:"features_in"`
		Logits    []float64   `json:"logits"`
		LogitsF32 []float64   `json:"logits_f32"`
	} `json:"cases"`
}

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	var all []fixture
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f fixture
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		all = append(all, f)
	}
	return all
}

func loadProgram(t testing.TB, file string) *Program {
	t.Helper()
	p, err := Prepare(decodeFixture(t, file))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// idsTensor lays ids out as the fixture's graph reads them: [1, T], or
// [T, 1] for a sequence-first model.
func idsTensor(ids []int, batchFirst bool) *Tensor {
	t := &Tensor{DataType: TypeInt64, Shape: []int{1, len(ids)}}
	if !batchFirst {
		t.Shape = []int{len(ids), 1}
	}
	for _, v := range ids {
		t.I = append(t.I, int64(v))
	}
	return t
}

// The interpreter on the exported graphs gives the float64 PyTorch logits
// (the same float32 weights upcast) to 1e-12, and the float32 model's to
// float32 precision.
func TestInterpreterFixtures(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			p := loadProgram(t, f.File)
			n := 0
			for _, c := range f.Cases {
				if f.SeqLen > 0 && len(c.IDs) != f.SeqLen {
					continue // a fixed-axis graph runs at its length only
				}
				in := idsTensor(c.IDs, f.BatchFrst)
				if f.Dense {
					in = &Tensor{DataType: TypeDouble, Shape: []int{1, len(c.Features), len(c.Features[0])}}
					for _, row := range c.Features {
						in.F = append(in.F, row...)
					}
				}
				env, err := p.Run(in, nil)
				if err != nil {
					t.Fatal(err)
				}
				y := p.Output(env)
				if len(y.F) != len(c.Logits) {
					t.Fatalf("%d logits, want %d", len(y.F), len(c.Logits))
				}
				for i := range y.F {
					if d := math.Abs(y.F[i] - c.Logits[i]); d > 1e-12*max(1, math.Abs(c.Logits[i])) {
						t.Errorf("ids %v: logit %d = %.17g, float64 PyTorch %.17g", c.IDs, i, y.F[i], c.Logits[i])
					}
					if d := math.Abs(y.F[i] - c.LogitsF32[i]); d > 1e-5*max(1, math.Abs(c.Logits[i])) {
						t.Errorf("ids %v: logit %d = %.9g, float32 PyTorch %.9g", c.IDs, i, y.F[i], c.LogitsF32[i])
					}
				}
				n++
			}
			if n == 0 {
				t.Fatal("no case ran")
			}
		})
	}
}

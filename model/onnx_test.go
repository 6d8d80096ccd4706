package model

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// testdata/onnx holds torch.onnx.export files of float32 models with every
// head and classifier, made by testdata/onnx/gen_onnx.py with float64
// PyTorch references (see its doc string).

type onnxFixture struct {
	Name   string          `json:"name"`
	File   string          `json:"file"`
	Head   string          `json:"head"`
	Act    string          `json:"act"`
	Bi     bool            `json:"bidirectional"`
	Layers int             `json:"layers"`
	Steps  int             `json:"ig_steps"`
	Dense  bool            `json:"dense"`
	SeqLen int             `json:"seq_len"` // a graph's fixed length; 0: dynamic
	Cases  []referenceCase `json:"cases"`
}

func loadONNXFixtures(t *testing.T) []onnxFixture { return loadJSONFixtures[onnxFixture](t, "onnx") }

// Every ONNX export loads with no options — the head and the classifier
// come from the graph — and gives float64 PyTorch's logits, saliency, G×I,
// IG and occlusion to 1e-8.
func TestONNXFixtures(t *testing.T) {
	seen := map[string]bool{}
	worst := map[string]float64{}
	for _, f := range loadONNXFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			m, err := Load(filepath.Join("testdata", "onnx", f.File), Options{})
			if err != nil {
				t.Fatal(err)
			}
			head := f.Head
			if !f.Bi && head == "hn-bf" {
				head = "hn" // the same function for one direction
			}
			act := f.Act
			if act == "" {
				act = "none"
			}
			if m.Head.String() != head || m.Act.String() != act || m.HeadSource != HeadFromGraph || m.Net.Layers() != f.Layers || m.Format != "onnx" {
				t.Fatalf("read as head %v, act %v (%s), %d layers, format %s", m.Head, m.Act, m.HeadSource, m.Net.Layers(), m.Format)
			}
			seen[head] = true
			e := mustExplainer(t, m.Net)
			for ci, c := range f.Cases {
				var x cell.Input
				if f.Dense {
					if m.Embedding != nil {
						t.Fatal("a dense model read with an embedding")
					}
					x = cell.Dense(flat(c.Features), len(c.Features))
				} else if x, err = m.Embed(c.IDs); f.SeqLen > 0 && len(c.IDs) != f.SeqLen {
					// A graph of fixed length takes no other, as
					// onnxruntime: PyTorch's model would.
					if err == nil {
						t.Fatalf("case %d: %d tokens embedded for a graph of fixed length %d", ci, len(c.IDs), f.SeqLen)
					}
					continue
				} else if err != nil {
					t.Fatal(err)
				}
				c.check(t, e, x, fmt.Sprintf("%s case %d", f.Name, ci), f.Steps, worst)
			}
			if !strings.Contains(m.Summary(), "graph:      opset") {
				t.Errorf("summary without the graph line:\n%s", m.Summary())
			}
		})
	}
	t.Logf("largest relative differences from float64 PyTorch: %v", worst)
	for _, h := range cell.Heads() {
		if !seen[h.String()] {
			t.Errorf("no ONNX fixture with head %v", h)
		}
	}
}

// A head given in the options must be the graph's (or, for one direction,
// the same function); an activation likewise.
func TestONNXHeadOptions(t *testing.T) {
	path := filepath.Join("testdata", "onnx", "mean_bi2_o17.onnx")
	if _, err := Load(path, Options{Head: new(cell.HeadMean)}); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, Options{Head: new(cell.HeadMax)})
	if err == nil || !strings.Contains(err.Error(), "head max given, but the graph's head is mean") {
		t.Fatalf("contradicting head: %v", err)
	}
	_, err = Load(path, Options{Head: new(cell.HeadHN)})
	if err == nil || !strings.Contains(err.Error(), "the graph's head is mean") {
		t.Fatalf("contradicting hn: %v", err)
	}
	_, err = Load(path, Options{Act: cell.ActReLU})
	if err == nil || !strings.Contains(err.Error(), "activation relu given") {
		t.Fatalf("contradicting activation: %v", err)
	}
	m, err := Load(filepath.Join("testdata", "onnx", "last_uni1_o11.onnx"), Options{Head: new(cell.HeadHN)})
	if err != nil || m.Head != cell.HeadHN {
		t.Fatalf("uni last read as hn: %v", err)
	}
	if _, err := Load(path, Options{Names: Names{LSTM: "rnn"}}); err == nil {
		t.Fatal("names accepted for an ONNX file")
	}
}

// A truncated file and the graphs that are not this family are refused
// with the reason (GRU exports are read: gru_onnx_test.go).
func TestONNXRefused(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "onnx", "hn_bi1_o11.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "trunc.onnx")
	if err := os.WriteFile(trunc, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		trunc: `model: trunc.onnx: onnx: model: field 7 holds`,
		filepath.Join("testdata", "onnx", "external.onnx"): `external data`,
	} {
		_, err := Load(path, Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want an error containing %q", path, err, want)
		}
	}
}

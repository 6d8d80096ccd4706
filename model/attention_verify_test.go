package model_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/verify"
)

// -head auto -verify on an attention model: the logits recorded from each
// float32 PyTorch model (testdata/attention/*.verify.jsonl) match the
// attention head alone.
func TestAttentionVerifyHeads(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "attention", "*.json"))
	if len(paths) == 0 {
		t.Fatal("no attention fixtures")
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Name    string   `json:"name"`
			Files   []string `json:"files"`
			Act     *string  `json:"act"`
			ByShape bool     `json:"by_shape"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		var o model.Options
		if f.Act != nil {
			o.Act, _ = cell.ParseActivation(*f.Act)
		}
		if f.ByShape {
			h := cell.HeadAttention
			o.Head = &h
		}
		m, err := model.Load(filepath.Join("testdata", "attention", f.Files[0]), o)
		if err != nil {
			t.Fatal(err)
		}
		cases, err := verify.ReadFile(filepath.Join("testdata", "attention", f.Name+".verify.jsonl"), m.Vocab, m.Net.Classes())
		if err != nil {
			t.Fatal(err)
		}
		vs, err := verify.All(m, cases)
		if err != nil {
			t.Fatal(err)
		}
		specs, _ := verify.Matching(vs)
		if len(specs) != 1 || !strings.HasPrefix(specs[0], "attention") {
			t.Fatalf("%s: matching heads %v, want attention alone", f.Name, specs)
		}
	}
}

package model_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/verify"
)

// -head auto -verify on a GRU: the logits recorded from each float32
// PyTorch GRU (testdata/gru/*.verify.jsonl) match its own head and
// activation, and no head of another class.
func TestGRUVerifyHeads(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "gru", "*.json"))
	if len(paths) == 0 {
		t.Fatal("no GRU fixtures")
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Name  string   `json:"name"`
			Files []string `json:"files"`
			Head  string   `json:"head"`
			Act   *string  `json:"act"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		spec := f.Head
		if f.Act != nil {
			spec += "+" + *f.Act
		}
		h, a, err := model.ParseHeadSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		m, err := model.Load(filepath.Join("testdata", "gru", f.Files[0]), model.Options{Head: &h, Act: a})
		if err != nil {
			t.Fatal(err)
		}
		cases, err := verify.ReadFile(filepath.Join("testdata", "gru", f.Name+".verify.jsonl"), m.Vocab, m.Net.Classes())
		if err != nil {
			t.Fatal(err)
		}
		vs, err := verify.All(m, cases)
		if err != nil {
			t.Fatal(err)
		}
		specs, classes := verify.Matching(vs)
		ok := false
		for i, c := range classes {
			_, act, _ := strings.Cut(spec, "+")
			_, gotAct, _ := strings.Cut(specs[i], "+")
			names := strings.Split(c, " = ")
			if slices.Contains(names, spec) || slices.Contains(names, f.Head) && act == gotAct {
				ok = true
			}
		}
		if !ok || len(specs) != 1 {
			t.Fatalf("%s: matching heads %v (classes %v), want %s alone", f.Name, specs, classes, spec)
		}
	}
}

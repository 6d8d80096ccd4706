package onnx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// FuzzDecode feeds the decoder and the recogniser (which evaluates the
// graph) arbitrary bytes, seeded with the real exports, graphs that depend
// on the length (length/), their truncations, a few corruptions, and
// attributes of the wrong type or repeated: every input must give a model
// or an error, never a panic, a hang or an allocation beyond the bounds;
// a model is then checked at other lengths (CheckInput), which must not
// panic either.
func FuzzDecode(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join(fixtureDir, "*.onnx"))
	more, err2 := filepath.Glob(filepath.Join(fixtureDir, "length", "*.onnx"))
	if err != nil || err2 != nil || len(paths) == 0 || len(more) == 0 {
		f.Fatalf("no seeds: %v, %v", err, err2)
	}
	paths = append(paths, more...)
	paths = append(paths, filepath.Join(gruFixtureDir, "gru_hn_uni1.onnx")) // ONNX GRU nodes
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for _, n := range []int{1, 2, 10, len(b) / 3, len(b) / 2, len(b) - 1} {
			f.Add(b[:n])
		}
		c := append([]byte(nil), b...)
		c[len(c)/2] ^= 0x5a
		f.Add(c)
	}
	for _, b := range attrSeeds(f) { // attributes as onnx.checker refuses them
		f.Add(b)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		r, err := recognize(m)
		if err != nil {
			return
		}
		if r.Params.Layers < 1 || len(r.Embedding) != r.Vocab*r.Params.Input {
			t.Fatalf("recognised an inconsistent model: %s", r.Describe())
		}
		net, err := cell.NewModel(r.Params)
		if err != nil {
			return
		}
		run, err := cell.NewRunner(net)
		if err != nil {
			return
		}
		defer run.Close()
		for _, n := range []int{1, 12} {
			ids, x := r.probeInput(n, n)
			y, err := run.Forward(cell.Dense(x, n))
			if err != nil {
				continue
			}
			if r.Dense {
				ids = nil
			}
			r.CheckInput(net, ids, x, y, 1<<20) // an error or nil, never a panic
		}
	})
}

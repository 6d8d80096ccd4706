package onnx

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds the decoder and the recogniser (which evaluates the
// graph) arbitrary bytes, seeded with the real exports, their
// truncations and a few corruptions: every input must give a model or an
// error, never a panic, a hang or an allocation beyond the bounds.
func FuzzDecode(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join(fixtureDir, "*.onnx"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
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
	})
}

// Package testmodel writes small model files that the tests of several
// packages share.
package testmodel

import (
	"bytes"
	"math"
	"os"
	"path/filepath"

	"github.com/whitebox-lstm/whitebox/export"
)

// ManyClasses writes into dir a model of c classes, Embedding(4, 2) →
// LSTM(2, 2) → Linear(2, c) with head hn (in its metadata), as
// classes.safetensors, and returns its path: a model whose size is in its
// classes, for the budget of -class all.
func ManyClasses(dir string, c int) (string, error) {
	fill := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Sin(float64(i)+1) / 2
		}
		return v
	}
	tensors := []export.Tensor{
		{Name: "embedding.weight", Shape: []int{4, 2}, Data: fill(8)},
		{Name: "lstm.weight_ih_l0", Shape: []int{8, 2}, Data: fill(16)},
		{Name: "lstm.weight_hh_l0", Shape: []int{8, 2}, Data: fill(16)},
		{Name: "lstm.bias_ih_l0", Shape: []int{8}, Data: fill(8)},
		{Name: "lstm.bias_hh_l0", Shape: []int{8}, Data: fill(8)},
		{Name: "fc.weight", Shape: []int{c, 2}, Data: fill(2 * c)},
		{Name: "fc.bias", Shape: []int{c}, Data: fill(c)},
	}
	var b bytes.Buffer
	if err := export.WriteSafetensors(&b, tensors, map[string]string{"whitebox.head": "hn"}); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "classes.safetensors")
	return path, os.WriteFile(path, b.Bytes(), 0o644)
}

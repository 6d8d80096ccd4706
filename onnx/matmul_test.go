package onnx

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestBatchMatmul: MatMul with B of rank 3 (torch.bmm, batched
// torch.matmul) against a plain loop, with the batch axes broadcast
// either way; mismatched shapes and a rank-1 A are errors, and the work
// limit holds.
func TestBatchMatmul(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	tensor := func(shape ...int) *Tensor {
		f := make([]float64, numel(shape))
		for i := range f {
			f[i] = rng.NormFloat64()
		}
		return &Tensor{DataType: TypeDouble, Shape: shape, F: f}
	}
	for _, c := range []struct{ a, b []int }{
		{[]int{2, 1, 5}, []int{2, 5, 3}},
		{[]int{1, 4, 5}, []int{3, 5, 2}}, // A's batch broadcast
		{[]int{3, 4, 5}, []int{1, 5, 2}}, // B's
		{[]int{4, 5}, []int{3, 5, 2}},    // A of rank 2 for every batch
		{[]int{2, 3, 1, 5}, []int{3, 5, 1}},
	} {
		a, b := tensor(c.a...), tensor(c.b...)
		env := &Env{maxElements: 1 << 20, maxMACs: 1 << 20}
		got, err := env.eval(13, &Node{OpType: "MatMul"}, []*Tensor{a, b})
		if err != nil {
			t.Fatalf("%v × %v: %v", c.a, c.b, err)
		}
		m, k, n := c.a[len(c.a)-2], c.a[len(c.a)-1], c.b[len(c.b)-1]
		batch, _ := broadcast(c.a[:len(c.a)-2], c.b[:len(c.b)-2])
		if want := append(append([]int(nil), batch...), m, n); !slices.Equal(got[0].Shape, want) {
			t.Fatalf("%v × %v: shape %v, want %v", c.a, c.b, got[0].Shape, want)
		}
		// A batch index's matrices, by its coordinates.
		pick := func(shape, batch []int, q, size int) int {
			idx, st := 0, 1
			for i := len(batch) - 1; i >= 0; i-- {
				coord := q % batch[i]
				q /= batch[i]
				if j := i - (len(batch) - len(shape)); j >= 0 && shape[j] != 1 {
					idx += coord * st
				}
				if j := i - (len(batch) - len(shape)); j >= 0 {
					st *= shape[j]
				}
			}
			return idx * size
		}
		for q := range numel(batch) {
			oa, ob := pick(c.a[:len(c.a)-2], batch, q, m*k), pick(c.b[:len(c.b)-2], batch, q, k*n)
			for r := range m {
				for j := range n {
					s := 0.0
					for i := range k {
						s += a.F[oa+r*k+i] * b.F[ob+i*n+j]
					}
					if g := got[0].F[q*m*n+r*n+j]; math.Abs(g-s) > 1e-12 {
						t.Fatalf("%v × %v: batch %d [%d,%d] = %v, want %v", c.a, c.b, q, r, j, g, s)
					}
				}
			}
		}
	}
	for _, c := range []struct {
		a, b []int
		want string
	}{
		{[]int{2, 1, 4}, []int{2, 5, 3}, "do not match"},
		{[]int{5}, []int{2, 5, 3}, "rank ≥ 2"},
		{[]int{2, 1, 5}, []int{3, 5, 3}, "do not broadcast"},
	} {
		env := &Env{maxElements: 1 << 20, maxMACs: 1 << 20}
		if _, err := env.eval(13, &Node{OpType: "MatMul"}, []*Tensor{tensor(c.a...), tensor(c.b...)}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v × %v: error %v, want %q", c.a, c.b, err, c.want)
		}
	}
	env := &Env{maxElements: 1 << 20, maxMACs: 100}
	if _, err := env.eval(13, &Node{OpType: "MatMul"}, []*Tensor{tensor(4, 4, 4), tensor(4, 4, 4)}); err == nil || !strings.Contains(err.Error(), "multiply-adds") {
		t.Errorf("256 multiply-adds past a limit of 100: %v", err)
	}
}

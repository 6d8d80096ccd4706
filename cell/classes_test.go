package cell

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// perClass returns C buffers of n values.
func perClass(c, n int) [][]float64 {
	v := make([][]float64, c)
	for k := range v {
		v[k] = make([]float64, n)
	}
	return v
}

// TestBatchIntegratedGradientsAllBits: every class's sum is GradientSum's
// for that class, to the bit, for every plan: lanes cutting blocks,
// checkpointed segments (each class recomputes them), one lane, several
// workers; y and y0 are Logits'.
func TestBatchIntegratedGradientsAllBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	for _, tc := range batchCases(t) {
		n, x := tc.net, tc.x
		for _, steps := range []int{5, 37} {
			alphas, weights := randomRule(rng, steps)
			size := x.Len() * n.d
			want := perClass(n.c, size)
			for c := range n.c {
				if err := n.GradientSum(NewWorkspace(n), x, c, alphas, weights, want[c]); err != nil {
					t.Fatal(err)
				}
			}
			wantY, wantY0 := make([]float64, n.c), make([]float64, n.c)
			b := NewBatcher(n)
			if err := b.Logits(x, wantY); err != nil {
				t.Fatal(err)
			}
			if err := b.Logits(x.Scaled(0), wantY0); err != nil {
				t.Fatal(err)
			}
			all := shape{h: n.h, d: n.d, sums: n.c}
			for _, opt := range []BatchOptions{
				{},
				{Workers: 1, Lanes: 1},
				{Workers: 2, Lanes: 3},
				{Workers: 3, Lanes: 16},
				{Workers: 2, Lanes: 40},
				{Workers: 2, Budget: minIGBytes(all, x.Len(), len(alphas), !x.IsOneHot())}, // checkpoints, one lane
				{Workers: 1, Budget: 60 << 10},
			} {
				if opt.Budget > 0 && opt.Budget < minIGBytes(all, x.Len(), len(alphas), !x.IsOneHot()) {
					continue
				}
				where := fmt.Sprintf("%s steps=%d %+v (plan %+v)", tc.name, steps, opt, planIG(all, x.Len(), len(alphas), !x.IsOneHot(), limitsOf(opt)))
				got, y, y0 := perClass(n.c, size), make([]float64, n.c), make([]float64, n.c)
				if err := b.IntegratedGradientsAll(context.Background(), x, alphas, weights, got, y, y0, opt); err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				for c := range n.c {
					assertSameBits(t, fmt.Sprintf("%s class %d", where, c), got[c], want[c])
				}
				assertSameBits(t, where+" y", y, wantY)
				assertSameBits(t, where+" y0", y0, wantY0)
			}
		}
	}
}

// TestAllClassesSinglePaths: GradientAll, LRPAll and OcclusionAll of a
// Network, a Batcher and a StackedRunner give each class the bits of the
// single-class call.
func TestAllClassesSinglePaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(83, 84))
	ctx := context.Background()
	for _, tc := range batchCases(t) {
		n, x := tc.net, tc.x
		size := x.Len() * n.d
		ws, all := NewWorkspace(n), NewWorkspace(n)
		grads, rels, outs := perClass(n.c, size), perClass(n.c, size), make([]Relevance, n.c)
		occ := perClass(n.c, x.Len())
		if _, err := n.GradientAll(ctx, all, x, grads); err != nil {
			t.Fatal(err)
		}
		if _, err := n.LRPAll(ctx, all, x, 0.01, rels, outs); err != nil {
			t.Fatal(err)
		}
		if err := NewBatcher(n).OcclusionAll(ctx, x, occ, BatchOptions{Workers: 2, Lanes: 3}); err != nil {
			t.Fatal(err)
		}
		for c := range n.c {
			want := make([]float64, size)
			if _, err := n.Gradient(ws, x, c, want); err != nil {
				t.Fatal(err)
			}
			assertSameBits(t, fmt.Sprintf("%s gradient class %d", tc.name, c), grads[c], want)
			r, err := n.LRP(ws, x, c, 0.01, want)
			if err != nil {
				t.Fatal(err)
			}
			assertSameBits(t, fmt.Sprintf("%s LRP class %d", tc.name, c), rels[c], want)
			if r != outs[c] {
				t.Errorf("%s LRP class %d: bookkeeping %+v, want %+v", tc.name, c, outs[c], r)
			}
			wantOcc := make([]float64, x.Len())
			if err := NewBatcher(n).Occlusion(ctx, x, c, wantOcc, BatchOptions{}); err != nil {
				t.Fatal(err)
			}
			assertSameBits(t, fmt.Sprintf("%s occlusion class %d", tc.name, c), occ[c], wantOcc)
		}
	}
	for _, hc := range headCases() {
		s := randomHeadStacked(t, rng, 3, 5, 4, hc)
		x := randomStackedInput(rng, 13, 3)
		size := x.Len() * 3
		r, single := mustRunner(t, s), mustRunner(t, s)
		grads, rels, outs := perClass(4, size), perClass(4, size), make([]Relevance, 4)
		if _, err := r.GradientAll(ctx, x, grads); err != nil {
			t.Fatal(err)
		}
		if _, err := r.LRPAll(ctx, x, 0.01, 0.5, rels, outs); err != nil {
			t.Fatal(err)
		}
		for _, row := range [][]float64{nil, {0.4, -0.9, 1.3}} {
			ref := deepLIFTRef(row, x.Len(), 3)
			dl := perClass(4, size)
			y, y0, err := r.DeepLIFTAll(ctx, x, ref, dl)
			if err != nil {
				t.Fatal(err)
			}
			y, y0 = append([]float64(nil), y...), append([]float64(nil), y0...)
			for c := range 4 {
				where := fmt.Sprintf("%v ref %v class %d", hc, row, c)
				want := make([]float64, size)
				wy, wy0, err := single.DeepLIFT(x, ref, c, want)
				if err != nil {
					t.Fatal(err)
				}
				assertSameBits(t, where+" DeepLIFT", dl[c], want)
				assertSameBits(t, where+" DeepLIFT y", y, wy)
				assertSameBits(t, where+" DeepLIFT y0", y0, wy0)
			}
		}
		alphas, weights := randomRule(rng, 21)
		for _, opt := range []BatchOptions{{}, {Workers: 2, Lanes: 5}, {Workers: 3, Lanes: 1}} {
			ig, y, y0 := perClass(4, size), make([]float64, 4), make([]float64, 4)
			if err := r.IntegratedGradientsAll(ctx, x, alphas, weights, ig, y, y0, opt); err != nil {
				t.Fatal(err)
			}
			occ := perClass(4, x.Len())
			if err := r.OcclusionAll(ctx, x, occ, opt); err != nil {
				t.Fatal(err)
			}
			for c := range 4 {
				where := fmt.Sprintf("%v %+v class %d", hc, opt, c)
				want, wy, wy0 := make([]float64, size), make([]float64, 4), make([]float64, 4)
				choose := func([]float64) (int, error) { return c, nil }
				if err := single.IntegratedGradients(ctx, x, choose, alphas, weights, want, wy, wy0, BatchOptions{}); err != nil {
					t.Fatal(err)
				}
				assertSameBits(t, where+" IG", ig[c], want)
				assertSameBits(t, where+" IG y", y, wy)
				assertSameBits(t, where+" IG y0", y0, wy0)
				wantOcc := make([]float64, x.Len())
				if err := single.Occlusion(ctx, x, c, wantOcc, BatchOptions{}); err != nil {
					t.Fatal(err)
				}
				assertSameBits(t, where+" occlusion", occ[c], wantOcc)
				if _, err := single.Gradient(x, c, want); err != nil {
					t.Fatal(err)
				}
				assertSameBits(t, where+" gradient", grads[c], want)
				out, err := single.LRP(x, c, 0.01, 0.5, want)
				if err != nil {
					t.Fatal(err)
				}
				assertSameBits(t, where+" LRP", rels[c], want)
				if out != outs[c] {
					t.Errorf("%s LRP: bookkeeping %+v, want %+v", where, outs[c], out)
				}
			}
		}
	}
}

// TestAllClassesErrors: wrong output buffers are refused with errors.
func TestAllClassesErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(85, 86))
	n := mustNew(t, randomParams(rng, 3, 2, 3, true))
	x := OneHot([]int{0, 1, 1})
	ctx := context.Background()
	for name, bufs := range map[string][][]float64{"too few": perClass(2, 6), "too short": {make([]float64, 6), make([]float64, 5), make([]float64, 6)}} {
		if _, err := n.GradientAll(ctx, NewWorkspace(n), x, bufs); err == nil {
			t.Errorf("GradientAll, %s buffers: no error", name)
		}
		if _, err := n.LRPAll(ctx, NewWorkspace(n), x, 0.01, bufs, make([]Relevance, 3)); err == nil {
			t.Errorf("LRPAll, %s buffers: no error", name)
		}
		if err := NewBatcher(n).IntegratedGradientsAll(ctx, x, []float64{1}, []float64{1}, bufs, make([]float64, 3), make([]float64, 3), BatchOptions{}); err == nil {
			t.Errorf("IntegratedGradientsAll, %s buffers: no error", name)
		}
	}
	if _, err := n.LRPAll(ctx, NewWorkspace(n), x, 0.01, perClass(3, 6), make([]Relevance, 2)); err == nil {
		t.Error("LRPAll with 2 Relevance values for 3 classes: no error")
	}
	if err := NewBatcher(n).OcclusionAll(ctx, x, perClass(3, 2), BatchOptions{}); err == nil {
		t.Error("OcclusionAll with short buffers: no error")
	}
	s := randomHeadStacked(t, rng, 2, 3, 3, headCase{1, false, HeadLast, ActNone})
	r := mustRunner(t, s)
	sx := randomStackedInput(rng, 4, 2)
	ref := deepLIFTRef(nil, 4, 2)
	for name, bufs := range map[string][][]float64{"too few": perClass(2, 8), "too short": {make([]float64, 8), make([]float64, 7), make([]float64, 8)}} {
		if _, _, err := r.DeepLIFTAll(ctx, sx, ref, bufs); err == nil {
			t.Errorf("DeepLIFTAll, %s buffers: no error", name)
		}
	}
	if _, _, err := r.DeepLIFTAll(ctx, sx, deepLIFTRef(nil, 3, 2), perClass(3, 8)); err == nil || !strings.Contains(err.Error(), "reference") {
		t.Errorf("DeepLIFTAll with a reference of 3 steps for 4: %v, want an error naming the reference", err)
	}
}

func mustRunner(t testing.TB, s *Stacked) *StackedRunner {
	t.Helper()
	r, err := NewStackedRunner(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

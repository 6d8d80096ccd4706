package cell_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// TestStackedOneHotSameBits runs the white-box networks' AsStacked form on
// their one-hot input and compares it bit for bit with the Network engine
// on the same input: the logits; every class's gradient and LRP (ε > 0
// and ε = 0, with the Network's decoder and bias share; errors where the
// Network fails), one class at a time and all at once; occlusion; and
// Integrated Gradients (one class and every class) with whole traces,
// checkpoints, several workers and lane caps. On one-hot
// input the Stacked engine sums each lane's W_ihᵀ·dz_k as the Batcher
// does, so IG keeps the Network's bits (on dense rows it sums dz_k first:
// TestAsStackedSameBits).
func TestStackedOneHotSameBits(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 2))
	const m = 50
	alphas, weights := make([]float64, m), make([]float64, m)
	for i := range m {
		alphas[i], weights[i] = (float64(i)+0.5)/m, 1.0/m
	}
	opts := []cell.BatchOptions{
		{},
		{Workers: 1},
		{Workers: 2},
		{Workers: 3, Lanes: 7},
		// Budgets of a few one-lane traces (set per input below):
		// checkpointed lanes on the longer inputs.
		{Workers: 2, Budget: 2},
		{Workers: 1, Budget: 3},
		{Workers: 3, Budget: 8},
	}
	for _, name := range whitebox.Names() {
		wb, err := whitebox.New(name, whitebox.Config{})
		if err != nil {
			t.Fatal(err)
		}
		n := wb.Network
		st, err := n.AsStacked()
		if err != nil {
			t.Fatal(err)
		}
		r, err := cell.NewStackedRunner(st)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		b := cell.NewBatcher(n)
		defer b.Close()
		ws := cell.NewWorkspace(n)
		d, c := n.Input(), n.Classes()
		lengths, runOpts := []int{1, 3, 17, 120, 333}, opts
		if testing.Short() { // under qemu (CI's arm64 run) the full test takes minutes
			lengths, runOpts = []int{3, 120}, []cell.BatchOptions{opts[2], opts[4]}
		}
		var inputs []cell.Input
		for _, steps := range lengths {
			syms := make([]int, steps)
			for i := range syms {
				syms[i] = rng.IntN(d)
			}
			inputs = append(inputs, cell.OneHot(syms))
		}
		gap := []int{0, -1, 1, 1, -1, 0, 1}
		inputs = append(inputs, cell.OneHot(gap), cell.ScaledOneHot(gap, 0.7))
		for _, x := range inputs {
			steps := x.Len()
			at := fmt.Sprintf("%s T=%d scale %v", name, steps, x.Scale())
			yN, err := n.Forward(ws, x)
			if err != nil {
				t.Fatal(err)
			}
			yN = append([]float64(nil), yN...)
			yS, err := r.Forward(x)
			if err != nil {
				t.Fatalf("%s Forward: %v", at, err)
			}
			if s := firstDiff(yN, yS); s != "" {
				t.Errorf("%s Forward: %s", at, s)
			}
			yL := make([]float64, c)
			if err := r.Logits(x, yL); err != nil {
				t.Fatal(err)
			}
			if s := firstDiff(yN, yL); s != "" {
				t.Errorf("%s Logits: %s", at, s)
			}
			gN, gS := make([]float64, steps*d), make([]float64, steps*d)
			for k := range c {
				sameGradientAndLRP(t, at, n, ws, x, r, x, k, gN, gS)
			}
			// Every class at once.
			allN, allS := make([][]float64, c), make([][]float64, c)
			for q := range c {
				allN[q], allS[q] = make([]float64, steps*d), make([]float64, steps*d)
			}
			if _, err := n.GradientAll(ctx, ws, x, allN); err != nil {
				t.Fatal(err)
			}
			if _, err := r.GradientAll(ctx, x, allS); err != nil {
				t.Fatal(err)
			}
			for q := range c {
				if s := firstDiff(allN[q], allS[q]); s != "" {
					t.Errorf("%s GradientAll class %d: %s", at, q, s)
				}
			}
			relsN, relsS := make([]cell.Relevance, c), make([]cell.Relevance, c)
			if _, err := n.LRPAll(ctx, ws, x, cell.DefaultEpsilon, allN, relsN); err != nil {
				t.Fatal(err)
			}
			if _, err := r.LRPAll(ctx, x, cell.DefaultEpsilon, 0, allS, relsS); err != nil {
				t.Fatal(err)
			}
			for q := range c {
				if s := firstDiff(append(allN[q], relBits(relsN[q])...), append(allS[q], relBits(relsS[q])...)); s != "" {
					t.Errorf("%s LRPAll class %d: %s", at, q, s)
				}
			}
			if _, err := r.LRP(x, 0, cell.DefaultEpsilon, 1, gS); err == nil {
				t.Errorf("%s: LRP with bias factor 1 on a Network's Stacked form: no error", at)
			}
			occN, occS := make([]float64, steps), make([]float64, steps)
			if err := b.Occlusion(ctx, x, c-1, occN, cell.BatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := r.Occlusion(ctx, x, c-1, occS, cell.BatchOptions{Workers: 2}); err != nil {
				t.Fatal(err)
			}
			if s := firstDiff(occN, occS); s != "" {
				t.Errorf("%s Occlusion: %s", at, s)
			}
			occAllN, occAllS := make([][]float64, c), make([][]float64, c)
			for q := range c {
				occAllN[q], occAllS[q] = make([]float64, steps), make([]float64, steps)
			}
			if err := b.OcclusionAll(ctx, x, occAllN, cell.BatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := r.OcclusionAll(ctx, x, occAllS, cell.BatchOptions{Workers: 3}); err != nil {
				t.Fatal(err)
			}
			for q := range c {
				if s := firstDiff(occAllN[q], occAllS[q]); s != "" {
					t.Errorf("%s OcclusionAll class %d: %s", at, q, s)
				}
			}
			for _, opt := range runOpts {
				opt.Budget *= st.TraceBytes(steps) + 64<<10
				where := fmt.Sprintf("%s %+v", at, opt)
				k := steps % c
				choose := func([]float64) (int, error) { return k, nil }
				y, y0, yB, y0B := make([]float64, c), make([]float64, c), make([]float64, c), make([]float64, c)
				if err := b.IntegratedGradients(ctx, x, choose, alphas, weights, gN, yB, y0B, cell.BatchOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, gS, y, y0, opt); err != nil {
					t.Fatalf("%s IG: %v", where, err)
				}
				if s := firstDiff(append(gN, append(yB, y0B...)...), append(gS, append(y, y0...)...)); s != "" {
					t.Errorf("%s IG class %d: %s", where, k, s)
				}
				if steps > 120 && opt.Budget == 0 {
					continue // IntegratedGradientsAll: whole traces of every class
				}
				allN, allS := make([][]float64, c), make([][]float64, c)
				for q := range c {
					allN[q], allS[q] = make([]float64, steps*d), make([]float64, steps*d)
				}
				if err := b.IntegratedGradientsAll(ctx, x, alphas, weights, allN, yB, y0B, cell.BatchOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := r.IntegratedGradientsAll(ctx, x, alphas, weights, allS, y, y0, opt); err != nil {
					t.Fatalf("%s IG all: %v", where, err)
				}
				for q := range c {
					if s := firstDiff(allN[q], allS[q]); s != "" {
						t.Errorf("%s IG all, class %d: %s", where, q, s)
					}
				}
			}
		}
	}
}

package cell_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// firstDiff returns "" when a and b hold the same bits, else where they
// first differ.
func firstDiff(a, b []float64) string {
	if len(a) != len(b) {
		return fmt.Sprintf("lengths %d and %d", len(a), len(b))
	}
	n, first := 0, -1
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d differ, first [%d]: %v vs %v", n, len(a), first, a[first], b[first])
}

func relBits(r cell.Relevance) []float64 { return []float64{r.Output, r.Bias, r.Initial} }

// sameGradientAndLRP checks that the runner r gives class k's gradient
// and LRP (ε = DefaultEpsilon and 0: the same errors, else the
// relevances, output, bias and initial shares) with the same bits on x and
// on xs (x's rows made dense, or x), and so do GradientChosenContext and
// LRPChosenContext with the class k chosen from the logits; gN and gS are
// T×D scratch.
func sameGradientAndLRP(t *testing.T, at string, r *cell.Runner, x, xs cell.Input, k int, gN, gS []float64) {
	t.Helper()
	if _, err := r.Gradient(x, k, gN); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Gradient(xs, k, gS); err != nil {
		t.Fatal(err)
	}
	if s := firstDiff(gN, gS); s != "" {
		t.Errorf("%s Gradient class %d: %s", at, k, s)
	}
	yN, err := r.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	yN = append([]float64(nil), yN...)
	var seen []float64 // the logits choose was given
	choose := func(y []float64) (int, error) {
		seen = append(seen[:0], y...)
		return k, nil
	}
	ctx := context.Background()
	clear(gS)
	y, class, err := r.GradientChosenContext(ctx, xs, choose, gS)
	if err != nil {
		t.Fatal(err)
	}
	if s := firstDiff(gN, gS) + firstDiff(yN, y) + firstDiff(yN, seen); s != "" || class != k {
		t.Errorf("%s GradientChosenContext class %d (returned %d): %s", at, k, class, s)
	}
	for _, eps := range []float64{cell.DefaultEpsilon, 0} {
		oN, eN := r.LRP(x, k, eps, 0, gN)
		oS, eS := r.LRP(xs, k, eps, 0, gS)
		where := fmt.Sprintf("%s LRP class %d ε = %v", at, k, eps)
		if (eN == nil) != (eS == nil) {
			t.Errorf("%s: errors %v and %v", where, eN, eS)
			continue
		}
		if eN != nil {
			continue // a zero denominator with ε = 0, on both
		}
		if s := firstDiff(append(gN, relBits(oN)...), append(gS, relBits(oS)...)); s != "" {
			t.Errorf("%s: relevances and shares: %s", where, s)
		}
		clear(gS)
		y, class, oC, err := r.LRPChosenContext(ctx, xs, choose, eps, 0, gS)
		if err != nil {
			t.Fatalf("%s LRPChosenContext: %v", where, err)
		}
		if s := firstDiff(append(gN, relBits(oN)...), append(gS, relBits(oC)...)) + firstDiff(yN, y); s != "" || class != k {
			t.Errorf("%s LRPChosenContext (class %d): %s", where, class, s)
		}
	}
}

// TestModelOneHotSameBits runs the white-box networks (one-layer models
// with the rule cell.LRPHao) on their one-hot input and checks the
// engine's passes against their definitions, bit for bit: the logits
// (Forward, Logits); every class's gradient and LRP against the same on
// the one-hot rows made dense; every class at once against one class at
// a time; occlusion against one Forward per occluded copy; and Integrated
// Gradients (one class and every class), with whole traces, checkpoints,
// several workers and lane caps, against the single gradients of the
// α-scaled copies weighted and summed in blocks of 16 steps with one
// fused multiply-add per term, as the engine sums each lane's W_ihᵀ·dz_k
// on one-hot input. The golden files of package attrib pin the bits
// themselves.
func TestModelOneHotSameBits(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 2))
	const m = 50
	alphas, weights := make([]float64, m), make([]float64, m)
	for i := range m {
		alphas[i], weights[i] = (float64(i)+0.5)/m, 1.0/m
	}
	opts := []cell.RunOptions{
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
		st := wb.Model
		if st.LRPRule() != cell.LRPHao {
			t.Errorf("%s: LRP rule %v, want hao", name, st.LRPRule())
		}
		r, err := cell.NewRunner(st)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		ref, err := cell.NewRunner(st) // the single passes the batches are checked against
		if err != nil {
			t.Fatal(err)
		}
		defer ref.Close()
		d, c := st.Input(), st.Classes()
		lengths, runOpts := []int{1, 3, 17, 120, 333}, opts
		if testing.Short() { // under qemu (CI's arm64 run) the full test takes minutes
			lengths, runOpts = []int{3, 120}, []cell.RunOptions{opts[2], opts[4]}
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
			yN, err := ref.Forward(x)
			if err != nil {
				t.Fatal(err)
			}
			yN = append([]float64(nil), yN...)
			yL := make([]float64, c)
			if err := r.Logits(x, yL); err != nil {
				t.Fatal(err)
			}
			if s := firstDiff(yN, yL); s != "" {
				t.Errorf("%s Logits: %s", at, s)
			}
			rows, err := x.AppendDense(nil, d)
			if err != nil {
				t.Fatal(err)
			}
			xd := cell.Dense(rows, steps)
			gN, gS := make([]float64, steps*d), make([]float64, steps*d)
			for k := range c {
				sameGradientAndLRP(t, at, r, x, xd, k, gN, gS)
			}
			// Every class at once against one class at a time.
			allS := make([][]float64, c)
			for q := range c {
				allS[q] = make([]float64, steps*d)
			}
			if _, err := r.GradientAll(ctx, x, allS); err != nil {
				t.Fatal(err)
			}
			for q := range c {
				if _, err := ref.Gradient(x, q, gN); err != nil {
					t.Fatal(err)
				}
				if s := firstDiff(gN, allS[q]); s != "" {
					t.Errorf("%s GradientAll class %d: %s", at, q, s)
				}
			}
			relsS := make([]cell.Relevance, c)
			if _, err := r.LRPAll(ctx, x, cell.DefaultEpsilon, 0, allS, relsS); err != nil {
				t.Fatal(err)
			}
			for q := range c {
				o, err := ref.LRP(x, q, cell.DefaultEpsilon, 0, gN)
				if err != nil {
					t.Fatal(err)
				}
				if s := firstDiff(append(gN, relBits(o)...), append(allS[q], relBits(relsS[q])...)); s != "" {
					t.Errorf("%s LRPAll class %d: %s", at, q, s)
				}
			}
			if _, err := r.LRP(x, 0, cell.DefaultEpsilon, 1, gS); err == nil {
				t.Errorf("%s: LRP with bias factor 1 under the rule hao: no error", at)
			}
			// Occlusion: one Forward per occluded copy.
			occAllN := make([][]float64, c)
			for q := range c {
				occAllN[q] = make([]float64, steps)
			}
			for p := range steps {
				sym := append([]int(nil), x.Symbols()...)
				sym[p] = -1
				yo, err := ref.Forward(cell.ScaledOneHot(sym, x.Scale()))
				if err != nil {
					t.Fatal(err)
				}
				for q := range c {
					occAllN[q][p] = yo[q]
				}
			}
			occS := make([]float64, steps)
			if err := r.Occlusion(ctx, x, c-1, occS, cell.RunOptions{Workers: 2}); err != nil {
				t.Fatal(err)
			}
			if s := firstDiff(occAllN[c-1], occS); s != "" {
				t.Errorf("%s Occlusion: %s", at, s)
			}
			occAllS := make([][]float64, c)
			for q := range c {
				occAllS[q] = make([]float64, steps)
			}
			if err := r.OcclusionAll(ctx, x, occAllS, cell.RunOptions{Workers: 3}); err != nil {
				t.Fatal(err)
			}
			for q := range c {
				if s := firstDiff(occAllN[q], occAllS[q]); s != "" {
					t.Errorf("%s OcclusionAll class %d: %s", at, q, s)
				}
			}
			// IG: the blocked sums of single gradients, every class.
			igN := make([][]float64, c)
			for q := range c {
				igN[q] = blockSum(t, ref, x, q, alphas, weights)
			}
			yB, y0B := make([]float64, c), make([]float64, c)
			copy(yB, yN)
			y0, err := ref.Forward(x.Scaled(0))
			if err != nil {
				t.Fatal(err)
			}
			copy(y0B, y0)
			for _, opt := range runOpts {
				opt.Budget *= st.TraceBytes(steps) + 64<<10
				where := fmt.Sprintf("%s %+v", at, opt)
				k := steps % c
				choose := func([]float64) (int, error) { return k, nil }
				y, y0 := make([]float64, c), make([]float64, c)
				if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, gS, y, y0, opt); err != nil {
					t.Fatalf("%s IG: %v", where, err)
				}
				if s := firstDiff(append(igN[k], append(yB, y0B...)...), append(gS, append(y, y0...)...)); s != "" {
					t.Errorf("%s IG class %d: %s", where, k, s)
				}
				if steps > 120 && opt.Budget == 0 {
					continue // IntegratedGradientsAll: whole traces of every class
				}
				allS := make([][]float64, c)
				for q := range c {
					allS[q] = make([]float64, steps*d)
				}
				if err := r.IntegratedGradientsAll(ctx, x, alphas, weights, allS, y, y0, opt); err != nil {
					t.Fatalf("%s IG all: %v", where, err)
				}
				for q := range c {
					if s := firstDiff(igN[q], allS[q]); s != "" {
						t.Errorf("%s IG all, class %d: %s", where, q, s)
					}
				}
			}
		}
	}
}

// blockSum is Σ_k weights[k]·∇ŷ_class(alphas[k]·x) from single gradients,
// summed in blocks of 16 steps, one fused multiply-add per term within a
// block, the blocks added in order: what IG's batches compute on one-hot
// input.
func blockSum(t *testing.T, r *cell.Runner, x cell.Input, class int, alphas, weights []float64) []float64 {
	t.Helper()
	const block = 16
	n := x.Len() * r.Model().Input()
	sum, part, g := make([]float64, n), make([]float64, n), make([]float64, n)
	for b0 := 0; b0 < len(alphas); b0 += block {
		clear(part)
		for k := b0; k < min(b0+block, len(alphas)); k++ {
			if _, err := r.Gradient(x.Scaled(alphas[k]), class, g); err != nil {
				t.Fatal(err)
			}
			for i := range g {
				part[i] = math.FMA(weights[k], g[i], part[i])
			}
		}
		for i := range part {
			sum[i] += part[i]
		}
	}
	return sum
}

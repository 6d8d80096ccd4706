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

// sameGradientAndLRP checks that the Network n on x and the runner r of
// its AsStacked form on xs (x, or its rows made dense) give class k's
// gradient and LRP (ε = DefaultEpsilon and 0: the same errors, else the
// relevances, output, bias and initial shares) with the same bits, and so
// do GradientChosenContext and LRPChosenContext with the class k chosen
// from the logits; gN and gS are T×D scratch.
func sameGradientAndLRP(t *testing.T, at string, n *cell.Network, ws *cell.Workspace, x cell.Input, r *cell.StackedRunner, xs cell.Input, k int, gN, gS []float64) {
	t.Helper()
	if _, err := n.Gradient(ws, x, k, gN); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Gradient(xs, k, gS); err != nil {
		t.Fatal(err)
	}
	if s := firstDiff(gN, gS); s != "" {
		t.Errorf("%s Gradient class %d: %s", at, k, s)
	}
	yN, err := n.Forward(ws, x)
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
		oN, eN := n.LRP(ws, x, k, eps, gN)
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

// TestAsStackedSameBits runs the white-box networks on both engines, the
// Network on one-hot input and its AsStacked form on the same input made
// dense (AppendDense), and compares the bits. The same bits: the logits,
// every class's gradient, LRP's input relevances (ε > 0, and ε = 0 where
// both engines return them) and Integrated Gradients' sums where the
// Network too reads the dense rows. Known differences, checked as such:
//   - IG on one-hot input: the Network adds each step's gradient
//     W_xᵀ·dz_k, weighted, to its block's sum (gradient.go, GradientSum;
//     batch_ig.go, stepBackward and laneSums), the Stacked engine adds
//     the weighted dz_k and multiplies the block's sum by W_ihᵀ once
//     (stacked_backward.go, sink; stacked_batch.go, chunk): the last bits
//     differ wherever a W_x column has a weight that is not a power of
//     two (counting's ±u = ±0.5 are; sp-counter's, sp-fsa's and
//     bracket's are not). The Network's dense path sums dz as Stacked does.
//
// LRP keeps the Network's definition on AsStacked models (Stacked.netLRP):
// the decoder divides ŷ_c by z_c = W_y·h (b_y left out; an imported
// model's by ŷ_c, as Arras et al.), and Relevance.Bias is Σ b_g·q_g; with
// ε = 0 a class with a zero row of W_y and b_y ≠ 0 (counting's and
// sp-counter's class 0) is an error on both.
func TestAsStackedSameBits(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 1))
	const m = 50 // IG steps: four blocks of 16, the last short
	alphas, weights := make([]float64, m), make([]float64, m)
	for i := range m {
		alphas[i], weights[i] = (float64(i)+0.5)/m, 1.0/m
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
		b := cell.NewBatcher(n)
		defer b.Close()
		ws := cell.NewWorkspace(n)
		d, c := n.Input(), n.Classes()
		inputs := [][]int{{0}, {0, 0, 1}, {1, 1}}
		for range 5 {
			syms := make([]int, 1+rng.IntN(40))
			for i := range syms {
				syms[i] = rng.IntN(d)
			}
			inputs = append(inputs, syms)
		}
		oneHotIGDiffs := 0
		for _, syms := range inputs {
			steps := len(syms)
			x := cell.OneHot(syms)
			dense, err := x.AppendDense(nil, d)
			if err != nil {
				t.Fatal(err)
			}
			xd := cell.Dense(dense, steps)
			at := fmt.Sprintf("%s %v", name, syms)
			yN, err := n.Forward(ws, x)
			if err != nil {
				t.Fatal(err)
			}
			yN = append([]float64(nil), yN...)
			yS, err := r.Forward(xd)
			if err != nil {
				t.Fatal(err)
			}
			if s := firstDiff(yN, yS); s != "" {
				t.Errorf("%s Forward: %s", at, s)
			}
			gN, gS := make([]float64, steps*d), make([]float64, steps*d)
			for k := range c {
				sameGradientAndLRP(t, at, n, ws, x, r, xd, k, gN, gS)
				// IG: the Stacked engine, and the Batcher on the dense rows
				// (the same bits) and on the one-hot input (close).
				y, y0 := make([]float64, c), make([]float64, c)
				choose := func([]float64) (int, error) { return k, nil }
				if err := r.IntegratedGradients(ctx, xd, choose, alphas, weights, gS, y, y0, cell.BatchOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := b.GradientSum(ctx, xd, k, alphas, weights, gN, cell.BatchOptions{}); err != nil {
					t.Fatal(err)
				}
				if s := firstDiff(gN, gS); s != "" {
					t.Errorf("%s IG class %d, the Network on dense rows: %s", at, k, s)
				}
				yB, y0B := make([]float64, c), make([]float64, c)
				if err := b.IntegratedGradients(ctx, x, choose, alphas, weights, gN, yB, y0B, cell.BatchOptions{}); err != nil {
					t.Fatal(err)
				}
				if s := firstDiff(append(yB, y0B...), append(y, y0...)); s != "" {
					t.Errorf("%s IG class %d, logits of x and 0: %s", at, k, s)
				}
				for i := range gN {
					if math.Float64bits(gN[i]) != math.Float64bits(gS[i]) {
						oneHotIGDiffs++
					}
					if math.Abs(gN[i]-gS[i]) > 1e-13*math.Abs(gS[i]) {
						t.Errorf("%s IG class %d, the Network on one-hot input: [%d] %v, Stacked %v", at, k, i, gN[i], gS[i])
					}
				}
			}
		}
		if name == "counting" && oneHotIGDiffs > 0 {
			t.Errorf("counting: %d IG values differ in their last bits; its weights ±0.5 should give the same", oneHotIGDiffs)
		}
		t.Logf("%s: %d IG values of the one-hot Network differ from Stacked's in their last bits", name, oneHotIGDiffs)
	}
}

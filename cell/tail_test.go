package cell

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestTailPlan: IG on one worker over budgets from the least upwards, on a
// 2-layer bidirectional and a 1-layer model, with step counts whose last
// block is short (50, 35) or whole (48): the plans whose last chunk
// carries the short block (runPlan.tail) give the bits of the whole
// trace, and some budget chooses one wherever a block is short, both on
// checkpoints and on the whole trace. A weight of 0 keeps the narrow
// whole-trace plans (narrowWhole) out, which would take the checkpoints'
// budgets.
func TestTailPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 55))
	ctx := context.Background()
	choose := func([]float64) (int, error) { return 2, nil }
	last := seePlans(t)
	cases, ns, grow := []headCase{{2, true, HeadMean, ActNone}, {1, false, HeadLast, ActTanh}}, []int{50, 35, 48}, int64(17) // budgets grow by grow/16
	if testing.Short() {                                                                                                     // emulated (qemu), the whole test takes 15 minutes
		cases, ns, grow = cases[:1], []int{50, 48}, 32
	}
	for _, c := range cases {
		s := withZeroWeight(t, randomHeadStacked(t, rng, 5, 24, 3, c))
		r, _ := NewRunner(s)
		const steps = 40
		x := randomStackedInput(rng, steps, 5)
		for _, n := range ns {
			alphas, weights := midpointRule(n)
			want := make([]float64, steps*5+6)
			if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, want[:steps*5], want[steps*5:steps*5+3], want[steps*5+3:], RunOptions{Workers: 1}); err != nil {
				t.Fatal(err)
			}
			tails := [2]int{} // on the whole trace, on checkpoints
			for budget := int64(32 << 10); budget < 16<<20; budget = budget * grow / 16 {
				got := make([]float64, steps*5+6)
				err := r.IntegratedGradients(ctx, x, choose, alphas, weights, got[:steps*5], got[steps*5:steps*5+3], got[steps*5+3:], RunOptions{Budget: budget, Workers: 1})
				if errors.As(err, new(*BudgetError)) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if last.tail > 0 {
					if last.ck {
						tails[1]++
					} else {
						tails[0]++
					}
					if last.tail != n%igBlock || last.lanes < igBlock+last.tail || last.workers != 1 {
						t.Errorf("%v n=%d budget %d: plan %+v: want a tail of %d lanes in batches that hold it", c, n, budget, *last, n%igBlock)
					}
				}
				assertSameBits(t, fmt.Sprintf("%v n=%d budget %d plan %+v", c, n, budget, *last), got, want)
			}
			short := n%igBlock != 0
			if (tails[1] > 0) != short || !testing.Short() && (tails[0] > 0) != short {
				t.Errorf("%v n=%d: budgets that chose a plan with a tail: %d on the whole trace, %d on checkpoints", c, n, tails[0], tails[1])
			}
		}
		r.Close()
	}
}

// TestTailPlanChoice: tailPlan takes a short last block into the batch of
// the chunk before it only on one worker's chunks of one batch each
// (checkpointed or on the whole trace), where the lanes fit.
func TestTailPlanChoice(t *testing.T) {
	yes := func(runPlan) bool { return true }
	ck := runPlan{workers: 1, lanes: 16, ck: true}
	for _, c := range []struct {
		name                 string
		p                    runPlan
		n, per, chunks, most int
		fits                 func(runPlan) bool
		lanes, tail          int // 0: none
	}{
		{"50 steps in 16-lane batches", ck, 50, 1, 4, 64, yes, 18, 2},
		{"35 steps in 16-lane batches", ck, 35, 1, 3, 64, yes, 19, 3},
		{"lanes to spare", runPlan{workers: 1, lanes: 20, ck: true}, 50, 1, 4, 64, yes, 20, 2},
		{"two blocks a chunk", runPlan{workers: 1, lanes: 32, ck: true}, 40, 2, 2, 64, yes, 40, 8},
		{"whole blocks", ck, 48, 1, 3, 64, yes, 0, 0},
		{"a last chunk of a block and more", runPlan{workers: 1, lanes: 32, ck: true}, 50, 2, 2, 64, yes, 0, 0},
		{"the whole trace", runPlan{workers: 1, lanes: 16}, 50, 1, 4, 64, yes, 18, 2},
		{"the whole trace, two blocks a chunk", runPlan{workers: 1, lanes: 32}, 40, 2, 2, 64, yes, 40, 8},
		{"two workers", runPlan{workers: 2, lanes: 16, ck: true}, 50, 1, 4, 64, yes, 0, 0},
		{"split lanes", runPlan{workers: 1, lanes: 16, ck: true, split: true}, 50, 1, 4, 64, yes, 0, 0},
		{"batches of 8", runPlan{workers: 1, lanes: 8, ck: true}, 50, 1, 4, 64, yes, 0, 0},
		{"one chunk", ck, 14, 1, 1, 64, yes, 0, 0},
		{"over the budget", ck, 50, 1, 4, 64, func(runPlan) bool { return false }, 0, 0},
		{"over Lanes", ck, 50, 1, 4, 17, yes, 0, 0},
	} {
		q, ok := tailPlan(c.p, c.n, c.per, c.chunks, c.most, c.fits)
		if ok != (c.tail > 0) || ok && (q.lanes != c.lanes || q.tail != c.tail) || !ok && q != c.p {
			t.Errorf("%s: %+v, %v; want %d lanes, a tail of %d", c.name, q, ok, c.lanes, c.tail)
		}
	}
}

// TestTailPlanAllClasses: IG of every class over budgets from the least
// upwards, with a short last block (50 steps): each class's sum and both
// logits have the bits of one-class calls on the whole trace, on the
// budgets whose whole-trace plans carry the short block (the classes share
// each batch's forward pass, and the last batch carries the short block's
// sums of every class) or run narrow batches (narrowWhole) as on the
// others.
func TestTailPlanAllClasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 77))
	ctx := context.Background()
	s := randomHeadStacked(t, rng, 5, 24, 3, headCase{2, true, HeadMean, ActNone})
	r := mustRunner(t, s)
	const steps = 40
	x := randomStackedInput(rng, steps, 5)
	alphas, weights := midpointRule(50)
	want, wy, wy0 := perClass(3, steps*5), make([]float64, 3), make([]float64, 3)
	for c := range 3 {
		choose := func([]float64) (int, error) { return c, nil }
		if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, want[c], wy, wy0, RunOptions{Workers: 1}); err != nil {
			t.Fatal(err)
		}
	}
	last := seePlans(t)
	tails, narrow, grow := 0, 0, int64(9) // budgets grow by grow/8
	if testing.Short() {                  // emulated (qemu)
		grow = 16
	}
	for budget := int64(32 << 10); budget < 16<<20; budget = budget * grow / 8 {
		got, y, y0 := perClass(3, steps*5), make([]float64, 3), make([]float64, 3)
		err := r.IntegratedGradientsAll(ctx, x, alphas, weights, got, y, y0, RunOptions{Budget: budget, Workers: 1})
		if errors.As(err, new(*BudgetError)) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if last.tail > 0 && !last.ck {
			tails++
		}
		if !last.ck && last.lanes == narrowLanes {
			narrow++
		}
		for c := range 3 {
			assertSameBits(t, fmt.Sprintf("budget %d plan %+v class %d", budget, *last, c), got[c], want[c])
		}
		assertSameBits(t, fmt.Sprintf("budget %d y", budget), y, wy)
		assertSameBits(t, fmt.Sprintf("budget %d y0", budget), y0, wy0)
	}
	if (tails == 0 || narrow == 0) && !testing.Short() {
		t.Errorf("budgets that chose a whole-trace plan carrying the short block: %d, narrow whole-trace plans (narrowWhole): %d; want some of each", tails, narrow)
	}
}

package cell

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestKeptBoundaries: checkpointed plans that keep the layers' boundaries
// (runPlan.keep) on models of 2 and 3 layers, one and two directions, every
// head: IG and occlusion give the bits of the whole trace; the plan keeps
// them where it fits and recomputes where it does not.
func TestKeptBoundaries(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 13))
	ctx := context.Background()
	choose := func([]float64) (int, error) { return 1, nil }
	for _, layers := range []int{2, 3} {
		for _, bi := range []bool{false, true} {
			for _, head := range Heads() {
				c := headCase{layers, bi, head, ActTanh}
				s := randomHeadStacked(t, rng, 5, 7, 3, c)
				for _, steps := range []int{1, 9, 26} {
					x := randomStackedInput(rng, steps, 5)
					alphas, weights := midpointRule(21)
					r, _ := NewRunner(s)
					want := make([]float64, steps*5+6)
					if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, want[:steps*5], want[steps*5:steps*5+3], want[steps*5+3:], RunOptions{}); err != nil {
						t.Fatal(err)
					}
					wantOcc := make([]float64, steps)
					if err := r.Occlusion(ctx, x, 2, wantOcc, RunOptions{}); err != nil {
						t.Fatal(err)
					}
					restore := forceCheckpoints()
					if p, err := r.igPlan(steps, 21, DefaultBudget, 1, maxBatchLanes, func(runPlan) int64 { return 0 }); err != nil || !p.ck || !p.keep {
						t.Errorf("%v T=%d: plan %+v, %v: want checkpoints that keep the boundaries", c, steps, p, err)
					}
					for _, opt := range []RunOptions{{Workers: 1}, {Workers: 2}, {Lanes: 16, Workers: 2}, {Lanes: 5, Workers: 3}, {Workers: 4}} {
						name := fmt.Sprintf("%v T=%d %+v", c, steps, opt)
						got := make([]float64, steps*5+6)
						if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, got[:steps*5], got[steps*5:steps*5+3], got[steps*5+3:], opt); err != nil {
							t.Fatal(err)
						}
						assertSameBits(t, name+" IG", got, want)
						occ := make([]float64, steps)
						if err := r.Occlusion(ctx, x, 2, occ, opt); err != nil {
							t.Fatal(err)
						}
						assertSameBits(t, name+" occlusion", occ, wantOcc)
					}
					// A budget that holds checkpoints but not the boundaries.
					if steps == 26 {
						seg, nseg := segments(steps)
						budget := s.ckLaneBytes(keepLeast, seg, nseg, true) - 1 // the fewest lanes that keep them
						if s.ckLaneBytes(1, seg, nseg, false) > budget {
							t.Fatalf("%v: budget %d does not hold a lane that recomputes", c, budget)
						}
						none := func(runPlan) int64 { return 0 }
						if p, err := r.igPlan(steps, 21, budget, 1, maxBatchLanes, none); err != nil || !p.ck || p.keep {
							t.Errorf("%v T=%d budget %d: plan %+v, %v: want checkpoints that recompute", c, steps, budget, p, err)
						}
					}
					restore()
					r.Close()
				}
			}
		}
	}
}

// TestKeptPlansSameBits: IG on a 2-layer bidirectional model with budgets
// from the least upwards, two workers: every plan IG chooses (kept
// boundaries on every worker, split lanes, one worker, the whole trace)
// gives the bits of the whole trace, and the kept plans are among them.
func TestKeptPlansSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 44))
	choose := func([]float64) (int, error) { return 0, nil }
	s := randomHeadStacked(t, rng, 5, 24, 3, headCase{2, true, HeadMean, ActNone})
	const steps, n = 60, 50
	x := randomStackedInput(rng, steps, 5)
	alphas, weights := midpointRule(n)
	r, _ := NewRunner(s)
	defer r.Close()
	want, err := igOut(r, x, choose, alphas, weights, RunOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var last runPlan
	planSeen = func(p runPlan) { last = p }
	defer func() { planSeen = nil }()
	for budget := int64(64 << 10); budget < 64<<20; budget = budget * 9 / 8 {
		got, err := igOut(r, x, choose, alphas, weights, RunOptions{Budget: budget, Workers: 2})
		if errors.As(err, new(*BudgetError)) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		kind := fmt.Sprintf("ck %v keep %v split %v workers %d", last.ck, last.keep, last.split, last.workers)
		seen[kind] = true
		assertSameBits(t, fmt.Sprintf("budget %d, %s", budget, kind), got, want)
	}
	for _, k := range []string{"ck true keep true split false workers 2", "ck true keep true split true workers 2", "ck false keep false split false workers 2"} {
		if !seen[k] {
			t.Errorf("no budget gave the plan %q; seen %v", k, seen)
		}
	}
}

// igOut runs r's IG on the dense input x (T×E) and returns the input
// gradient, then the logits of x and of the baseline, in one slice.
func igOut(r *Runner, x Input, choose func([]float64) (int, error), alphas, weights []float64, opt RunOptions) ([]float64, error) {
	n := x.Len() * r.s.in
	c := r.s.c
	out := make([]float64, n+2*c)
	err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, out[:n], out[n:n+c], out[n+c:], opt)
	return out, err
}

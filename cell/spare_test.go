package cell

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestSpare: RunOptions.Spare lets IG and occlusion plan with more memory
// (a budget that checkpoints, with the spare the whole trace), the bits
// unchanged; an input refused within Budget stays refused whatever Spare.
func TestSpare(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	ctx := context.Background()
	choose := func([]float64) (int, error) { return 1, nil }
	s := randomStacked(t, rng, 6, 16, 2, true, 3, 1, true)
	const steps, n = 120, 20
	x := randomStackedInput(rng, steps, 6)
	alphas, weights := midpointRule(n)
	r, err := NewRunner(s)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	igCk := false // whether IG's last plan checkpointed
	run := func(opt RunOptions) ([]float64, []float64, error) {
		ig := make([]float64, steps*6+6)
		if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, ig[:steps*6], ig[steps*6:steps*6+3], ig[steps*6+3:], opt); err != nil {
			return nil, nil, err
		}
		igCk = r.pool[0].r.ck != nil
		occ := make([]float64, steps)
		err := r.Occlusion(ctx, x, 2, occ, opt)
		return ig, occ, err
	}
	wantIG, wantOcc, err := run(RunOptions{Budget: 1 << 30, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The least budget of a checkpointed lane, and one that checkpoints.
	least := int64(0)
	if _, _, err := run(RunOptions{Budget: 1, Workers: 1}); !errors.As(err, new(*BudgetError)) {
		t.Fatalf("a budget of 1 byte: %v, want a *BudgetError", err)
	} else {
		var be *BudgetError
		errors.As(err, &be)
		least = be.Need
	}
	small := 2 * least
	limit := s.planCost(newPlan(steps, n, 1, n, false), steps, func(runPlan) int64 { return 0 })
	if small >= limit {
		t.Fatalf("budget %d does not checkpoint (the whole trace takes %d)", small, limit)
	}
	for _, opt := range []RunOptions{{Budget: small, Workers: 1}, {Budget: small, Spare: 1 << 30, Workers: 1}, {Budget: small, Spare: 1 << 30, Workers: 2}, {Budget: small, Spare: small, Workers: 2}} {
		ig, occ, err := run(opt)
		if err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		name := fmt.Sprintf("%+v", opt)
		if igCk != (opt.Spare < 1<<30) {
			t.Errorf("%s: IG's lanes checkpointed %v", name, igCk)
		}
		assertSameBits(t, name+" IG", ig, wantIG)
		assertSameBits(t, name+" occlusion", occ, wantOcc)
	}
	// The plan IG makes with the spare memory: the whole trace.
	if p, err := r.igPlan(steps, n, small+(1<<30), 1, maxBatchLanes, func(runPlan) int64 { return 0 }); err != nil || p.ck {
		t.Errorf("with 1 GiB spare: plan %+v, %v; want the whole trace", p, err)
	}
	for _, spare := range []int64{least, 1 << 30} {
		if _, _, err := run(RunOptions{Budget: least / 2, Spare: spare, Workers: 1}); !errors.As(err, new(*BudgetError)) {
			t.Errorf("budget %d, spare %d: %v, want the *BudgetError of Budget alone", least/2, spare, err)
		}
	}
	if _, _, err := run(RunOptions{Spare: -1}); err == nil {
		t.Error("Spare −1: no error")
	}
}

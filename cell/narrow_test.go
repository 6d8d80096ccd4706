package cell

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// seePlans makes planSeen keep the plan of each IG call, until the end of
// the test.
func seePlans(t *testing.T) *runPlan {
	last := new(runPlan)
	planSeen = func(p runPlan) { *last = p }
	t.Cleanup(func() { planSeen = nil })
	return last
}

// withZeroWeight is s with its first recurrent weight 0, so that its
// weights are not all without ±0 (Model.nonzero false).
func withZeroWeight(t testing.TB, s *Model) *Model {
	t.Helper()
	p := s.Params()
	p.Cells[0].Whh[0] = 0
	z, err := NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	if z.nonzero {
		t.Fatal("a weight of 0, and Model.nonzero still set")
	}
	return z
}

// TestNarrowWholePlan: IG on one worker over budgets from the least
// upwards: the narrow whole-trace plans (narrowWhole: 8 lanes where the
// budget holds them and would otherwise checkpoint) give the bits of the
// whole trace, some budget chooses one on an LSTM whose weights hold no
// ±0, of two bidirectional layers or one, and none does on a GRU or on an
// LSTM with a weight of 0; two workers get the same bits.
func TestNarrowWholePlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 88))
	ctx := context.Background()
	choose := func([]float64) (int, error) { return 1, nil }
	last := seePlans(t)
	two, one := headCase{2, true, HeadMean, ActNone}, headCase{1, false, HeadLast, ActTanh}
	lstm2 := randomHeadStacked(t, rng, 5, 24, 3, two)
	cases := []struct {
		name    string
		s       *Model
		workers int
		narrow  int // 1: some budget chooses a narrow plan, 0: none, −1: either
	}{
		{"2-layer BiLSTM", lstm2, 1, 1},
		{"1-layer LSTM", randomHeadStacked(t, rng, 5, 24, 3, one), 1, 1},
		{"2-layer BiLSTM, a weight of 0", withZeroWeight(t, lstm2), 1, 0},
		{"2-layer BiGRU", randomGRU(t, rng, 5, 24, 3, two, 0.5, true), 1, 0},
		{"2-layer BiLSTM, two workers", lstm2, 2, -1},
	}
	grow := int64(17) // budgets grow by grow/16
	if testing.Short() {
		cases, grow = cases[:1], 24
	}
	const steps = 40
	x := randomStackedInput(rng, steps, 5)
	alphas, weights := midpointRule(50)
	for _, c := range cases {
		r := mustRunner(t, c.s)
		want := make([]float64, steps*5+6)
		if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, want[:steps*5], want[steps*5:steps*5+3], want[steps*5+3:], RunOptions{Workers: 1}); err != nil {
			t.Fatal(err)
		}
		narrow := 0
		for budget := int64(32 << 10); budget < 16<<20; budget = budget * grow / 16 {
			got := make([]float64, steps*5+6)
			err := r.IntegratedGradients(ctx, x, choose, alphas, weights, got[:steps*5], got[steps*5:steps*5+3], got[steps*5+3:], RunOptions{Budget: budget, Workers: c.workers})
			if errors.As(err, new(*BudgetError)) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if !last.ck && last.lanes == narrowLanes {
				narrow++
				if last.workers != 1 || last.team > 1 {
					t.Errorf("%s budget %d: plan %+v: a narrow plan on more than one worker", c.name, budget, *last)
				}
			}
			assertSameBits(t, fmt.Sprintf("%s budget %d plan %+v", c.name, budget, *last), got, want)
		}
		if c.narrow >= 0 && (narrow > 0) != (c.narrow == 1) {
			t.Errorf("%s: %d budgets chose the narrow whole trace, want some: %v", c.name, narrow, c.narrow == 1)
		}
	}
}

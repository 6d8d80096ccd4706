package cell

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// A team's row split gives mulAddLanes' bits for every number of parts.
func TestTeamRowsSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, c := range []struct{ m, k, l int }{{40, 13, 1}, {128, 32, 7}, {33, 50, 64}} {
		a := make([]float64, c.m*(c.k+3))
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		aT := transpose(a, c.m, c.k+3)
		src := make([]float64, c.k*c.l)
		for i := range src {
			src[i] = rng.NormFloat64()
		}
		want := make([]float64, c.m*c.l)
		mulAddLanes(want, a, aT, c.m, c.k, c.k+3, 2, src, c.l)
		for _, n := range []int{2, 3, 5, 16} {
			tm := newTeam(n)
			got := make([]float64, c.m*c.l)
			tm.mulAdd(got, a, aT, c.m, c.k, c.k+3, 2, src, c.l)
			tm.stop()
			assertSameBits(t, fmt.Sprintf("%+v parts=%d", c, n), got, want)
		}
	}
}

// One input's batch on a team of goroutines (one worker, more cores):
// the bits of one goroutine, full trace and checkpoints, IG and occlusion.
func TestStackedTeamSameBits(t *testing.T) {
	defer func(on bool) { teamsOn = on }(teamsOn)
	teamsOn = true
	rng := rand.New(rand.NewPCG(27, 28))
	s := randomStacked(t, rng, 8, 32, 2, true, 3, 2, true)
	steps, n := 23, 37
	x := randomStackedInput(rng, steps, 8)
	alphas, weights := midpointRule(n)
	choose := func([]float64) (int, error) { return 0, nil }
	ctx := context.Background()
	r, _ := NewStackedRunner(s)
	defer r.Close()
	run := func(opt BatchOptions) ([]float64, []float64) {
		ig := make([]float64, steps*8+6)
		if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, ig[:steps*8], ig[steps*8:steps*8+3], ig[steps*8+3:], opt); err != nil {
			t.Fatal(err)
		}
		occ := make([]float64, steps)
		if err := r.Occlusion(ctx, x, 1, occ, BatchOptions{Workers: opt.Workers, Lanes: 64}); err != nil {
			t.Fatal(err)
		}
		return ig, occ
	}
	wantIG, wantOcc := run(BatchOptions{Workers: 1})
	for _, ck := range []bool{false, true} {
		if ck {
			defer forceCheckpoints()()
		}
		for _, w := range []int{1, 2, 3, 8} {
			ig, occ := run(BatchOptions{Workers: w})
			assertSameBits(t, fmt.Sprintf("checkpoints %v, %d workers: IG", ck, w), ig, wantIG)
			assertSameBits(t, fmt.Sprintf("checkpoints %v, %d workers: occlusion", ck, w), occ, wantOcc)
		}
	}
}

// One input's IG on a team allocates nothing in steady state.
func TestStackedTeamAllocs(t *testing.T) {
	defer func(on bool) { teamsOn = on }(teamsOn)
	teamsOn = true
	rng := rand.New(rand.NewPCG(29, 30))
	s := randomStacked(t, rng, 8, 64, 1, false, 3, 2, true)
	steps, n := 50, 50
	x := randomStackedInput(rng, steps, 8)
	alphas, weights := midpointRule(n)
	choose := func([]float64) (int, error) { return 0, nil }
	r, _ := NewStackedRunner(s)
	defer r.Close()
	ig := make([]float64, steps*8+6)
	f := func() {
		if err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, ig[:steps*8], ig[steps*8:steps*8+3], ig[steps*8+3:], BatchOptions{Workers: 2}); err != nil {
			t.Fatal(err)
		}
	}
	f()
	if a := testing.AllocsPerRun(20, f); a != 0 {
		t.Errorf("%v allocations per call", a)
	}
}

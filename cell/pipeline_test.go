package cell

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestPipelineSameBits: checkpointed IG on a team of two pipes (pipeline.go)
// wherever it may (kept boundaries, every head but attention, LSTM and
// GRU) and nowhere else, with wide input products (wide_inputs.go) or
// without, and gives the bits of the whole trace; so does a call cancelled
// mid-way followed by a whole one, and occlusion.
func TestPipelineSameBits(t *testing.T) {
	defer func(on bool, w, cpus, procs int) {
		teamsOn, teamMinWork, teamCPUs = on, w, cpus
		runtime.GOMAXPROCS(procs)
		pipeSeen = nil
	}(teamsOn, teamMinWork, teamCPUs, runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	teamCPUs = max(2, teamCPUs)
	rng := rand.New(rand.NewPCG(70, 71))
	ctx := context.Background()
	choose := func([]float64) (int, error) { return 1, nil }
	type pcase struct {
		c    headCase
		gru  bool
		pipe bool // pipes: kept boundaries, no attention
	}
	cases := []pcase{
		{headCase{2, true, HeadHN, ActNone}, false, true},
		{headCase{2, true, HeadMean, ActTanh}, false, true},
		{headCase{2, true, HeadMax, ActNone}, true, true},
		{headCase{3, true, HeadLast, ActNone}, false, true},
		{headCase{2, false, HeadHNBF, ActNone}, false, true},
		{headCase{1, true, HeadMean, ActNone}, false, false},
		{headCase{1, false, HeadHN, ActNone}, true, false},
		{headCase{2, true, HeadAttention, ActNone}, false, false},
	}
	if testing.Short() {
		cases = []pcase{cases[1], cases[2], cases[5], cases[7]}
	}
	var sweeps, dirs int
	pipeSeen = func(isDirs bool) {
		if isDirs {
			dirs++
		} else {
			sweeps++
		}
	}
	for _, pc := range cases {
		var s *Model
		switch {
		case pc.gru:
			s = randomGRU(t, rng, 4, 6, 3, pc.c, 1, true)
		case pc.c.head == HeadAttention:
			s = randomAttnStacked(t, rng, 4, 6, 3, attnCase{pc.c.layers, pc.c.bi, 3, true, ActTanh})
		default:
			s = randomHeadStacked(t, rng, 4, 6, 3, pc.c)
		}
		for _, steps := range []int{1, 7, 30} {
			x := randomStackedInput(rng, steps, 4)
			const n = 21
			alphas, weights := midpointRule(n)
			r, _ := NewRunner(s)
			want := make([]float64, steps*4+6)
			if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, want[:steps*4], want[steps*4:steps*4+3], want[steps*4+3:], RunOptions{Workers: 1}); err != nil {
				t.Fatal(err)
			}
			wantOcc := make([]float64, steps)
			if err := r.Occlusion(ctx, x, 2, wantOcc, RunOptions{Workers: 1}); err != nil {
				t.Fatal(err)
			}
			restore := forceCheckpoints()
			teamsOn, teamMinWork = true, 0
			for _, on := range []bool{true, false} {
				pipeOn, wideOn = on, on
				sweeps, dirs = 0, 0
				name := fmt.Sprintf("%v gru %v T=%d pipe %v", pc.c, pc.gru, steps, on)
				// A cancelled call first: what it leaves must not change the next.
				cctx, cancel := context.WithCancel(ctx)
				calls := 0
				pipeSeen = func(isDirs bool) {
					if calls++; calls == 3 {
						cancel()
					}
					if isDirs {
						dirs++
					} else {
						sweeps++
					}
				}
				got := make([]float64, steps*4+6)
				err := r.IntegratedGradients(cctx, x, choose, alphas, weights, got[:steps*4], got[steps*4:steps*4+3], got[steps*4+3:], RunOptions{Workers: 2})
				cancel()
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Fatalf("%s: cancelled call: %v", name, err)
				}
				err = r.IntegratedGradients(ctx, x, choose, alphas, weights, got[:steps*4], got[steps*4:steps*4+3], got[steps*4+3:], RunOptions{Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				assertSameBits(t, name+" IG", got, want)
				occ := make([]float64, steps)
				if err := r.Occlusion(ctx, x, 2, occ, RunOptions{Workers: 2}); err != nil {
					t.Fatal(err)
				}
				assertSameBits(t, name+" occlusion", occ, wantOcc)
				piped := sweeps > 0 || dirs > 0
				if wantPipe := on && pc.pipe && (steps > 1 || pc.c.bi); piped != wantPipe {
					t.Errorf("%s: %d pipelined sweeps, %d pipelined layers: want a pipeline %v", name, sweeps, dirs, wantPipe)
				}
				if on && pc.pipe && pc.c.bi && dirs == 0 {
					t.Errorf("%s: the directions never ran side by side", name)
				}
			}
			pipeOn, wideOn = true, true
			teamsOn, teamMinWork = false, 1<<22
			restore()
			r.Close()
		}
	}
}

// TestPipelinePlan: on two cores, IG on a long input whose checkpointed
// lanes keep the boundaries, too few for the steps' products to be worth
// a team, runs them on a team of two that pipes (pipesPlan), and gives
// the bits of one core; without pipelines the plan is another.
func TestPipelinePlan(t *testing.T) {
	twoCores(t)
	defer func() { planSeen, pipeSeen, pipeOn = nil, nil, true }()
	rng := rand.New(rand.NewPCG(72, 73))
	choose := func([]float64) (int, error) { return 0, nil }
	s := randomHeadStacked(t, rng, 5, 16, 3, headCase{2, true, HeadMean, ActNone})
	const steps, n = 300, 50
	x := randomStackedInput(rng, steps, 5)
	alphas, weights := midpointRule(n)
	r, _ := NewRunner(s)
	defer r.Close()
	want, err := igOut(r, x, choose, alphas, weights, RunOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	seg, nseg := segments(steps)
	budget := 3 * s.ckLaneBytes(igBlock/2, seg, nseg, true) / 2 // kept lanes, 8 to 11 of them
	var last runPlan
	planSeen = func(p runPlan) { last = p }
	piped := 0
	pipeSeen = func(bool) { piped++ }
	for _, on := range []bool{true, false} {
		pipeOn, piped = on, 0
		got, err := igOut(r, x, choose, alphas, weights, RunOptions{Workers: 2, Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		assertSameBits(t, fmt.Sprintf("pipelines %v, plan %+v", on, last), got, want)
		isPipe := last.ck && last.keep && last.team == 2 && last.workers == 1
		if isPipe != on || (piped > 0) != on {
			t.Errorf("pipelines %v: plan %+v, %d hand-overs", on, last, piped)
		}
	}
}

// twoCores lets the test's calls run on two cores and teams of two, even
// on one CPU, until it ends.
func twoCores(t *testing.T) {
	cpus, procs := teamCPUs, runtime.GOMAXPROCS(0)
	t.Cleanup(func() { teamCPUs = cpus; runtime.GOMAXPROCS(procs) })
	runtime.GOMAXPROCS(max(2, procs))
	teamCPUs = max(2, cpus)
}

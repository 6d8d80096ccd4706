package cell

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// A team's row split gives mulAddLanes' bits for every number of parts,
// with and without the kernel's scan for ±0 weights (nz: none here).
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
		mulAddLanes(want, a, aT, false, c.m, c.k, c.k+3, 2, src, c.l)
		got := make([]float64, c.m*c.l)
		mulAddLanes(got, a, aT, true, c.m, c.k, c.k+3, 2, src, c.l)
		assertSameBits(t, fmt.Sprintf("%+v nonzero", c), got, want)
		for _, n := range []int{2, 3, 5, 16} {
			for _, nz := range []bool{false, true} {
				tm := newTeam(n)
				got := make([]float64, c.m*c.l)
				tm.mulAdd(got, a, aT, nz, c.m, c.k, c.k+3, 2, src, c.l)
				tm.stop()
				assertSameBits(t, fmt.Sprintf("%+v parts=%d nonzero=%v", c, n, nz), got, want)
			}
		}
	}
}

// One input's batch on a team of goroutines (one worker, more cores; team
// steps, team_steps.go): the bits of one goroutine, on the whole
// trace and on checkpoints, for every head (a dense head sends each step's
// outputs a gradient), IG of one class and of every class, and occlusion.
func TestModelTeamSameBits(t *testing.T) {
	defer func(on bool, w int) { teamsOn, teamMinWork = on, w }(teamsOn, teamMinWork)
	// Teams of 3 and 8 on any machine (lend caps a team at GOMAXPROCS and
	// teamCPUs).
	defer func(cpus int) { teamCPUs = cpus }(teamCPUs)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	teamCPUs = 8
	rng := rand.New(rand.NewPCG(27, 28))
	cases := []headCase{{2, true, HeadHN, ActNone}, {1, false, HeadMean, ActTanh}, {1, true, HeadMax, ActNone}, {2, false, HeadLast, ActReLU},
		{1, false, HeadHN, ActNone}} // occlusion's ring lanes (ring.go)
	for _, c := range cases {
		s := randomHeadStacked(t, rng, 8, 32, 3, c)
		steps, n := 23, 37
		x := randomStackedInput(rng, steps, 8)
		alphas, weights := midpointRule(n)
		choose := func([]float64) (int, error) { return 0, nil }
		ctx := context.Background()
		r, _ := NewRunner(s)
		run := func(opt RunOptions) ([]float64, []float64) {
			ig := make([]float64, steps*8+6)
			if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, ig[:steps*8], ig[steps*8:steps*8+3], ig[steps*8+3:], opt); err != nil {
				t.Fatal(err)
			}
			all := make([]float64, 3*steps*8+6) // every class (whole trace only)
			grads := [][]float64{all[:steps*8], all[steps*8 : 2*steps*8], all[2*steps*8 : 3*steps*8]}
			if err := r.IntegratedGradientsAll(ctx, x, alphas, weights, grads, all[3*steps*8:3*steps*8+3], all[3*steps*8+3:], opt); err != nil {
				t.Fatal(err)
			}
			ig = append(ig, all...)
			occ := make([]float64, steps)
			if err := r.Occlusion(ctx, x, 1, occ, RunOptions{Workers: opt.Workers, Lanes: 64}); err != nil {
				t.Fatal(err)
			}
			return ig, occ
		}
		teamsOn, teamMinWork = false, 1<<22
		wantIG, wantOcc := run(RunOptions{Workers: 1})
		teamsOn, teamMinWork = true, 0
		for _, ck := range []bool{false, true} {
			restore := func() {}
			if ck {
				restore = forceCheckpoints()
			}
			for _, w := range []int{2, 3, 8} {
				ig, occ := run(RunOptions{Workers: w})
				assertSameBits(t, fmt.Sprintf("%v, checkpoints %v, %d workers: IG", c, ck, w), ig, wantIG)
				assertSameBits(t, fmt.Sprintf("%v, checkpoints %v, %d workers: occlusion", c, ck, w), occ, wantOcc)
				// Batches of 16 lanes taking turns on the team.
				ig, _ = run(RunOptions{Workers: w, Lanes: 16})
				assertSameBits(t, fmt.Sprintf("%v, checkpoints %v, %d workers, batches of 16 lanes: IG", c, ck, w), ig, wantIG)
			}
			restore()
		}
		r.Close()
	}
}

// IG plans a team for a dense model's batch when cores are spare: on the
// whole trace where it holds every lane, else on checkpoints, in one
// batch where it holds every lane and in turns where it does not; not
// with one core or one lane a batch.
func TestTeamPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	s := randomStacked(t, rng, 8, 256, 1, false, 3, 2, true)
	r, _ := NewRunner(s)
	defer r.Close()
	none := func(runPlan) int64 { return 0 }
	p, err := r.igPlan(200, 50, 1<<30, 2, 64, none)
	if err != nil || p.team != 2 || p.workers != 1 || p.ck {
		t.Errorf("H = 256, 2 workers: plan %+v, %v; want one worker's whole trace on a team of 2", p, err)
	}
	// 1,000 steps: the whole trace of 16 lanes (230 MB) fits 400 MiB; of
	// 50 lanes or of 16 lanes for each of two workers does not.
	if one := s.laneBytes(16, 1000, false); one > 400<<20 || 2*one+s.sharedBytes(p, 1000) <= 400<<20 {
		t.Fatalf("16 lanes' whole trace %d bytes: the case needs one batch of 16 within 400 MiB, not two", one)
	}
	p, err = r.igPlan(1000, 50, 400<<20, 2, 64, none)
	if err != nil || p.team != 2 || p.workers != 1 || !p.ck || p.lanes < 50 {
		t.Errorf("H = 256, 1,000 steps, 2 workers: plan %+v, %v; want one worker's 50 checkpointed lanes on a team of 2", p, err)
	}
	// A budget whose checkpointed batch holds fewer lanes than steps: the
	// batches take turns on the team (two workers' would not fit).
	p, err = r.igPlan(200, 50, 8<<20, 2, 64, none)
	if err != nil || p.team != 2 || p.workers != 1 || !p.ck || p.lanes >= 50 || p.lanes < 2 {
		t.Errorf("H = 256, 200 steps, 8 MiB, 2 workers: plan %+v, %v; want one worker's batches of fewer checkpointed lanes on a team of 2", p, err)
	}
	if p, _ := r.igPlan(200, 50, 1<<30, 1, 64, none); p.team > 1 {
		t.Errorf("1 worker: plan %+v has a team", p)
	}
	if p, _ := r.igPlan(1000, 50, 400<<20, 1, 64, none); p.team > 1 || p.ck {
		t.Errorf("1 worker, 1,000 steps: plan %+v, want the whole trace of fewer lanes, no team", p)
	}
	if p, _ := r.igPlan(200, 50, 1<<30, 2, 1, none); p.team > 1 {
		t.Errorf("1 lane: plan %+v has a team", p)
	}
}

// One input's IG on a team allocates nothing in steady state.
func TestModelTeamAllocs(t *testing.T) {
	defer func(on bool, w int) { teamsOn, teamMinWork = on, w }(teamsOn, teamMinWork)
	teamsOn, teamMinWork = true, 0
	rng := rand.New(rand.NewPCG(29, 30))
	s := randomStacked(t, rng, 8, 64, 1, false, 3, 2, true)
	steps, n := 50, 50
	x := randomStackedInput(rng, steps, 8)
	alphas, weights := midpointRule(n)
	choose := func([]float64) (int, error) { return 0, nil }
	r, _ := NewRunner(s)
	defer r.Close()
	ig := make([]float64, steps*8+6)
	f := func() {
		if err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, ig[:steps*8], ig[steps*8:steps*8+3], ig[steps*8+3:], RunOptions{Workers: 2}); err != nil {
			t.Fatal(err)
		}
	}
	f()
	if a := testing.AllocsPerRun(20, f); a != 0 {
		t.Errorf("%v allocations per call", a)
	}
}

// A team step gives the bits of one goroutine whatever the team's size
// (parts of a few units, and empty ones), forward and backward, with
// occluded lanes, the gradient from above and the sums of dz.
func TestTeamStepSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	const in, l, steps = 5, 11, 3
	for _, h := range []int{13, 40} {
		s := randomStacked(t, rng, in, h, 1, false, 3, 1, true)
		g := 4 * h
		hl, gl := h*l, g*l
		ut := make([]float64, g)
		for i := range ut {
			ut[i] = rng.NormFloat64()
		}
		hPrev, cPrev, dh0, dc0 := make([]float64, hl), make([]float64, hl), make([]float64, hl), make([]float64, hl)
		for i := range hPrev {
			hPrev[i], cPrev[i], dh0[i], dc0[i] = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		}
		at := make([]float64, hl)
		for i := range at {
			at[i] = rng.NormFloat64()
		}
		wts := make([]float64, l)
		for j := range wts {
			wts[j] = rng.Float64()
		}
		// step runs one forward and one backward step of lanes r (a team
		// or none) and returns everything they write.
		step := func(r *lanes) []float64 {
			for j := range l {
				r.scale[j], r.occluded[j] = rng.Float64(), -1
			}
			r.occluded[2] = 1
			r.broadcastBiases(l)
			tr := &r.cells[0]
			z, c, tc, hs := tr.z[gl:2*gl], tr.c[hl:2*hl], tr.tc[hl:2*hl], tr.hs[hl:2*hl]
			r.stepForward(0, 1, z, ut, nil, nil, hPrev, cPrev, tr.zg[:hl], c, tc, hs, l)
			copy(r.dh[:hl], dh0)
			copy(r.dc[:hl], dc0)
			sk := gradSink{dzSum: make([]float64, 3*steps*g), wts: wts, k0: igBlock - 5} // lanes 0–4 in block 0, 5–10 in block 1
			if !r.stepBackward(&s.cells[0], 1, r.dz[:gl], r.dcPrev[:hl], r.dh[:hl], r.dc[:hl], at, z, tc, cPrev, true, l, &sk, steps) {
				r.sink(&sk, 0, 1, steps, l, r.dz[:gl])
			}
			var out []float64
			for _, v := range [][]float64{z, c, tc, hs, r.dz[:gl], r.dcPrev[:hl], r.dh[:hl], sk.dzSum} {
				out = append(out, v...)
			}
			return out
		}
		seed := rng.Uint64()
		rng = rand.New(rand.NewPCG(seed, 1))
		want := step(newLanes(s, l, 2, false))
		for _, n := range []int{2, 3, 8} {
			tm := newTeam(n)
			r := newLanes(s, l, 2, false)
			r.team = tm
			prev := teamMinWork
			teamMinWork = 0
			rng = rand.New(rand.NewPCG(seed, 1))
			got := step(r)
			teamMinWork = prev
			tm.stop()
			assertSameBits(t, fmt.Sprintf("H = %d, a team of %d", h, n), got, want)
		}
	}
}

// A team has at most GOMAXPROCS and teamCPUs goroutines: a helper without
// a core of its own spins on another's.
func TestLendCapsTeam(t *testing.T) {
	defer func(cpus int) { teamCPUs = cpus }(teamCPUs)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	rng := rand.New(rand.NewPCG(33, 34))
	s := randomStacked(t, rng, 8, 32, 1, false, 3, 2, true)
	r, _ := NewRunner(s)
	defer r.Close()
	pool := r.workers(runPlan{workers: 1, lanes: 4}, 10, 0, 0, 0, 1<<30)
	for _, c := range []struct{ cpus, procs, n, want int }{{8, 8, 8, 8}, {2, 8, 8, 2}, {8, 3, 8, 3}, {8, 8, 3, 3}} {
		teamCPUs = c.cpus
		runtime.GOMAXPROCS(c.procs)
		r.lend(pool, c.n)
		got := 0
		if tm := pool[0].r.team; tm != nil {
			got = tm.n
		}
		r.lend(pool, 0)
		if got != c.want {
			t.Errorf("teamCPUs %d, GOMAXPROCS %d, a team of %d asked: %d goroutines, want %d", c.cpus, c.procs, c.n, got, c.want)
		}
	}
}

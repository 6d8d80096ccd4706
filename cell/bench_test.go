package cell

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// threadsNote: the benchmarks here loop b.N times, not with b.Loop, so
// that `-cpu 1,2` measures each entry at its own GOMAXPROCS: the testing
// package runs a benchmark once before it sets the first entry's
// GOMAXPROCS (golang/go#49980), and b.Loop ramps up to the whole
// measurement in that run (with b.N, one iteration, run again unless it
// outlasts -benchtime: use -benchtime 2x for cases of seconds).

// BenchmarkStackedIG: IG with 50 Gauss–Legendre-like steps on a length-200
// input, the two imported-model shapes of the benchmark suite, and on a
// length-1000 input (checkpointed lanes: one batch on one core, the
// workers' split plan on more, ig_split.go; -cpu 1,2), and the long-input
// shape of issue 40 (a 2-layer BiLSTM, H 128) on 1,000 tokens in budgets
// whose whole trace holds 18 lanes and 8; the H = 256 model in one that
// holds 8.
func BenchmarkStackedIG(b *testing.B) {
	for _, c := range []struct {
		name          string
		e, h, layers  int
		bi            bool
		steps, tokens int
		budget        int64 // RunOptions.Budget (0: the default)
	}{
		{"h256-e100-T200-steps50", 100, 256, 1, false, 50, 200, 0},
		{"bi2-h64-e16-T200-steps50", 16, 64, 2, true, 50, 200, 0},
		{"h256-e100-T1000-steps50", 100, 256, 1, false, 50, 1000, 0}, // one input on every core (-cpu 1,2)
		// The whole trace holds 18 lanes, not 32: batches of 16, the last
		// with the 2 steps of the short last block (tailPlan).
		{"bi2-h128-e100-T1000-steps50-600MiB", 100, 128, 2, true, 50, 1000, 600 << 20},
		// Budgets that hold the whole trace of 8 lanes, not of 16: one
		// worker's narrow batches, not checkpoints (narrowWhole).
		{"bi2-h128-e100-T1000-steps50-300MiB", 100, 128, 2, true, 50, 1000, 300 << 20},
		{"h256-e100-T1000-steps50-200MiB", 100, 256, 1, false, 50, 1000, 200 << 20},
	} {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			s := randomStacked(b, rng, c.e, c.h, c.layers, c.bi, 5, 2, true)
			x := randomStackedInput(rng, c.tokens, c.e)
			alphas, weights := make([]float64, c.steps), make([]float64, c.steps)
			for k := range alphas {
				alphas[k] = (float64(k) + 0.5) / float64(c.steps)
				weights[k] = 1 / float64(c.steps)
			}
			r, _ := NewRunner(s)
			grad, y, y0 := make([]float64, c.tokens*c.e), make([]float64, 5), make([]float64, 5)
			choose := func([]float64) (int, error) { return 0, nil }
			// One call first: the buffers grow to the input's length once.
			opt := RunOptions{Budget: c.budget}
			if err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, grad, y, y0, opt); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N { // not b.Loop (threadsNote)
				if err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, grad, y, y0, opt); err != nil {
					b.Fatal(err)
				}
			}
			flops := float64(0)
			for k := range c.layers {
				in := c.e
				if k > 0 {
					in = c.h * s.dirs
				}
				flops += float64(s.dirs) * 2 * 4 * float64(c.h) * float64(in+c.h)
			}
			// forward and backward, every step and α.
			flops *= 2 * float64(c.tokens*c.steps)
			b.ReportMetric(flops/1e9/(b.Elapsed().Seconds()/float64(b.N)), "GFLOP/s")
		})
	}
}

// BenchmarkTeamStep: one time step of a batch of 52 lanes (IG's 50 steps,
// ŷ(x) and ŷ(0)) of an H = 256 cell, forward and backward (which copies dh
// in first: a step's dh feeds the next), on one goroutine and on a team of
// two (team_steps.go): what a team gains per step, without the
// rest of a call. Run with -cpu 2.
func BenchmarkTeamStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := randomStacked(b, rng, 64, 256, 1, false, 3, 0.1, true)
	const l = 52
	r := newLanes(s, l, 2, false)
	r.broadcastBiases(l)
	for i := range l {
		r.scale[i], r.occluded[i] = 1, -1
	}
	h, g := s.h, 4*s.h
	hl, gl := h*l, g*l
	ut := make([]float64, g)
	for i := range ut {
		ut[i] = rng.NormFloat64()
	}
	tr := &r.cells[0]
	for i := range tr.hs {
		tr.hs[i], tr.c[i] = rng.NormFloat64()/2, rng.NormFloat64()/2
	}
	cl := &s.cells[0]
	dh0 := make([]float64, hl) // backward's dh each time: a step's dh feeds the next
	for i := range dh0 {
		dh0[i] = rng.NormFloat64()
	}
	steps := map[string]func(){
		"forward": func() {
			r.stepForward(0, 1, tr.z[gl:], ut, nil, nil, tr.hs[:hl], tr.c[:hl], tr.zg[:hl], tr.c[hl:], tr.tc[hl:], tr.hs[hl:], l)
		},
		// The product of backward, W_hhᵀ·dz, alone, its rows in one part a
		// goroutine: how far the product scales by itself.
		"product": func() {
			if t := r.team; t != nil {
				t.prod = teamJob{dst: r.dh[:hl], a: cl.whhT, aT: cl.whh, nz: r.s.nonzero, src: r.dz[:gl], m: h, k: g, cols: g, l: l}
				t.run(&t.prod, t.n)
				return
			}
			mulAddLanes(r.dh[:hl], cl.whhT, cl.whh, r.s.nonzero, h, g, g, 0, r.dz[:gl], l)
		},
		"backward": func() {
			copy(r.dh[:hl], dh0)
			r.stepBackward(cl, 1, r.dz[:gl], r.dcPrev[:hl], r.dh[:hl], r.dc[:hl], nil, tr.z[gl:], tr.tc[hl:], tr.c[:hl], true, l, nil, 2)
		},
	}
	for _, n := range []int{1, 2} {
		if n > 1 {
			r.team = newTeam(n)
		}
		for _, name := range []string{"forward", "backward", "product"} {
			step := steps[name]
			step() // z holds gates for backward
			b.Run(fmt.Sprintf("%s/team=%d", name, n), func(b *testing.B) {
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N { // not b.Loop (threadsNote)
					step()
				}
			})
		}
		r.team.stop()
		r.team = nil
	}
}

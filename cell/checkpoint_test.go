package cell

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// forceCheckpoints makes every plan checkpointed until restore is called.
func forceCheckpoints() (restore func()) {
	old := fullTraceMax
	fullTraceMax = -1
	return func() { fullTraceMax = old }
}

// Checkpointed lanes give the bits of the full trace: IG (gradient and
// both logits) and occlusion, every head, depth and direction, lengths
// around the segment boundaries, any lanes and workers.
func TestModelCheckpointSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	ctx := context.Background()
	choose := func([]float64) (int, error) { return 2, nil }
	lengths := []int{1, 2, 5, 17, 40}
	if testing.Short() {
		lengths = []int{1, 5, 17}
	}
	for _, c := range headCases() {
		s := randomHeadStacked(t, rng, 4, 6, 3, c)
		for _, steps := range lengths {
			x := randomStackedInput(rng, steps, 4)
			for _, n := range []int{7, 37} {
				alphas, weights := midpointRule(n)
				r, _ := NewRunner(s)
				want := make([]float64, steps*4+6)
				if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, want[:steps*4], want[steps*4:steps*4+3], want[steps*4+3:], RunOptions{}); err != nil {
					t.Fatal(err)
				}
				wantOcc := make([]float64, steps)
				if err := r.Occlusion(ctx, x, 1, wantOcc, RunOptions{}); err != nil {
					t.Fatal(err)
				}
				wantY, _ := r.Forward(x)
				wantY = append([]float64(nil), wantY...)
				for _, keep := range []bool{true, false} {
					keepBoundaries = keep
					restore := forceCheckpoints()
					gotY := make([]float64, 3)
					if err := r.Logits(x, gotY); err != nil {
						t.Fatal(err)
					}
					assertSameBits(t, fmt.Sprintf("%v T=%d Logits", c, steps), gotY, wantY)
					// {Workers: 2}, {Workers: 3} and {Workers: 4}: split
					// plans (TestSplitPlanChosen).
					for _, opt := range []RunOptions{{}, {Workers: 1}, {Workers: 3, Lanes: 5}, {Lanes: 1}, {Lanes: 16, Workers: 2}, {Lanes: 17, Workers: 2}, {Workers: 2}, {Workers: 3}, {Workers: 4}} {
						name := fmt.Sprintf("%v T=%d n=%d keep %v %+v", c, steps, n, keep, opt)
						got := make([]float64, steps*4+6)
						if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, got[:steps*4], got[steps*4:steps*4+3], got[steps*4+3:], opt); err != nil {
							t.Fatal(err)
						}
						assertSameBits(t, name+" IG", got, want)
						occ := make([]float64, steps)
						if err := r.Occlusion(ctx, x, 1, occ, opt); err != nil {
							t.Fatal(err)
						}
						assertSameBits(t, name+" occlusion", occ, wantOcc)
					}
					restore()
				}
				keepBoundaries = true
				r.Close()
			}
		}
	}
}

// Segments longer than ⌈√T⌉ (widenSegments: as long as the budget allows,
// here as fullTraceMax allows), the last one shorter or not, give the
// bits of the full trace, on one worker and on a team.
func TestWideSegmentsSameBits(t *testing.T) {
	defer func(on bool, w int) { teamsOn, teamMinWork = on, w }(teamsOn, teamMinWork)
	rng := rand.New(rand.NewPCG(41, 42))
	ctx := context.Background()
	choose := func([]float64) (int, error) { return 2, nil }
	for _, c := range []headCase{{2, true, HeadHN, ActNone}, {1, false, HeadMean, ActTanh}, {1, false, HeadLast, ActNone}} {
		s := randomHeadStacked(t, rng, 4, 6, 3, c)
		for _, steps := range []int{40, 61} {
			x := randomStackedInput(rng, steps, 4)
			n := 7
			alphas, weights := midpointRule(n)
			r, _ := NewRunner(s)
			want := make([]float64, steps*4+6)
			if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, want[:steps*4], want[steps*4:steps*4+3], want[steps*4+3:], RunOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, nseg := range []int{2, 3, 4} {
				for _, team := range []bool{false, true} {
					teamsOn, teamMinWork = team, 1<<22
					if team {
						teamMinWork = 0
					}
					old := fullTraceMax
					fullTraceMax = s.laneBytes(n+2, (steps+nseg-1)/nseg, false) // ŷ(x) and ŷ(0) fused: n+2 lanes
					got := make([]float64, steps*4+6)
					err := r.IntegratedGradients(ctx, x, choose, alphas, weights, got[:steps*4], got[steps*4:steps*4+3], got[steps*4+3:], RunOptions{Workers: 1 + btoi(team)})
					fullTraceMax = old
					if err != nil {
						t.Fatal(err)
					}
					assertSameBits(t, fmt.Sprintf("%v T=%d %d segments, team %v", c, steps, nseg, team), got, want)
				}
			}
			r.Close()
		}
	}
	teamsOn, teamMinWork = false, 1<<22
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// widenSegments takes the fewest segments that fit, of equal length but
// the last, and keeps p where none fits.
func TestWidenSegments(t *testing.T) {
	p := runPlan{ck: true, lanes: 4, workers: 1}
	p.seg, p.nseg = segments(1000) // 32 × 32
	for _, c := range []struct{ maxSeg, seg, nseg int }{{1000, 1000, 1}, {999, 500, 2}, {360, 334, 3}, {250, 250, 4}, {40, 40, 25}, {33, 33, 31}, {32, 32, 32}, {10, 32, 32}} {
		q := widenSegments(p, 1000, func(q runPlan) bool { return q.seg <= c.maxSeg })
		if q.seg != c.seg || q.nseg != c.nseg {
			t.Errorf("segments of at most %d steps: %d × %d, want %d × %d", c.maxSeg, q.nseg, q.seg, c.nseg, c.seg)
		}
		if (q.nseg-1)*q.seg >= 1000 || q.nseg*q.seg < 1000 {
			t.Errorf("%d × %d do not cover 1,000 steps with a last segment", q.nseg, q.seg)
		}
	}
}

// A long input runs within a small budget on checkpoints, with the bits of
// the full trace, and the memory the runner holds stays within the budget;
// a budget below one checkpointed lane is refused, naming the least.
func TestModelCheckpointLongInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	s := randomStacked(t, rng, 3, 8, 2, true, 3, 2, true)
	steps := 900
	if testing.Short() {
		steps = 300
	}
	x := randomStackedInput(rng, steps, 3)
	n := 20
	alphas, weights := midpointRule(n)
	choose := func([]float64) (int, error) { return 1, nil }
	ctx := context.Background()
	r, _ := NewRunner(s)
	defer r.Close()
	want, y, y0 := make([]float64, steps*3), make([]float64, 3), make([]float64, 3)
	if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, want, y, y0, RunOptions{Budget: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	full := s.laneBytes(n, steps, false)
	budget := full / 8
	got := make([]float64, steps*3)
	if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, got, y, y0, RunOptions{Budget: budget, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	assertSameBits(t, "checkpointed IG", got, want)
	held := int64(8 * cap(r.u))
	for _, wk := range r.pool {
		held += wk.bytes()
	}
	if held > budget {
		t.Errorf("budget %d (the whole trace: %d): %d bytes held", budget, full, held)
	}
	occFull, occ := make([]float64, steps), make([]float64, steps)
	if err := r.Occlusion(ctx, x, 2, occFull, RunOptions{Budget: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	if err := r.Occlusion(ctx, x, 2, occ, RunOptions{Budget: budget}); err != nil {
		t.Fatal(err)
	}
	assertSameBits(t, "checkpointed occlusion", occ, occFull)
	seg, nseg := segments(steps)
	least := s.ckLaneBytes(1, seg, nseg, false)
	err := r.Occlusion(ctx, x, 2, occ, RunOptions{Budget: least - 1})
	if err == nil || !contains(err.Error(), fmt.Sprint(least)) {
		t.Fatalf("budget %d below one checkpointed lane (%d): %v", least-1, least, err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// A checkpointed batch of a long input ends soon after its context is
// done, with the context's error, not after its minutes of work.
func TestModelCheckpointCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a long input")
	}
	rng := rand.New(rand.NewPCG(31, 32))
	s := randomStacked(t, rng, 3, 8, 2, true, 3, 2, true)
	steps, n := 30000, 50
	x := randomStackedInput(rng, steps, 3)
	alphas, weights := midpointRule(n)
	defer forceCheckpoints()()
	r, _ := NewRunner(s)
	defer r.Close()
	grad, y, y0 := make([]float64, steps*3), make([]float64, 3), make([]float64, 3)
	for _, opt := range []RunOptions{{Workers: 1}, {Workers: 2}, {Workers: 3}} { // one worker, split plans
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(time.Second); cancel() }()
		start := time.Now()
		err := r.IntegratedGradients(ctx, x, func([]float64) (int, error) { return 0, nil }, alphas, weights, grad, y, y0, opt)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%+v: IG canceled after 1 s: %v", opt, err)
		}
		if d := time.Since(start); d > 6*time.Second {
			t.Errorf("%+v: IG canceled after 1 s ended after %v", opt, d)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(time.Second); cancel() }()
	start := time.Now()
	if err := r.Occlusion(ctx, x, 0, make([]float64, steps), RunOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("occlusion canceled after 1 s: %v", err)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("occlusion canceled after 1 s ended after %v", d)
	}
}

// Where the plan of chunks would leave workers idle (one 1,000-token
// input of an H = 256 model on two cores: one chunk of 50 lanes), IG's
// checkpointed lanes go in one batch on a team where the model's steps
// are large enough to share (in batches that take turns on it where one
// batch cannot hold them all), and are split across the workers elsewhere
// (a small model); nowhere else.
func TestSplitPlanChosen(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	extra := func(runPlan) int64 { return 0 }
	big, _ := NewRunner(randomStacked(t, rng, 100, 256, 1, false, 5, 0.1, true))
	for _, c := range []struct {
		steps, n, workers, lanes int
		budget                   int64
		team, least              int // the team, and the least lanes a batch on it
	}{
		{1000, 50, 2, 64, DefaultBudget, 2, 50},
		{1000, 50, 4, 64, DefaultBudget, 4, 50},
		{1000, 50, 1, 64, DefaultBudget, 0, 0},
		{1000, 50, 2, 20, DefaultBudget, 2, 20}, // batches of 20 lanes, in turns
		{1000, 50, 2, 64, 20 << 20, 2, 16},      // 50 checkpointed lanes over the budget: batches in turns
	} {
		p, err := big.igPlan(c.steps, c.n, c.budget, c.workers, c.lanes, extra)
		if err != nil {
			t.Fatal(err)
		}
		if p.split || (p.team > 1) != (c.team > 0) || c.team > 0 && (p.team != c.team || p.workers != 1 || !p.ck || p.lanes < c.least) {
			t.Errorf("T=%d n=%d workers=%d lanes=%d budget=%d: plan %+v, want no split and a team of %d", c.steps, c.n, c.workers, c.lanes, c.budget, p, c.team)
		}
	}
	defer forceCheckpoints()()
	small, _ := NewRunner(randomStacked(t, rng, 4, 6, 1, false, 3, 1, true))
	for _, o := range []struct{ n, workers, lanes int }{{7, 2, 64}, {37, 2, 64}, {37, 3, 64}, {37, 4, 64}} {
		p, _ := small.igPlan(17, o.n, DefaultBudget, o.workers, o.lanes, extra)
		if want := (o.n+o.workers-1)/o.workers + 1; !p.split || p.workers != o.workers || p.lanes != want || p.team > 1 { // + ŷ(x) or ŷ(0)
			t.Errorf("n=%d workers=%d lanes=%d on checkpoints: plan %+v, want split, %d lanes a worker", o.n, o.workers, o.lanes, p, want)
		}
	}
}

// On a split plan the class is chosen within the job, from ŷ(x) taken as
// one more lane: choose sees the logits of x, its error or a class out of
// range ends the call with an error (no worker left waiting), and the
// result has the bits of one worker's.
func TestSplitChoose(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	s := randomStacked(t, rng, 4, 6, 2, true, 3, 1, true)
	steps, n := 23, 37
	x := randomStackedInput(rng, steps, 4)
	alphas, weights := midpointRule(n)
	defer forceCheckpoints()()
	r, _ := NewRunner(s)
	defer r.Close()
	wantY, _ := r.Forward(x)
	wantY = append([]float64(nil), wantY...)
	var seen []float64
	argmax := func(y []float64) (int, error) {
		seen = append(seen[:0], y...)
		best := 0
		for k := range y {
			if y[k] > y[best] {
				best = k
			}
		}
		return best, nil
	}
	ctx := context.Background()
	var ref []float64
	for _, opt := range []RunOptions{{Workers: 1}, {Workers: 2}, {Workers: 3}} {
		grad, y, y0 := make([]float64, steps*4), make([]float64, 3), make([]float64, 3)
		if err := r.IntegratedGradients(ctx, x, argmax, alphas, weights, grad, y, y0, opt); err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		assertSameBits(t, fmt.Sprintf("%+v: choose's logits", opt), seen, wantY)
		assertSameBits(t, fmt.Sprintf("%+v: y", opt), y, wantY)
		if ref == nil {
			ref = append([]float64(nil), grad...)
		}
		assertSameBits(t, fmt.Sprintf("%+v: IG", opt), grad, ref)
		bad := errors.New("no class")
		for _, choose := range []func([]float64) (int, error){
			func([]float64) (int, error) { return 0, bad },
			func([]float64) (int, error) { return 3, nil },
		} {
			err := r.IntegratedGradients(ctx, x, choose, alphas, weights, grad, y, y0, opt)
			if err == nil {
				t.Fatalf("%+v: a failing choose: no error", opt)
			}
		}
	}
}

// IntegratedGradientsAll on checkpointed lanes runs the classes one after
// another, each on the split plan where workers are spare: every class's
// sum and both logits have the bits of one-worker single-class calls.
func TestSplitAllClasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	ctx := context.Background()
	for _, hc := range headCases() {
		s := randomHeadStacked(t, rng, 3, 5, 4, hc)
		x := randomStackedInput(rng, 19, 3)
		size := x.Len() * 3
		alphas, weights := randomRule(rng, 37)
		single := mustRunner(t, s)
		want := perClass(4, size)
		wy, wy0 := make([]float64, 4), make([]float64, 4)
		for c := range 4 {
			choose := func([]float64) (int, error) { return c, nil }
			if err := single.IntegratedGradients(ctx, x, choose, alphas, weights, want[c], wy, wy0, RunOptions{Workers: 1}); err != nil {
				t.Fatal(err)
			}
		}
		restore := forceCheckpoints()
		r := mustRunner(t, s)
		for _, opt := range []RunOptions{{Workers: 2}, {Workers: 3}} {
			ig, y, y0 := perClass(4, size), make([]float64, 4), make([]float64, 4)
			if err := r.IntegratedGradientsAll(ctx, x, alphas, weights, ig, y, y0, opt); err != nil {
				t.Fatal(err)
			}
			for c := range 4 {
				assertSameBits(t, fmt.Sprintf("%v %+v class %d IG", hc, opt, c), ig[c], want[c])
			}
			assertSameBits(t, fmt.Sprintf("%v %+v y", hc, opt), y, wy)
			assertSameBits(t, fmt.Sprintf("%v %+v y0", hc, opt), y0, wy0)
		}
		restore()
	}
}

// One whole-trace batch takes ŷ(x) and ŷ(0) as two more lanes (fused):
// IG, IG of every class and both logits have the bits of the plan whose
// lanes cap leaves no room for them (a two-lane pass first), choose sees
// the logits of x, and its error, or a class out of range, ends the call
// with that error.
func TestFusedClassSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	ctx := context.Background()
	for _, hc := range headCases() {
		s := randomHeadStacked(t, rng, 3, 5, 4, hc)
		x := randomStackedInput(rng, 19, 3)
		size := x.Len() * 3
		const n = 37
		alphas, weights := randomRule(rng, n)
		r := mustRunner(t, s)
		fused, apart := RunOptions{Workers: 1}, RunOptions{Workers: 1, Lanes: n}
		var seen []float64
		choose := func(y []float64) (int, error) {
			seen = append(seen[:0], y...)
			return 2, nil
		}
		run := func(opt RunOptions) (grad, y, y0 []float64) {
			grad, y, y0 = make([]float64, size), make([]float64, 4), make([]float64, 4)
			if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, grad, y, y0, opt); err != nil {
				t.Fatal(err)
			}
			return grad, y, y0
		}
		g1, y1, y01 := run(fused)
		assertSameBits(t, fmt.Sprintf("%v choose's logits", hc), seen, y1)
		g2, y2, y02 := run(apart)
		assertSameBits(t, fmt.Sprintf("%v IG", hc), g1, g2)
		assertSameBits(t, fmt.Sprintf("%v y", hc), y1, y2)
		assertSameBits(t, fmt.Sprintf("%v y0", hc), y01, y02)
		all1, all2 := perClass(4, size), perClass(4, size)
		if err := r.IntegratedGradientsAll(ctx, x, alphas, weights, all1, y1, y01, fused); err != nil {
			t.Fatal(err)
		}
		if err := r.IntegratedGradientsAll(ctx, x, alphas, weights, all2, y2, y02, apart); err != nil {
			t.Fatal(err)
		}
		for c := range 4 {
			assertSameBits(t, fmt.Sprintf("%v IG all, class %d", hc, c), all1[c], all2[c])
		}
		assertSameBits(t, fmt.Sprintf("%v IG all, y and y0", hc), append(y1, y01...), append(y2, y02...))
		bad := errors.New("no class")
		if err := r.IntegratedGradients(ctx, x, func([]float64) (int, error) { return 0, bad }, alphas, weights, g1, y1, y01, fused); err != bad {
			t.Fatalf("%v: a failing choose: error %v, want %v", hc, err, bad)
		}
		if err := r.IntegratedGradients(ctx, x, func([]float64) (int, error) { return 4, nil }, alphas, weights, g1, y1, y01, fused); err == nil {
			t.Fatalf("%v: class 4 of 4: no error", hc)
		}
		g3, _, _ := run(fused) // the runner is usable after a failed call
		assertSameBits(t, fmt.Sprintf("%v IG after the failures", hc), g3, g2)
	}
}

package cell

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The runner's batched methods on a one-layer model: progress reports in
// order, a context canceled before the start or from a Progress callback
// ends the call with its error, and the runner gives the same bits
// afterwards.
func TestRunnerProgressAndCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	n := mustNew(t, randomParams(rng, 5, 3, 2, true))
	x := OneHot(randomSymbols(rng, 30, 3))
	alphas, weights := randomRule(rng, 100)
	g, y, y0 := make([]float64, 30*3), make([]float64, 2), make([]float64, 2)
	choose := func([]float64) (int, error) { return 0, nil }
	last, calls := 0, 0
	opt := RunOptions{Workers: 2, Lanes: 16, Progress: func(done, total int) {
		if done <= last || total != 100 {
			t.Errorf("progress %d/%d after %d", done, total, last)
		}
		last = done
		calls++
	}}
	if err := n.IntegratedGradients(context.Background(), x, choose, alphas, weights, g, y, y0, opt); err != nil {
		t.Fatal(err)
	}
	if last != 100 || calls == 0 {
		t.Errorf("progress ended at %d after %d calls, want 100", last, calls)
	}
	want := append([]float64(nil), g...)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := n.IntegratedGradients(ctx, x, choose, alphas, weights, g, y, y0, RunOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	opt.Progress = func(done, total int) { cancel() }
	if err := n.IntegratedGradients(ctx, x, choose, alphas, weights, g, y, y0, opt); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled during the run: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	if err := n.Occlusion(ctx, x, 0, make([]float64, 30), RunOptions{Lanes: 1, Workers: 2, Progress: func(int, int) { cancel() }}); !errors.Is(err, context.Canceled) {
		t.Errorf("occlusion canceled during the run: %v", err)
	}
	// And the runner still works afterwards, with the same bits.
	if err := n.IntegratedGradients(context.Background(), x, choose, alphas, weights, g, y, y0, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	assertSameBits(t, "after cancellation", g, want)
}

// A runner's worker goroutines end once it is collected.
func TestRunnerGoroutinesEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	p := randomParams(rng, 3, 2, 2, true)
	s, err := NewModel(p.stacked())
	if err != nil {
		t.Fatal(err)
	}
	// Runners of earlier tests may still be on their way out.
	before := -1
	for range 50 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == before {
			break
		}
		before = m
	}
	func() {
		r, err := NewRunner(s)
		if err != nil {
			t.Fatal(err)
		}
		x := OneHot(randomSymbols(rng, 40, 2))
		if err := r.Occlusion(context.Background(), x, 0, make([]float64, 40), RunOptions{Workers: 4, Lanes: 1}); err != nil {
			t.Fatal(err)
		}
		if got := runtime.NumGoroutine(); got <= before {
			t.Errorf("%d goroutines during use, want more than %d", got, before)
		}
	}()
	for range 100 {
		runtime.GC()
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%d goroutines after the runner was collected, want %d", runtime.NumGoroutine(), before)
}

// The every-class methods check their buffers, one per class of the
// right size, and DeepLIFTAll its reference.
func TestAllClassesErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(85, 86))
	n := mustNew(t, randomParams(rng, 3, 2, 3, true))
	x := OneHot([]int{0, 1, 1})
	ctx := context.Background()
	for name, bufs := range map[string][][]float64{"too few": perClass(2, 6), "too short": {make([]float64, 6), make([]float64, 5), make([]float64, 6)}} {
		if _, err := n.GradientAll(ctx, x, bufs); err == nil {
			t.Errorf("GradientAll, %s buffers: no error", name)
		}
		if _, err := n.LRPAll(ctx, x, 0.01, 0, bufs, make([]Relevance, 3)); err == nil {
			t.Errorf("LRPAll, %s buffers: no error", name)
		}
		if err := n.IntegratedGradientsAll(ctx, x, []float64{1}, []float64{1}, bufs, make([]float64, 3), make([]float64, 3), RunOptions{}); err == nil {
			t.Errorf("IntegratedGradientsAll, %s buffers: no error", name)
		}
	}
	if _, err := n.LRPAll(ctx, x, 0.01, 0, perClass(3, 6), make([]Relevance, 2)); err == nil {
		t.Error("LRPAll with 2 Relevance values for 3 classes: no error")
	}
	if err := n.OcclusionAll(ctx, x, perClass(3, 2), RunOptions{}); err == nil {
		t.Error("OcclusionAll with short buffers: no error")
	}
	s := randomHeadStacked(t, rng, 2, 3, 3, headCase{1, false, HeadLast, ActNone})
	r := mustRunner(t, s)
	sx := randomStackedInput(rng, 4, 2)
	ref := deepLIFTRef(nil, 4, 2)
	for name, bufs := range map[string][][]float64{"too few": perClass(2, 8), "too short": {make([]float64, 8), make([]float64, 7), make([]float64, 8)}} {
		if _, _, err := r.DeepLIFTAll(ctx, sx, ref, bufs); err == nil {
			t.Errorf("DeepLIFTAll, %s buffers: no error", name)
		}
	}
	if _, _, err := r.DeepLIFTAll(ctx, sx, deepLIFTRef(nil, 3, 2), perClass(3, 8)); err == nil || !strings.Contains(err.Error(), "reference") {
		t.Errorf("DeepLIFTAll with a reference of 3 steps for 4: %v, want an error naming the reference", err)
	}
}

func TestLimitsOf(t *testing.T) {
	l := limitsOf(RunOptions{})
	if l.budget != DefaultBudget || l.workers < 1 || l.lanes != 0 {
		t.Errorf("limitsOf(zero options) = %+v", l)
	}
	l = limitsOf(RunOptions{Budget: 5, Workers: 3, Lanes: 7})
	if l != (limits{budget: 5, workers: 3, lanes: 7}) {
		t.Errorf("limitsOf(5, 3, 7) = %+v", l)
	}
}

package cell

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestBatcherClose: Close ends the goroutines and is idempotent; every
// other method then returns ErrBatcherClosed.
func TestBatcherClose(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	n := mustNew(t, randomParams(rng, 4, 3, 2, true))
	x := OneHot(randomSymbols(rng, 40, 3))
	alphas, weights := randomRule(rng, 50)
	b := NewBatcher(n)
	ctx := context.Background()
	if err := b.Occlusion(ctx, x, 0, make([]float64, 40), BatchOptions{Workers: 3, Lanes: 1}); err != nil {
		t.Fatal(err)
	}
	if got := len(b.job.pool.wake); got != 2 {
		t.Fatalf("%d worker goroutines, want 2", got)
	}
	for range 2 {
		if err := b.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	// Close waited for the goroutines: none is left to wait for.
	b.job.pool.exited.Wait()
	acc, y := make([]float64, 40*3), make([]float64, 2)
	for name, f := range map[string]func() error{
		"GradientSum": func() error { return b.GradientSum(ctx, x, 0, alphas, weights, acc, BatchOptions{}) },
		"IntegratedGradients": func() error {
			return b.IntegratedGradients(ctx, x, func([]float64) (int, error) { return 0, nil }, alphas, weights, acc, y, make([]float64, 2), BatchOptions{})
		},
		"Occlusion": func() error { return b.Occlusion(ctx, x, 0, make([]float64, 40), BatchOptions{}) },
		"Logits":    func() error { return b.Logits(x, y) },
	} {
		if err := f(); !errors.Is(err, ErrBatcherClosed) {
			t.Errorf("%s after Close: got %v, want ErrBatcherClosed", name, err)
		}
	}
}

// TestBatcherBusy: a call made while another runs, from a Progress callback
// or from another goroutine, returns ErrBatcherBusy at once (it used to
// deadlock or corrupt the running call), and the running call is not
// disturbed.
func TestBatcherBusy(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	n := mustNew(t, randomParams(rng, 5, 3, 2, true))
	x := OneHot(randomSymbols(rng, 30, 3))
	alphas, weights := randomRule(rng, 100)
	want := make([]float64, 30*3)
	if err := n.GradientSum(NewWorkspace(n), x, 0, alphas, weights, want); err != nil {
		t.Fatal(err)
	}
	b := NewBatcher(n)
	ctx := context.Background()
	y := make([]float64, 2)
	var inside, fromGoroutine, closeErr error
	calls := 0
	opt := BatchOptions{Workers: 2, Lanes: 16, Progress: func(done, total int) {
		calls++
		if calls > 1 {
			return
		}
		inside = b.Logits(x, y)
		errc := make(chan error)
		go func() { errc <- b.Occlusion(ctx, x, 0, make([]float64, 30), BatchOptions{}) }()
		fromGoroutine = <-errc
		closeErr = b.Close()
	}}
	got := make([]float64, len(want))
	if err := b.GradientSum(ctx, x, 0, alphas, weights, got, opt); err != nil {
		t.Fatal(err)
	}
	assertSameBits(t, "the running call", got, want)
	for what, err := range map[string]error{"from Progress": inside, "from another goroutine": fromGoroutine, "Close": closeErr} {
		if !errors.Is(err, ErrBatcherBusy) {
			t.Errorf("a call %s during GradientSum: got %v, want ErrBatcherBusy", what, err)
		}
	}
	// Free again afterwards.
	if err := b.Logits(x, y); err != nil {
		t.Errorf("Logits after the call: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close after the call: %v", err)
	}
}

// TestBatchOptionsNegative: a negative Budget, Workers or Lanes is an error
// naming the field (zero is the default).
func TestBatchOptionsNegative(t *testing.T) {
	rng := rand.New(rand.NewPCG(75, 76))
	n := mustNew(t, randomParams(rng, 3, 2, 2, true))
	b := NewBatcher(n)
	defer b.Close()
	x := OneHot(randomSymbols(rng, 6, 2))
	alphas, weights := randomRule(rng, 4)
	ctx := context.Background()
	acc, y, y0 := make([]float64, 6*2), make([]float64, 2), make([]float64, 2)
	class := func([]float64) (int, error) { return 0, nil }
	for field, opt := range map[string]BatchOptions{
		"Budget":  {Budget: -1},
		"Workers": {Workers: -2},
		"Lanes":   {Lanes: -3},
	} {
		for name, f := range map[string]func() error{
			"GradientSum":         func() error { return b.GradientSum(ctx, x, 0, alphas, weights, acc, opt) },
			"IntegratedGradients": func() error { return b.IntegratedGradients(ctx, x, class, alphas, weights, acc, y, y0, opt) },
			"Occlusion":           func() error { return b.Occlusion(ctx, x, 0, make([]float64, 6), opt) },
		} {
			if err := f(); err == nil || !strings.Contains(err.Error(), "BatchOptions."+field) {
				t.Errorf("%s with %+v: got %v, want an error naming %s", name, opt, err, field)
			}
		}
	}
	if err := b.GradientSum(ctx, x, 0, alphas, weights, acc, BatchOptions{}); err != nil {
		t.Errorf("zero options: %v", err)
	}
}

// TestBatcherWithoutNetwork: NewBatcher(nil) and a zero Batcher return
// ErrNoNetwork instead of panicking.
func TestBatcherWithoutNetwork(t *testing.T) {
	x := OneHot([]int{0, 1})
	for name, b := range map[string]*Batcher{"NewBatcher(nil)": NewBatcher(nil), "zero Batcher": new(Batcher)} {
		ctx := context.Background()
		g := make([]float64, 4)
		for method, f := range map[string]func() error{
			"GradientSum": func() error { return b.GradientSum(ctx, x, 0, []float64{1}, []float64{1}, g, BatchOptions{}) },
			"IntegratedGradients": func() error {
				return b.IntegratedGradients(ctx, x, nil, []float64{1}, []float64{1}, g, g[:2], g[2:], BatchOptions{})
			},
			"Occlusion": func() error { return b.Occlusion(ctx, x, 0, g[:2], BatchOptions{}) },
			"Logits":    func() error { return b.Logits(x, g[:2]) },
		} {
			if err := f(); !errors.Is(err, ErrNoNetwork) {
				t.Errorf("%s: %s: got %v, want ErrNoNetwork", name, method, err)
			}
		}
		if err := b.Close(); err != nil {
			t.Errorf("%s: Close: %v", name, err)
		}
	}
}

package cell

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestModelChosen checks GradientChosenContext and LRPChosenContext on
// imported-style models (two layers, bidirectional; with and without
// biases) against Forward, then Gradient and LRP of the class choose
// picks: the same bits, choose given the logits; and their errors.
func TestModelChosen(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	ctx := context.Background()
	const in, c, steps = 3, 4, 9
	for _, bi := range []bool{false, true} {
		s := randomStacked(t, rng, in, 5, 2, bi, c, 1.5, bi)
		r, err := NewRunner(s)
		if err != nil {
			t.Fatal(err)
		}
		x := randomStackedInput(rng, steps, in)
		y, err := r.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		y = append([]float64(nil), y...)
		want, got := make([]float64, steps*in), make([]float64, steps*in)
		for k := range c {
			var seen []float64
			choose := func(y []float64) (int, error) {
				seen = append(seen[:0], y...)
				return k, nil
			}
			if _, err := r.Gradient(x, k, want); err != nil {
				t.Fatal(err)
			}
			yc, class, err := r.GradientChosenContext(ctx, x, choose, got)
			if err != nil {
				t.Fatal(err)
			}
			if d := bitsDiff(want, got) + bitsDiff(y, yc) + bitsDiff(y, seen); d != "" || class != k {
				t.Errorf("bi %v class %d: gradient (class %d): %s", bi, k, class, d)
			}
			for _, bf := range []float64{0, 1} {
				oW, err := r.LRP(x, k, DefaultEpsilon, bf, want)
				if err != nil {
					t.Fatal(err)
				}
				_, class, oG, err := r.LRPChosenContext(ctx, x, choose, DefaultEpsilon, bf, got)
				if err != nil {
					t.Fatal(err)
				}
				rel := func(o Relevance) []float64 { return []float64{o.Output, o.Bias, o.Initial} }
				if d := bitsDiff(append(want, rel(oW)...), append(got, rel(oG)...)); d != "" || class != k {
					t.Errorf("bi %v class %d bias factor %v: LRP (class %d): %s", bi, k, bf, class, d)
				}
			}
		}

		// Errors: choose's own, as it is; a class out of range; a wrong
		// buffer, a bad ε, before choose is called.
		mine := errors.New("no class for you")
		if _, _, err := r.GradientChosenContext(ctx, x, func([]float64) (int, error) { return 0, mine }, got); err != mine {
			t.Errorf("choose's error: got %v", err)
		}
		if _, _, _, err := r.LRPChosenContext(ctx, x, func([]float64) (int, error) { return 0, mine }, DefaultEpsilon, 0, got); err != mine {
			t.Errorf("LRP: choose's error: got %v", err)
		}
		if _, _, err := r.GradientChosenContext(ctx, x, func([]float64) (int, error) { return c, nil }, got); err == nil || !strings.Contains(err.Error(), "class") {
			t.Errorf("class %d of %d: got %v", c, c, err)
		}
		called := false
		never := func([]float64) (int, error) { called = true; return 0, nil }
		if _, _, err := r.GradientChosenContext(ctx, x, never, got[:1]); err == nil || called {
			t.Errorf("a 1-value buffer: error %v, choose called %v", err, called)
		}
		if _, _, _, err := r.LRPChosenContext(ctx, x, never, -1, 0, got); err == nil || called {
			t.Errorf("ε = −1: error %v, choose called %v", err, called)
		}
		// A canceled context ends the pass, choose not called.
		long := randomStackedInput(rng, 768, in)
		done, cancel := context.WithCancel(ctx)
		cancel()
		g := make([]float64, long.Len()*in)
		if _, _, err := r.GradientChosenContext(done, long, never, g); !errors.Is(err, context.Canceled) || called {
			t.Errorf("canceled: error %v, choose called %v", err, called)
		}
		if _, _, _, err := r.LRPChosenContext(done, long, never, DefaultEpsilon, 0, g); !errors.Is(err, context.Canceled) || called {
			t.Errorf("LRP canceled: error %v, choose called %v", err, called)
		}
		// The runner is usable after each.
		if _, class, err := r.GradientChosenContext(ctx, x, func([]float64) (int, error) { return 1, nil }, got); err != nil || class != 1 {
			t.Errorf("after the errors: class %d, %v", class, err)
		}
	}
}

// TestOcclusionChosen checks OcclusionChosen against Logits, then
// Occlusion of the class choose picks: the same bits, with the prefix
// pass (one direction) and without it (two directions; a budget too small
// for the prefix), and its errors.
func TestOcclusionChosen(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	ctx := context.Background()
	const in, c, steps = 3, 4, 11
	for _, bi := range []bool{false, true} {
		s := randomStacked(t, rng, in, 5, 2, bi, c, 1.5, true)
		r, err := NewRunner(s)
		if err != nil {
			t.Fatal(err)
		}
		x := randomStackedInput(rng, steps, in)
		y := make([]float64, c)
		if err := r.Logits(x, y); err != nil {
			t.Fatal(err)
		}
		for _, opt := range []RunOptions{{}, {Workers: 2, Lanes: 3}, {Budget: s.laneBytes(4, steps, false)}} {
			for k := range c {
				want, got, yc := make([]float64, steps), make([]float64, steps), make([]float64, c)
				if err := r.Occlusion(ctx, x, k, want, opt); err != nil {
					t.Fatal(err)
				}
				var seen []float64
				class, err := r.OcclusionChosen(ctx, x, func(y []float64) (int, error) {
					seen = append(seen[:0], y...)
					return k, nil
				}, yc, got, opt)
				if err != nil {
					t.Fatal(err)
				}
				if d := bitsDiff(want, got) + bitsDiff(y, yc) + bitsDiff(y, seen); d != "" || class != k {
					t.Errorf("bi %v %+v class %d (returned %d): %s", bi, opt, k, class, d)
				}
				if used, want := r.prefix != nil, !bi && opt.Budget == 0; used != want {
					t.Errorf("bi %v %+v: the prefix pass used %v, want %v", bi, opt, used, want)
				}
			}
		}
		mine := errors.New("no class for you")
		out, yc := make([]float64, steps), make([]float64, c)
		if _, err := r.OcclusionChosen(ctx, x, func([]float64) (int, error) { return 0, mine }, yc, out, RunOptions{}); err != mine {
			t.Errorf("choose's error: got %v", err)
		}
		if _, err := r.OcclusionChosen(ctx, x, func([]float64) (int, error) { return -1, nil }, yc, out, RunOptions{}); err == nil || !strings.Contains(err.Error(), "class") {
			t.Errorf("class −1: got %v", err)
		}
		if _, err := r.OcclusionChosen(ctx, x, func([]float64) (int, error) { return 0, nil }, yc[:1], out, RunOptions{}); err == nil {
			t.Error("a 1-value logits buffer: no error")
		}
	}
}

// bitsDiff returns "" when a and b hold the same bits, else where they
// first differ.
func bitsDiff(a, b []float64) string {
	if len(a) != len(b) {
		return fmt.Sprintf("lengths %d and %d; ", len(a), len(b))
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return fmt.Sprintf("[%d]: %v vs %v; ", i, a[i], b[i])
		}
	}
	return ""
}

package cell

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// batchCase is a network and an input for the batched paths.
type batchCase struct {
	name string
	net  *Network
	x    Input
}

func batchCases(t testing.TB) []batchCase {
	rng := rand.New(rand.NewPCG(31, 32))
	var cs []batchCase
	for _, sz := range [][3]int{{1, 1, 40}, {7, 4, 37}, {9, 5, 18}, {33, 6, 21}, {70, 3, 6}} {
		h, d, steps := sz[0], sz[1], sz[2]
		n := mustNew(t, randomParams(rng, h, d, 3, true))
		sym := randomSymbols(rng, steps, d)
		sym[steps/3] = -1
		cs = append(cs,
			batchCase{fmt.Sprintf("onehot/H=%d", h), n, OneHot(sym)},
			batchCase{fmt.Sprintf("scaled/H=%d", h), n, ScaledOneHot(sym, 0.7)},
			batchCase{fmt.Sprintf("dense/H=%d", h), n, Dense(randomDense(rng, steps, d), steps).Scaled(1.3)})
	}
	// A sparse network, as the white-box ones are: half the weights zero.
	p := randomParams(rng, 12, 4, 2, true)
	for _, w := range [][]float64{p.Wx, p.Wh, p.Wy} {
		for i := range w {
			if rng.IntN(2) == 0 {
				w[i] = 0
			}
		}
	}
	cs = append(cs, batchCase{"sparse/H=12", mustNew(t, p), OneHot(randomSymbols(rng, 29, 4))})
	return cs
}

func randomRule(rng *rand.Rand, n int) (alphas, weights []float64) {
	alphas, weights = make([]float64, n), make([]float64, n)
	for k := range alphas {
		alphas[k], weights[k] = rng.Float64(), rng.Float64()
	}
	alphas[0] = 0 // a zero copy: the one-hot path skips its input product
	return alphas, weights
}

// TestBatchGradientSumBits: the batched, chunked, parallel, checkpointed sum
// is Network.GradientSum's to the bit, for every option.
func TestBatchGradientSumBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for _, tc := range batchCases(t) {
		n, x := tc.net, tc.x
		stepCounts := []int{1, 5, 16, 37, 70}
		if testing.Short() {
			stepCounts = []int{5, 37}
		}
		for _, steps := range stepCounts {
			alphas, weights := randomRule(rng, steps)
			want := make([]float64, x.Len()*n.d)
			if err := n.GradientSum(NewWorkspace(n), x, 1%n.c, alphas, weights, want); err != nil {
				t.Fatal(err)
			}
			b, tiled := NewBatcher(n), NewBatcher(n)
			tiled.job.tiled = true // the pure-Go kernels' product, whatever the machine
			for _, opt := range []BatchOptions{
				{},
				{Workers: 1, Lanes: 1},
				{Workers: 2, Lanes: 3},
				{Workers: 3, Lanes: 16},
				{Workers: 2, Lanes: 40}, // batches cut blocks at both ends
				{Workers: 2, Budget: minIGBytes(shape{h: n.h, d: n.d}, x.Len(), len(alphas), !x.IsOneHot())}, // checkpoints, one lane
				{Workers: 1, Budget: 40 << 10}, // checkpoints, some lanes
				{Workers: 2, Budget: 1 << 30},
			} {
				got := make([]float64, len(want))
				err := b.GradientSum(context.Background(), x, 1%n.c, alphas, weights, got, opt)
				if opt.Budget > 0 && opt.Budget < minIGBytes(shape{h: n.h, d: n.d}, x.Len(), len(alphas), !x.IsOneHot()) {
					if err == nil {
						t.Fatalf("%s %+v: a budget below one lane's need was accepted", tc.name, opt)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				plan := planIG(shape{h: n.h, d: n.d}, x.Len(), len(alphas), !x.IsOneHot(), limitsOf(opt))
				assertSameBits(t, fmt.Sprintf("%s steps=%d %+v (plan %+v)", tc.name, steps, opt, plan), got, want)
				if err := tiled.GradientSum(context.Background(), x, 1%n.c, alphas, weights, got, opt); err != nil {
					t.Fatal(err)
				}
				assertSameBits(t, fmt.Sprintf("tiled %s steps=%d %+v", tc.name, steps, opt), got, want)
			}
		}
	}
}

// TestBatchOcclusionBits: batched occlusion with prefix reuse gives the bits
// of Forward on each occluded copy.
func TestBatchOcclusionBits(t *testing.T) {
	for _, tc := range batchCases(t) {
		n, x := tc.net, tc.x
		steps, d := x.Len(), n.d
		want := make([]float64, steps)
		ws := NewWorkspace(n)
		for p := range steps {
			var occ Input
			if x.IsOneHot() {
				sym := append([]int(nil), x.symbols...)
				sym[p] = -1
				occ = ScaledOneHot(sym, x.scale)
			} else {
				v := append([]float64(nil), x.dense...)
				clear(v[p*d : (p+1)*d])
				occ = Dense(v, steps).Scaled(x.scale)
			}
			y, err := n.Forward(ws, occ)
			if err != nil {
				t.Fatal(err)
			}
			want[p] = y[2%n.c]
		}
		b := NewBatcher(n)
		// Logits without a trace: Forward's bits.
		y, _ := n.Forward(ws, x)
		got := make([]float64, n.c)
		if err := b.Logits(x, got); err != nil {
			t.Fatal(err)
		}
		assertSameBits(t, tc.name+" logits", got, y)
		for _, opt := range []BatchOptions{{}, {Workers: 1, Lanes: 1}, {Workers: 2, Lanes: 5}, {Workers: 3, Lanes: 64}, {Budget: occlusionLaneBytes(shape{h: n.h, d: n.d})}} {
			got := make([]float64, steps)
			if err := b.Occlusion(context.Background(), x, 2%n.c, got, opt); err != nil {
				t.Fatal(err)
			}
			assertSameBits(t, fmt.Sprintf("%s %+v", tc.name, opt), got, want)
		}
	}
}

// TestBatchGOMAXPROCS: the same bits with GOMAXPROCS 1 and 2 and default
// options (which follow GOMAXPROCS).
func TestBatchGOMAXPROCS(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	n := mustNew(t, randomParams(rng, 10, 4, 2, true))
	x := OneHot(randomSymbols(rng, 60, 4))
	alphas, weights := randomRule(rng, 200)
	run := func() ([]float64, []float64) {
		b := NewBatcher(n)
		g, o := make([]float64, 60*4), make([]float64, 60)
		if err := b.GradientSum(context.Background(), x, 0, alphas, weights, g, BatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := b.Occlusion(context.Background(), x, 1, o, BatchOptions{}); err != nil {
			t.Fatal(err)
		}
		return g, o
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	g1, o1 := run()
	runtime.GOMAXPROCS(2)
	g2, o2 := run()
	assertSameBits(t, "gradient sum, GOMAXPROCS 1 vs 2", g1, g2)
	assertSameBits(t, "occlusion, GOMAXPROCS 1 vs 2", o1, o2)
}

func TestBatchProgressAndCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	n := mustNew(t, randomParams(rng, 5, 3, 2, true))
	x := OneHot(randomSymbols(rng, 30, 3))
	alphas, weights := randomRule(rng, 100)
	g := make([]float64, 30*3)
	b := NewBatcher(n)
	last, calls := 0, 0
	opt := BatchOptions{Workers: 2, Lanes: 16, Progress: func(done, total int) {
		if done <= last || total != 100 {
			t.Errorf("progress %d/%d after %d", done, total, last)
		}
		last = done
		calls++
	}}
	if err := b.GradientSum(context.Background(), x, 0, alphas, weights, g, opt); err != nil {
		t.Fatal(err)
	}
	if last != 100 || calls != 7 {
		t.Errorf("progress ended at %d after %d calls, want 100 after 7", last, calls)
	}

	// Cancelled before the start, and from the progress callback.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.GradientSum(ctx, x, 0, alphas, weights, g, BatchOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	opt.Progress = func(done, total int) { cancel() }
	if err := b.GradientSum(ctx, x, 0, alphas, weights, g, opt); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during the run: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	if err := b.Occlusion(ctx, x, 0, make([]float64, 30), BatchOptions{Lanes: 1, Workers: 2, Progress: func(int, int) { cancel() }}); !errors.Is(err, context.Canceled) {
		t.Errorf("occlusion cancelled during the run: %v", err)
	}
	// And the Batcher still works afterwards.
	want := make([]float64, len(g))
	n.GradientSum(NewWorkspace(n), x, 0, alphas, weights, want)
	if err := b.GradientSum(context.Background(), x, 0, alphas, weights, g, BatchOptions{}); err != nil {
		t.Fatal(err)
	}
	assertSameBits(t, "after cancellation", g, want)
}

func TestBatchAllocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	n := mustNew(t, randomParams(rng, 7, 4, 2, true))
	b := NewBatcher(n)
	x := OneHot(randomSymbols(rng, 50, 4))
	dense := Dense(randomDense(rng, 50, 4), 50)
	alphas, weights := randomRule(rng, 100)
	g, o := make([]float64, 50*4), make([]float64, 50)
	ctx := context.Background()
	progress := func(int, int) {}
	for name, f := range map[string]func(){
		"GradientSum":      func() { b.GradientSum(ctx, x, 1, alphas, weights, g, BatchOptions{Workers: 2}) },
		"GradientSumDense": func() { b.GradientSum(ctx, dense, 1, alphas, weights, g, BatchOptions{Workers: 2}) },
		"GradientSumCheckpoints": func() {
			b.GradientSum(ctx, x, 1, alphas, weights, g, BatchOptions{Workers: 2, Budget: minIGBytes(shape{h: n.h, d: n.d}, x.Len(), len(alphas), false)})
		},
		"GradientSumProgress": func() { b.GradientSum(ctx, x, 1, alphas, weights, g, BatchOptions{Progress: progress}) },
		"Occlusion":           func() { b.Occlusion(ctx, x, 0, o, BatchOptions{Workers: 2}) },
		"Logits":              func() { b.Logits(dense, o[:2]) },
	} {
		f()
		if a := testing.AllocsPerRun(20, f); a != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, a)
		}
	}
}

func TestBatchErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	n := mustNew(t, randomParams(rng, 3, 2, 2, true))
	b := NewBatcher(n)
	ctx := context.Background()
	g := make([]float64, 4)
	for want, f := range map[string]func() error{
		"empty input":       func() error { return b.GradientSum(ctx, OneHot(nil), 0, nil, nil, g, BatchOptions{}) },
		"class 2":           func() error { return b.GradientSum(ctx, OneHot([]int{0, 1}), 2, nil, nil, g, BatchOptions{}) },
		"gradient buffer":   func() error { return b.GradientSum(ctx, OneHot([]int{0}), 0, nil, nil, g, BatchOptions{}) },
		"alphas but":        func() error { return b.GradientSum(ctx, OneHot([]int{0, 1}), 0, []float64{1}, nil, g, BatchOptions{}) },
		"symbol 5":          func() error { return b.Occlusion(ctx, OneHot([]int{5}), 0, g[:1], BatchOptions{}) },
		"occlusion buffer":  func() error { return b.Occlusion(ctx, OneHot([]int{0}), 0, g, BatchOptions{}) },
		"class -1":          func() error { return b.Occlusion(ctx, OneHot([]int{0}), -1, g[:1], BatchOptions{}) },
		"dense input has 3": func() error { return b.Occlusion(ctx, Dense([]float64{1, 2, 3}, 2), 0, g[:2], BatchOptions{}) },
		"logits has":        func() error { return b.Logits(OneHot([]int{0}), g) },
	} {
		if err := f(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got error %v, want one containing %q", err, want)
		}
	}
}

// TestBatcherGoroutinesEnd: a Batcher's worker goroutines end once it is
// garbage collected.
func TestBatcherGoroutinesEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	n := mustNew(t, randomParams(rng, 3, 2, 2, true))
	// Batchers of earlier tests may still be on their way out (collected,
	// their goroutines ending once they stop spinning).
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
		b := NewBatcher(n)
		x := OneHot(randomSymbols(rng, 40, 2))
		if err := b.Occlusion(context.Background(), x, 0, make([]float64, 40), BatchOptions{Workers: 4, Lanes: 1}); err != nil {
			t.Fatal(err)
		}
		if got := runtime.NumGoroutine(); got < before+3 {
			t.Errorf("%d goroutines during use, want at least %d", got, before+3)
		}
	}()
	for range 100 {
		runtime.GC()
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%d goroutines after the Batcher was collected, want %d", runtime.NumGoroutine(), before)
}

// TestDenseInputBlocks: Forward and Logits compute a dense input's products
// in blocks of inputBlock steps; every length around the block size, inputs
// with zeros and a sparse network give the bits of the step-by-step
// definition, z_t = b + s·(W_x·x_t) + W_h·h_{t−1}, with either product.
func TestDenseInputBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, hd := range [][2]int{{5, 3}, {40, 9}} {
		h, d := hd[0], hd[1]
		for _, sparse := range []bool{false, true} {
			p := randomParams(rng, h, d, 2, true)
			if sparse {
				for _, w := range [][]float64{p.Wx, p.Wh} {
					for i := range w {
						if rng.IntN(2) == 0 {
							w[i] = 0
						}
					}
				}
			}
			n := mustNew(t, p)
			for _, steps := range []int{1, 2, inputBlock - 1, inputBlock, inputBlock + 1, 2*inputBlock + 7} {
				v := randomDense(rng, steps, d)
				for i := range v {
					if rng.IntN(5) == 0 {
						v[i] = 0
					}
				}
				x := Dense(v, steps).Scaled(0.8)
				want, err := n.Forward(NewWorkspace(n), x)
				if err != nil {
					t.Fatal(err)
				}
				// One step at a time: u = W_x·x_t from zero, z = b + s·u
				// (b alone where u = 0), += W_h·h_{t−1}.
				g := n.gates
				hp, cp := make([]float64, h), make([]float64, h)
				z, zg, tc := make([]float64, g), make([]float64, h), make([]float64, h)
				for t := range steps {
					clear(z)
					kernel.AxpyRows(z, n.wxT, g, v[t*d:(t+1)*d])
					for r, u := range z {
						if u != 0 {
							z[r] = math.FMA(u, x.scale, n.p.B[r])
						} else {
							z[r] = n.p.B[r]
						}
					}
					kernel.AxpyRows(z, n.whT, g, hp)
					hn, cn := make([]float64, h), make([]float64, h)
					kernel.GateStep(z, zg, cp, cn, tc, hn)
					hp, cp = hn, cn
				}
				lin := make([]float64, n.c)
				kernel.AxpyRows(lin, n.wyT, n.c, hp)
				for k := range lin {
					lin[k] += n.p.By[k]
				}
				assertSameBits(t, fmt.Sprintf("H=%d D=%d sparse=%v T=%d Forward", h, d, sparse, steps), want, lin)
				for _, tiled := range []bool{false, true} {
					b := NewBatcher(n)
					b.job.tiled = tiled
					got := make([]float64, n.c)
					if err := b.Logits(x, got); err != nil {
						t.Fatal(err)
					}
					assertSameBits(t, fmt.Sprintf("H=%d D=%d sparse=%v T=%d tiled=%v", h, d, sparse, steps, tiled), got, want)
				}
			}
		}
	}
}

// TestBatchTableGates: networks whose sigmoid gates have all-zero weights in
// some units (as the white-box networks do) take those gates' activations
// from tables on the batched paths; IG and occlusion keep the single path's
// bits.
func TestBatchTableGates(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, tc := range []struct {
		h, d  int
		dense bool
	}{{7, 4, false}, {9, 3, true}, {5, 2, false}} {
		h, d := tc.h, tc.d
		p := randomParams(rng, h, d, 2, true)
		// Zero every weight of some gate rows: f and o of all units, i of
		// the first half, and one unit with nothing fixed.
		for j := range h {
			for _, q := range []int{0, 1, 3} {
				if (q == 0 && j >= h/2) || j == h-1 {
					continue
				}
				r := q*h + j
				clear(p.Wx[r*d : (r+1)*d])
				clear(p.Wh[r*h : (r+1)*h])
			}
		}
		n := mustNew(t, p)
		b := NewBatcher(n)
		// One-hot inputs table the gates without recurrent weights, dense
		// ones those without any weight: both include the zeroed rows.
		for k, ts := range b.job.tables {
			if ts.runs == nil {
				t.Fatalf("H=%d: no tabled gates found (set %d)", h, k)
			}
			if r := h + h - 1; !slices.ContainsFunc(ts.rows, func(rr [2]int) bool { return rr[0] <= r && r < rr[1] }) {
				t.Fatalf("H=%d: the forget gate of the last unit (row %d) is tabled in set %d: %v", h, r, k, ts.rows)
			}
		}
		steps := 29
		var x Input
		if tc.dense {
			x = Dense(randomDense(rng, steps, d), steps).Scaled(0.9)
		} else {
			sym := randomSymbols(rng, steps, d)
			sym[3] = -1
			x = ScaledOneHot(sym, 1.1)
		}
		alphas, weights := randomRule(rng, 37)
		want := make([]float64, steps*d)
		if err := n.GradientSum(NewWorkspace(n), x, 1, alphas, weights, want); err != nil {
			t.Fatal(err)
		}
		for _, opt := range []BatchOptions{{}, {Workers: 1, Lanes: 16}, {Workers: 2, Lanes: 5}, {Workers: 1, Lanes: 1}, {Workers: 1, Budget: 40 << 10}} {
			got := make([]float64, len(want))
			if err := b.GradientSum(context.Background(), x, 1, alphas, weights, got, opt); err != nil {
				t.Fatal(err)
			}
			assertSameBits(t, fmt.Sprintf("H=%d IG %+v", h, opt), got, want)
		}
		occ := make([]float64, steps)
		ws := NewWorkspace(n)
		for pos := range steps {
			var xo Input
			if tc.dense {
				v := append([]float64(nil), x.dense...)
				clear(v[pos*d : (pos+1)*d])
				xo = Dense(v, steps).Scaled(x.scale)
			} else {
				sym := append([]int(nil), x.symbols...)
				sym[pos] = -1
				xo = ScaledOneHot(sym, x.scale)
			}
			y, err := n.Forward(ws, xo)
			if err != nil {
				t.Fatal(err)
			}
			occ[pos] = y[0]
		}
		for _, opt := range []BatchOptions{{}, {Workers: 1, Lanes: 8}, {Workers: 2, Lanes: 3}} {
			got := make([]float64, steps)
			if err := b.Occlusion(context.Background(), x, 0, got, opt); err != nil {
				t.Fatal(err)
			}
			assertSameBits(t, fmt.Sprintf("H=%d occlusion %+v", h, opt), got, occ)
		}
	}
}

// TestBatchIntegratedGradients: the logits IntegratedGradients returns are
// Logits' bits and its sum is GradientSum's for the class it chose, on the
// path with x and its zero copy in spare lanes (few steps), on the one-hot
// path with the two as one two-lane batch, and on the dense path, with one
// and two workers.
func TestBatchIntegratedGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	p := randomParams(rng, 6, 3, 3, true)
	for j := range 6 { // sparse rows, as in the white-box networks
		clear(p.Wh[(2*6+j)*6 : (2*6+j+1)*6])
		clear(p.Wh[(1*6+j)*6 : (1*6+j+1)*6])
		clear(p.Wx[(1*6+j)*3 : (1*6+j+1)*3])
	}
	n := mustNew(t, p)
	steps := 37
	sym := randomSymbols(rng, steps, 3)
	sym[5] = -1
	for _, x := range []Input{ScaledOneHot(sym, 1.3), Dense(randomDense(rng, steps, 3), steps)} {
		wantY, wantY0 := make([]float64, 3), make([]float64, 3)
		b := NewBatcher(n)
		if err := b.Logits(x, wantY); err != nil {
			t.Fatal(err)
		}
		if err := b.Logits(x.Scaled(0), wantY0); err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{5, 40, 300} {
			alphas, weights := randomRule(rng, k)
			for _, opt := range []BatchOptions{{Workers: 1}, {Workers: 2}, {Workers: 1, Lanes: 3}, {Workers: 2, Lanes: 1}} {
				what := fmt.Sprintf("one-hot=%v steps=%d %+v", x.IsOneHot(), k, opt)
				y, y0, acc := make([]float64, 3), make([]float64, 3), make([]float64, steps*3)
				chosen := -1
				class := func(y []float64) (int, error) {
					chosen = Predict(y)
					return chosen, nil
				}
				if err := b.IntegratedGradients(context.Background(), x, class, alphas, weights, acc, y, y0, opt); err != nil {
					t.Fatal(err)
				}
				assertSameBits(t, what+" y", y, wantY)
				assertSameBits(t, what+" y0", y0, wantY0)
				want := make([]float64, steps*3)
				if err := b.GradientSum(context.Background(), x, chosen, alphas, weights, want, opt); err != nil {
					t.Fatal(err)
				}
				assertSameBits(t, what+" sum", acc, want)
				// A failing class choice is the call's error, with the
				// other workers waiting for the class (no deadlock).
				errClass := errors.New("no class")
				err := b.IntegratedGradients(context.Background(), x, func([]float64) (int, error) { return 0, errClass }, alphas, weights, acc, y, y0, opt)
				if err != errClass {
					t.Fatalf("%s: class error: got %v", what, err)
				}
				err = b.IntegratedGradients(context.Background(), x, func([]float64) (int, error) { return 7, nil }, alphas, weights, acc, y, y0, opt)
				if err == nil || !strings.Contains(err.Error(), "class") {
					t.Fatalf("%s: class 7 of 3: got %v", what, err)
				}
			}
		}
	}
}

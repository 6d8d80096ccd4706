package cell

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// midpointRule is the midpoint rule on n steps: α_k = (k + ½)/n, weight 1/n.
func midpointRule(n int) (alphas, weights []float64) {
	alphas, weights = make([]float64, n), make([]float64, n)
	for k := range n {
		alphas[k], weights[k] = (float64(k)+0.5)/float64(n), 1/float64(n)
	}
	return alphas, weights
}

// randomStacked returns a model with weights uniform in ±scale/√H.
func randomStacked(t testing.TB, rng *rand.Rand, in, h, layers int, bi bool, c int, scale float64, bias bool) *Model {
	t.Helper()
	dirs := 1
	if bi {
		dirs = 2
	}
	u := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = (2*rng.Float64() - 1) * scale / math.Sqrt(float64(h))
		}
		return v
	}
	p := Params{Input: in, Hidden: h, Layers: layers, Bidirectional: bi, Classes: c}
	for k := range layers {
		li := in
		if k > 0 {
			li = h * dirs
		}
		for range dirs {
			sc := CellParams{Wih: u(4 * h * li), Whh: u(4 * h * h)}
			if bias {
				sc.B = u(4 * h)
			}
			p.Cells = append(p.Cells, sc)
		}
	}
	p.Wy = u(c * h * dirs)
	if bias {
		p.By = u(c)
	}
	s, err := NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func randomStackedInput(rng *rand.Rand, steps, e int) Input {
	x := make([]float64, steps*e)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return Dense(x, steps)
}

// Gradients against central differences, every shape.
func TestModelGradientFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		layers int
		bi     bool
		bias   bool
	}{{1, false, true}, {1, true, true}, {2, true, true}, {3, false, false}, {3, true, false}} {
		s := randomStacked(t, rng, 4, 6, tc.layers, tc.bi, 3, 2, tc.bias)
		r, _ := NewRunner(s)
		steps := 5
		x := randomStackedInput(rng, steps, 4)
		grad := make([]float64, steps*4)
		if _, err := r.Gradient(x, 2, grad); err != nil {
			t.Fatal(err)
		}
		v := x.DenseValues()
		for i := range v {
			old := v[i]
			const eps = 1e-5
			v[i] = old + eps
			yp, _ := r.Forward(x)
			p := yp[2]
			v[i] = old - eps
			ym, _ := r.Forward(x)
			m := ym[2]
			v[i] = old
			fd := (p - m) / (2 * eps)
			if math.Abs(fd-grad[i]) > 1e-7*(1+math.Abs(fd)) {
				t.Fatalf("%+v: ∂y/∂x[%d] = %v, central difference %v", tc, i, grad[i], fd)
			}
		}
	}
}

// IG's sum: the same bits for every number of workers, lanes and budget,
// and close to the sum of one-lane gradients.
func TestModelIGDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	s := randomStacked(t, rng, 4, 8, 2, true, 3, 2, true)
	steps := 9
	x := randomStackedInput(rng, steps, 4)
	n := 37
	alphas, weights := make([]float64, n), make([]float64, n)
	for k := range n {
		alphas[k] = (float64(k) + 0.5) / float64(n)
		weights[k] = 1 / float64(n)
	}
	choose := func(y []float64) (int, error) { return 1, nil }
	var ref []float64
	for _, opt := range []RunOptions{{}, {Workers: 1}, {Workers: 3, Lanes: 5}, {Lanes: 1}, {Lanes: 17, Workers: 2}, {Budget: 1 << 16}, {Workers: 7, Lanes: 64}} {
		r, _ := NewRunner(s)
		grad, y, y0 := make([]float64, steps*4), make([]float64, 3), make([]float64, 3)
		if err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, grad, y, y0, opt); err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		if ref == nil {
			ref = grad
			// Against the sum of one-lane gradients.
			want := make([]float64, steps*4)
			g := make([]float64, steps*4)
			for k := range n {
				if _, err := r.Gradient(x.Scaled(alphas[k]), 1, g); err != nil {
					t.Fatal(err)
				}
				for i := range g {
					want[i] += weights[k] * g[i]
				}
			}
			for i := range want {
				if math.Abs(want[i]-grad[i]) > 1e-12*(1+math.Abs(want[i])) {
					t.Fatalf("IG sum[%d] = %v, one-lane sum %v", i, grad[i], want[i])
				}
			}
			yx, _ := r.Forward(x)
			for k := range y {
				if y[k] != yx[k] {
					t.Fatalf("y[%d] = %v, Forward %v", k, y[k], yx[k])
				}
			}
			continue
		}
		for i := range ref {
			if grad[i] != ref[i] {
				t.Fatalf("%+v: sum[%d] = %v, default options %v", opt, i, grad[i], ref[i])
			}
		}
	}
}

// Occlusion's batches against one-lane passes with the row zeroed: a
// bidirectional model's copies run whole, a one-direction model's start
// from the unoccluded prefix (occlusion_prefix.go), or run whole where the
// prefix's pass does not fit the budget.
func TestModelOcclusion(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		layers int
		bi     bool
	}{{2, true}, {1, false}, {3, false}} {
		s := randomStacked(t, rng, 3, 5, tc.layers, tc.bi, 4, 2, true)
		steps := 11
		x := randomStackedInput(rng, steps, 3)
		r, _ := NewRunner(s)
		// The budget of one worker's lanes and the input products: the
		// prefix's pass does not fit. A one-layer model's lanes keep a
		// ring trace (ring.go).
		p := runPlan{workers: 1, lanes: 3}
		laneSteps := steps
		if s.ringOK() {
			laneSteps = 2
		}
		tight := s.sharedBytes(p, steps) + s.laneCost(p, laneSteps)
		for _, opt := range []RunOptions{{}, {Lanes: 3, Workers: 2}, {Lanes: 1}, {Lanes: 3, Workers: 1, Budget: tight}} {
			out := make([]float64, steps)
			if err := r.Occlusion(context.Background(), x, 2, out, opt); err != nil {
				t.Fatal(err)
			}
			if used, want := r.prefix != nil, !tc.bi && opt.Budget == 0; used != want {
				t.Fatalf("%+v %+v: prefix used %v, want %v", tc, opt, used, want)
			}
			if ring, want := r.pool[0].r.steps == 2, tc.layers == 1; ring != want {
				t.Fatalf("%+v %+v: ring lanes %v, want %v", tc, opt, ring, want)
			}
			for pos := range steps {
				v := append([]float64(nil), x.DenseValues()...)
				clear(v[pos*3 : pos*3+3])
				y, _ := r.Forward(Dense(v, steps))
				if y[2] != out[pos] {
					t.Fatalf("%+v %+v: occluded %d: %v, one lane %v", tc, opt, pos, out[pos], y[2])
				}
			}
		}
	}
}

// LRP with bias factor 1 conserves relevance: inputs + initial state = ŷ_c.
func TestModelLRPConservation(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []struct {
		layers int
		bi     bool
	}{{1, false}, {1, true}, {2, true}, {3, false}} {
		s := randomStacked(t, rng, 4, 6, tc.layers, tc.bi, 3, 2, true)
		r, _ := NewRunner(s)
		steps := 7
		x := randomStackedInput(rng, steps, 4)
		rel := make([]float64, steps*4)
		out, err := r.LRP(x, 0, 0.001, 1, rel)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(out.Bias) > 1e-12*(1+math.Abs(out.Output)) {
			t.Fatalf("%+v: bias factor 1 leaves %v of %v unaccounted (initial %v)", tc, out.Bias, out.Output, out.Initial)
		}
	}
}

// Steady-state calls allocate nothing, on the default head and on the
// others with a hidden classifier layer.
func TestModelAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	testStackedAllocs(t, rng, randomStacked(t, rng, 4, 8, 2, true, 3, 2, true))
	for _, h := range []Head{HeadMax, HeadMean, HeadLast} {
		testStackedAllocs(t, rng, randomHeadStacked(t, rng, 4, 8, 3, headCase{2, true, h, ActTanh}))
	}
}

func testStackedAllocs(t *testing.T, rng *rand.Rand, s *Model) {
	r, _ := NewRunner(s)
	defer r.Close()
	steps := 10
	x := randomStackedInput(rng, steps, 4)
	n := 40
	alphas, weights := midpointRule(n)
	grad, y, y0, occ := make([]float64, steps*4), make([]float64, 3), make([]float64, 3), make([]float64, steps)
	choose := func([]float64) (int, error) { return 1, nil }
	ctx := context.Background()
	ref := Dense(make([]float64, steps*4), steps)
	dlAll := [][]float64{make([]float64, steps*4), make([]float64, steps*4), make([]float64, steps*4)}
	for name, f := range map[string]func(){
		"IG": func() {
			_ = r.IntegratedGradients(ctx, x, choose, alphas, weights, grad, y, y0, RunOptions{Workers: 2, Lanes: 16})
		},
		"Occlusion":   func() { _ = r.Occlusion(ctx, x, 1, occ, RunOptions{Workers: 2, Lanes: 4}) },
		"Gradient":    func() { _, _ = r.Gradient(x, 1, grad) },
		"LRP":         func() { _, _ = r.LRP(x, 1, 0.001, 1, grad) },
		"Forward":     func() { _, _ = r.Forward(x) },
		"DeepLIFT":    func() { _, _, _ = r.DeepLIFT(x, ref, 1, grad) },
		"DeepLIFTAll": func() { _, _, _ = r.DeepLIFTAll(ctx, x, ref, dlAll) },
	} {
		f()
		if a := testing.AllocsPerRun(20, f); a != 0 {
			t.Errorf("head %v: %s: %v allocations per call", s.Head(), name, a)
		}
	}
}

// A runner used by two goroutines at once fails fast instead of
// corrupting its buffers; after Close it returns errors.
func TestModelRunnerMisuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	s := randomStacked(t, rng, 3, 4, 1, true, 2, 2, true)
	r, _ := NewRunner(s)
	if !r.inUse.CompareAndSwap(false, true) {
		t.Fatal("fresh runner in use")
	}
	if _, err := r.Forward(randomStackedInput(rng, 3, 3)); err == nil {
		t.Fatal("a call during another succeeded")
	}
	r.inUse.Store(false)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Forward(randomStackedInput(rng, 3, 3)); err == nil {
		t.Fatal("a call after Close succeeded")
	}
	if _, err := NewRunner(nil); err == nil {
		t.Fatal("NewRunner(nil) succeeded")
	}
	var nilRunner *Runner
	if _, err := nilRunner.Forward(randomStackedInput(rng, 3, 3)); err == nil {
		t.Fatal("nil runner succeeded")
	}
	if _, err := NewModel(Params{Input: math.MaxInt / 2, Hidden: 1 << 20, Layers: 3, Classes: 2}); err == nil {
		t.Fatal("a model of 2^62 weights was accepted")
	}
}

// IG and occlusion stop when the context is done and report progress
// from 0 to the total, increasing.
func TestModelCancelProgress(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	s := randomStacked(t, rng, 3, 6, 2, true, 2, 2, true)
	r, _ := NewRunner(s)
	x := randomStackedInput(rng, 20, 3)
	n := 100
	alphas, weights := midpointRule(n)
	grad, y, y0 := make([]float64, 20*3), make([]float64, 2), make([]float64, 2)
	choose := func([]float64) (int, error) { return 0, nil }
	last := 0
	prog := func(done, total int) {
		if done <= last || done > total || total != n {
			t.Errorf("progress %d/%d after %d", done, total, last)
		}
		last = done
	}
	if err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, grad, y, y0, RunOptions{Lanes: 8, Workers: 3, Progress: prog}); err != nil {
		t.Fatal(err)
	}
	if last != n {
		t.Fatalf("progress ended at %d of %d", last, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, grad, y, y0, RunOptions{}); err == nil {
		t.Fatal("IG with a canceled context succeeded")
	}
	if err := r.Occlusion(ctx, x, 0, make([]float64, 20), RunOptions{}); err == nil {
		t.Fatal("occlusion with a canceled context succeeded")
	}
	for _, opt := range []RunOptions{{Budget: -1}, {Workers: -1}, {Lanes: -2}, {Budget: 100}} {
		if err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, grad, y, y0, opt); err == nil {
			t.Fatalf("%+v accepted", opt)
		}
	}
}

func TestIGChunkBlocks(t *testing.T) {
	for _, c := range []struct{ n, l, w, want int }{
		{50, 50, 1, 4},    // one chunk of 50 lanes
		{50, 50, 2, 2},    // 32 + 18
		{1000, 64, 2, 4},  // chunks of 64 lanes
		{1000, 64, 16, 4}, // 16 chunks
		{50, 5, 1, 1},     // blocks in batches of 5
		{16, 64, 4, 1},
		{100, 64, 1, 4},
	} {
		if got := igChunkBlocks(c.n, c.l, c.w); got != c.want {
			t.Errorf("igChunkBlocks(n=%d, l=%d, w=%d) = %d, want %d", c.n, c.l, c.w, got, c.want)
		}
	}
}

// The memory a runner holds after a call stays within that call's budget,
// also after an earlier call with a larger one.
func TestModelBudgetHeld(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	s := randomStacked(t, rng, 4, 16, 2, true, 3, 2, true)
	r, _ := NewRunner(s)
	x := randomStackedInput(rng, 30, 4)
	n := 64
	alphas, weights := midpointRule(n)
	grad, y, y0 := make([]float64, 30*4), make([]float64, 3), make([]float64, 3)
	choose := func([]float64) (int, error) { return 0, nil }
	var ref []float64
	for _, budget := range []int64{0, 1 << 20, 300 << 10} {
		if err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, grad, y, y0, RunOptions{Budget: budget, Workers: 2}); err != nil {
			t.Fatal(err)
		}
		held := int64(8 * len(r.u))
		for _, wk := range r.pool {
			held += wk.bytes()
		}
		if budget > 0 && held > budget {
			t.Errorf("budget %d: %d bytes held", budget, held)
		}
		if ref == nil {
			ref = append([]float64(nil), grad...)
		} else {
			assertSameBits(t, fmt.Sprintf("budget %d", budget), grad, ref)
		}
	}
}

// LRP of a scaled input is LRP of the input with its values scaled, up to
// rounding (the model scales the input products, α·(W·x), not the input),
// on every depth: the scaled copy has a buffer of its own.
func TestModelLRPScaled(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for layers := 1; layers <= 3; layers++ {
		s := randomStacked(t, rng, 3, 5, layers, true, 2, 2, true)
		r, _ := NewRunner(s)
		x := randomStackedInput(rng, 6, 3)
		got := make([]float64, 18)
		if _, err := r.LRP(x.Scaled(0.3), 1, 0.001, 1, got); err != nil {
			t.Fatal(err)
		}
		v := append([]float64(nil), x.DenseValues()...)
		for i := range v {
			v[i] = float64(0.3 * v[i])
		}
		want := make([]float64, 18)
		if _, err := r.LRP(Dense(v, 6), 1, 0.001, 1, want); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("%d layers: relevance %d is %v, scaled values give %v", layers, i, got[i], want[i])
			}
		}
	}
}

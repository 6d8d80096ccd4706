package cell

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// The reference: a plain float64 LSTM classifier (one layer, one
// direction, head hn, one Linear decoder) written out loop by loop with
// math.Exp and math.Tanh, its forward pass (referenceForward), BPTT by
// central differences and LRP as the authors' NumPy code
// (referenceLRP), independent of the engine. The tests below check the
// engine's one-layer models against it, and the engine's passes against
// each other bit for bit (one-hot and dense rows, one lane and many, a
// pass continued from a state).

// netParams are the weights of a one-layer LSTM classifier in PyTorch's
// layout and gate order (i, f, g, o): W_x 4H×D, W_h 4H×H, B = b_ih + b_hh,
// the decoder W_y C×H and b_y.
type netParams struct {
	Hidden, Input, Classes int
	Wx, Wh, B, Wy, By      []float64
}

// stacked is p as the engine's model, with the white-box networks' LRP
// rule (LRPHao, whose decoder the reference follows).
func (p netParams) stacked() Params {
	return Params{Input: p.Input, Hidden: p.Hidden, Layers: 1, Classes: p.Classes,
		Cells: []CellParams{{Wih: p.Wx, Whh: p.Wh, B: p.B}}, Wy: p.Wy, By: p.By, LRP: LRPHao}
}

// randomParams returns a dense, non-saturated network: weights of scale
// about 1/√fan-in, so that every gate works in its sensitive range.
func randomParams(rng *rand.Rand, h, d, c int, bias bool) netParams {
	v := func(n int, scale float64) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = scale * rng.NormFloat64()
		}
		return s
	}
	p := netParams{Hidden: h, Input: d, Classes: c,
		Wx: v(4*h*d, 1/math.Sqrt(float64(d))), Wh: v(4*h*h, 1/math.Sqrt(float64(h))),
		B: make([]float64, 4*h), Wy: v(c*h, 1), By: make([]float64, c)}
	if bias {
		p.B, p.By = v(4*h, 0.5), v(c, 0.5)
	}
	return p
}

// mustNew returns a runner of p's model.
func mustNew(t testing.TB, p netParams) *Runner {
	t.Helper()
	s, err := NewModel(p.stacked())
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func randomDense(rng *rand.Rand, steps, d int) []float64 {
	x := make([]float64, steps*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

func randomSymbols(rng *rand.Rand, steps, d int) []int {
	s := make([]int, steps)
	for i := range s {
		s[i] = rng.IntN(d)
	}
	return s
}

// referenceForward is an independent, plain implementation of the LSTM
// (z = W_x x⁽ᵗ⁾ + W_h h⁽ᵗ⁻¹⁾ + b, gates i, f, g, o; c⁽ᵗ⁾ = f⊙c⁽ᵗ⁻¹⁾ + i⊙g;
// h⁽ᵗ⁾ = o⊙tanh(c⁽ᵗ⁾); ŷ = W_y h⁽ᵀ⁾ + b_y, from h⁽⁰⁾ = c⁽⁰⁾ = 0) with
// math.Exp and math.Tanh, for cross-checking.
func referenceForward(p netParams, x []float64, steps int) (logits []float64, hs, cs [][]float64) {
	h, d := p.Hidden, p.Input
	sig := func(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
	hPrev, cPrev := make([]float64, h), make([]float64, h)
	for t := range steps {
		z := make([]float64, 4*h)
		for k := range z {
			z[k] = p.B[k]
			for i := range d {
				z[k] += p.Wx[k*d+i] * x[t*d+i]
			}
			for j := range h {
				z[k] += p.Wh[k*h+j] * hPrev[j]
			}
		}
		hn, cn := make([]float64, h), make([]float64, h)
		for j := range h {
			i, f, g, o := sig(z[j]), sig(z[h+j]), math.Tanh(z[2*h+j]), sig(z[3*h+j])
			cn[j] = f*cPrev[j] + i*g
			hn[j] = o * math.Tanh(cn[j])
		}
		hs, cs = append(hs, hn), append(cs, cn)
		hPrev, cPrev = hn, cn
	}
	logits = make([]float64, p.Classes)
	for k := range logits {
		logits[k] = p.By[k]
		for j := range h {
			logits[k] += p.Wy[k*h+j] * hPrev[j]
		}
	}
	return logits, hs, cs
}

func relErr(got, want float64) float64 {
	return math.Abs(got-want) / math.Max(math.Abs(want), 1e-300)
}

func TestForwardMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][3]int{{1, 1, 1}, {3, 2, 2}, {7, 4, 2}, {16, 9, 3}, {33, 5, 4}} {
		p := randomParams(rng, sz[0], sz[1], sz[2], true)
		n := mustNew(t, p)
		for _, steps := range []int{1, 2, 17} {
			x := randomDense(rng, steps, p.Input)
			got, err := n.Forward(Dense(x, steps))
			if err != nil {
				t.Fatal(err)
			}
			want, hs, cs := referenceForward(p, x, steps)
			for k := range want {
				if e := relErr(got[k], want[k]); e > 1e-12 && math.Abs(got[k]-want[k]) > 1e-14 {
					t.Errorf("H=%d D=%d T=%d logit %d: got %v want %v", p.Hidden, p.Input, steps, k, got[k], want[k])
				}
			}
			h, c := make([]float64, p.Hidden), make([]float64, p.Hidden)
			if err := n.Final(h, c); err != nil {
				t.Fatal(err)
			}
			for j := range h {
				if math.Abs(h[j]-hs[steps-1][j]) > 1e-13 || math.Abs(c[j]-cs[steps-1][j]) > 1e-13 {
					t.Errorf("H=%d T=%d final state %d: h %v c %v, want %v %v", p.Hidden, steps, j, h[j], c[j], hs[steps-1][j], cs[steps-1][j])
				}
			}
		}
	}
}

// TestOneHotEqualsDense: the fast path for one-hot rows gives the bits of the
// dense form of the same matrix, also for rows of no symbol and scaled copies.
func TestOneHotEqualsDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := randomParams(rng, 9, 5, 3, true)
	n := mustNew(t, p)
	sym := randomSymbols(rng, 23, 5)
	sym[4], sym[11] = -1, -1
	for _, alpha := range []float64{1, 0.37, 0, 2.5} {
		dense := make([]float64, len(sym)*5)
		for t, s := range sym {
			if s >= 0 {
				dense[t*5+s] = 1
			}
		}
		oh, dx := ScaledOneHot(sym, alpha), Dense(dense, len(sym)).Scaled(alpha)
		a, _ := n.Forward(oh)
		a = append([]float64(nil), a...)
		b, _ := n.Forward(dx)
		assertSameBits(t, "logits", a, b)
		ga, gb := make([]float64, len(dense)), make([]float64, len(dense))
		if _, err := n.Gradient(oh, 1, ga); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Gradient(dx, 1, gb); err != nil {
			t.Fatal(err)
		}
		assertSameBits(t, "gradient", ga, gb)
		if _, err := n.LRP(oh, 2, DefaultEpsilon, 0, ga); err != nil {
			t.Fatal(err)
		}
		if _, err := n.LRP(dx, 2, DefaultEpsilon, 0, gb); err != nil {
			t.Fatal(err)
		}
		assertSameBits(t, "lrp", ga, gb)
	}
}

func assertSameBits(t *testing.T, what string, a, b []float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: lengths %d and %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("%s[%d]: %v (%#x) vs %v (%#x)", what, i, a[i], math.Float64bits(a[i]), b[i], math.Float64bits(b[i]))
		}
	}
}

// TestGradientFiniteDifferences checks BPTT against central differences of
// the reference on random non-saturated networks.
func TestGradientFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sz := range [][4]int{{1, 1, 1, 1}, {3, 2, 2, 4}, {7, 4, 2, 9}, {12, 6, 3, 15}} {
		h, d, c, steps := sz[0], sz[1], sz[2], sz[3]
		p := randomParams(rng, h, d, c, true)
		n := mustNew(t, p)
		x := randomDense(rng, steps, d)
		for class := range c {
			g := make([]float64, len(x))
			if _, err := n.Gradient(Dense(x, steps), class, g); err != nil {
				t.Fatal(err)
			}
			fd := make([]float64, len(x))
			const eps = 1e-5
			for i := range x {
				old := x[i]
				x[i] = old + eps
				up, _, _ := referenceForward(p, x, steps)
				x[i] = old - eps
				down, _, _ := referenceForward(p, x, steps)
				fd[i] = (up[class] - down[class]) / (2 * eps)
				x[i] = old
			}
			var num, den float64
			for i := range g {
				num += (g[i] - fd[i]) * (g[i] - fd[i])
				den += g[i] * g[i]
			}
			if e := math.Sqrt(num / den); !(e < 1e-6) {
				t.Errorf("H=%d D=%d T=%d class %d: relative error %.3g\n got %v\nwant %v", h, d, steps, class, e, g, fd)
			}
		}
	}
}

// TestLRPConservation: with zero biases and ε → 0 the input relevance and the
// initial state's share add up to ŷ_c; with biases, the g biases' share
// (LRPHao's Relevance.Bias) makes up the rest.
func TestLRPConservation(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, bias := range []bool{false, true} {
		for _, sz := range [][4]int{{1, 1, 1, 1}, {4, 3, 2, 6}, {11, 5, 3, 20}} {
			h, d, c, steps := sz[0], sz[1], sz[2], sz[3]
			p := randomParams(rng, h, d, c, bias)
			n := mustNew(t, p)
			x := randomDense(rng, steps, d)
			rel := make([]float64, len(x))
			for class := range c {
				info, err := n.LRP(Dense(x, steps), class, 1e-12, 0, rel)
				if err != nil {
					t.Fatal(err)
				}
				total := info.Initial + info.Bias
				for _, r := range rel {
					total += r
				}
				if e := relErr(total, info.Output); e > 1e-7 {
					t.Errorf("bias=%v H=%d T=%d class %d: Σ relevance %v + bias %v + initial %v = %v, want ŷ_c = %v",
						bias, h, steps, class, total-info.Initial-info.Bias, info.Bias, info.Initial, total, info.Output)
				}
				if !bias && info.Bias != 0 {
					t.Errorf("zero biases absorbed %v", info.Bias)
				}
			}
		}
	}
}

// referenceLRP transliterates the authors' NumPy LRP (Arras et al.'s lrp_linear).
func referenceLRP(p netParams, x []float64, steps, class int, eps float64) []float64 {
	h, d := p.Hidden, p.Input
	logits, hs, cs := referenceForward(p, x, steps)
	stab := func(z float64) float64 {
		if z >= 0 {
			return z + eps
		}
		return z - eps
	}
	sig := func(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
	// Recompute gates.
	gi, gf, gg, zg := make([][]float64, steps), make([][]float64, steps), make([][]float64, steps), make([][]float64, steps)
	zeros := make([]float64, h)
	for t := range steps {
		hPrev := zeros
		if t > 0 {
			hPrev = hs[t-1]
		}
		gi[t], gf[t], gg[t], zg[t] = make([]float64, h), make([]float64, h), make([]float64, h), make([]float64, h)
		for j := range h {
			var z [4]float64
			for gate := range 4 {
				k := gate*h + j
				z[gate] = p.B[k]
				for i := range d {
					z[gate] += p.Wx[k*d+i] * x[t*d+i]
				}
				for l := range h {
					z[gate] += p.Wh[k*h+l] * hPrev[l]
				}
			}
			gi[t][j], gf[t][j], gg[t][j], zg[t][j] = sig(z[0]), sig(z[1]), math.Tanh(z[2]), z[2]
		}
	}
	hT := hs[steps-1]
	lin := 0.0
	for j := range h {
		lin += p.Wy[class*h+j] * hT[j]
	}
	rc := make([]float64, h)
	for j := range h {
		rc[j] = p.Wy[class*h+j] * hT[j] * logits[class] / stab(lin)
	}
	rel := make([]float64, steps*d)
	for t := steps - 1; t >= 0; t-- {
		cPrev, hPrev := zeros, zeros
		if t > 0 {
			cPrev, hPrev = cs[t-1], hs[t-1]
		}
		next := make([]float64, h)
		for j := range h {
			s := rc[j] / stab(cs[t][j])
			next[j] += gf[t][j] * cPrev[j] * s
			q := gi[t][j] * gg[t][j] * s / stab(zg[t][j])
			k := 2*h + j
			for i := range d {
				rel[t*d+i] += p.Wx[k*d+i] * x[t*d+i] * q
			}
			for l := range h {
				next[l] += p.Wh[k*h+l] * hPrev[l] * q
			}
		}
		rc = next
	}
	return rel
}

// TestLRPMatchesReference: the LRPHao rule is the authors' NumPy LRP.
func TestLRPMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, sz := range [][4]int{{2, 2, 2, 3}, {7, 4, 2, 10}, {13, 6, 3, 8}} {
		h, d, c, steps := sz[0], sz[1], sz[2], sz[3]
		p := randomParams(rng, h, d, c, true)
		n := mustNew(t, p)
		x := randomDense(rng, steps, d)
		rel := make([]float64, len(x))
		for class := range c {
			if _, err := n.LRP(Dense(x, steps), class, DefaultEpsilon, 0, rel); err != nil {
				t.Fatal(err)
			}
			want := referenceLRP(p, x, steps, class, DefaultEpsilon)
			for i := range want {
				if relErr(rel[i], want[i]) > 1e-9 && math.Abs(rel[i]-want[i]) > 1e-13 {
					t.Errorf("H=%d class %d: rel[%d] = %v, want %v", h, class, i, rel[i], want[i])
				}
			}
		}
	}
}

// TestIGEqualsSingle: IG's batched sum of gradients on one-hot input gives
// the bits of the single gradients it stands for, summed in blocks of 16
// α steps with one fused multiply-add per term, whatever the workers,
// lanes and budget.
func TestIGEqualsSingle(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	p := randomParams(rng, 8, 4, 3, true)
	n := mustNew(t, p)
	x := OneHot(randomSymbols(rng, 12, 4))
	alphas, weights := make([]float64, 37), make([]float64, 37)
	for k := range alphas {
		alphas[k], weights[k] = rng.Float64(), rng.Float64()
	}
	want, part, g := make([]float64, 12*4), make([]float64, 12*4), make([]float64, 12*4)
	for b0 := 0; b0 < len(alphas); b0 += igBlock {
		clear(part)
		for k := b0; k < min(b0+igBlock, len(alphas)); k++ {
			if _, err := n.Gradient(x.Scaled(alphas[k]), 1, g); err != nil {
				t.Fatal(err)
			}
			for i := range g {
				part[i] = math.FMA(weights[k], g[i], part[i])
			}
		}
		for i := range part {
			want[i] += part[i]
		}
	}
	choose := func([]float64) (int, error) { return 1, nil }
	y, y0 := make([]float64, 3), make([]float64, 3)
	for _, opt := range []RunOptions{{}, {Workers: 1}, {Workers: 2, Lanes: 3}, {Workers: 3, Lanes: 1}, {Budget: 64 << 10}} {
		acc := make([]float64, 12*4)
		if err := n.IntegratedGradients(context.Background(), x, choose, alphas, weights, acc, y, y0, opt); err != nil {
			t.Fatal(err)
		}
		assertSameBits(t, "gradient sum", acc, want)
	}
}

// TestForwardFromContinues: a pass continued from the state a prefix left
// (Final) gives the bits of the whole pass, and the runner is back to the
// zero state afterwards.
func TestForwardFromContinues(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	n := mustNew(t, randomParams(rng, 6, 3, 2, true))
	sym := randomSymbols(rng, 15, 3)
	whole, _ := n.Forward(OneHot(sym))
	whole = append([]float64(nil), whole...)
	hw, cw := make([]float64, 6), make([]float64, 6)
	if err := n.Final(hw, cw); err != nil {
		t.Fatal(err)
	}
	n.Forward(OneHot(sym[:6]))
	h, c := make([]float64, 6), make([]float64, 6)
	if err := n.Final(h, c); err != nil {
		t.Fatal(err)
	}
	rest, err := n.ForwardFrom(OneHot(sym[6:]), h, c)
	if err != nil {
		t.Fatal(err)
	}
	assertSameBits(t, "continued logits", whole, rest)
	if err := n.Final(h, c); err != nil {
		t.Fatal(err)
	}
	assertSameBits(t, "continued h", hw, h)
	assertSameBits(t, "continued c", cw, c)
	again, _ := n.Forward(OneHot(sym))
	assertSameBits(t, "logits after ForwardFrom", whole, again)
	// Final reads only what Forward or ForwardFrom left.
	g := make([]float64, 15*3)
	n.Gradient(OneHot(sym), 0, g)
	if err := n.Final(h, c); err == nil {
		t.Error("Final after Gradient: no error")
	}
}

func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	n := mustNew(t, randomParams(rng, 10, 4, 2, true))
	x := OneHot(randomSymbols(rng, 30, 4))
	run := func() []float64 {
		g := make([]float64, 30*4)
		y, y0 := make([]float64, 2), make([]float64, 2)
		alphas, weights := []float64{0.1, 0.5, 0.9}, []float64{0.3, 0.4, 0.3}
		choose := func([]float64) (int, error) { return 0, nil }
		if err := n.IntegratedGradients(context.Background(), x, choose, alphas, weights, g, y, y0, RunOptions{}); err != nil {
			t.Fatal(err)
		}
		return g
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	a := run()
	runtime.GOMAXPROCS(2)
	assertSameBits(t, "GOMAXPROCS 1 vs 2", a, run())
}

func TestAllocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	n := mustNew(t, randomParams(rng, 16, 4, 2, true))
	sym := randomSymbols(rng, 40, 4)
	dense := randomDense(rng, 40, 4)
	g := make([]float64, 40*4)
	h0, c0 := make([]float64, 16), make([]float64, 16)
	for name, f := range map[string]func(){
		"Forward":      func() { n.Forward(OneHot(sym)) },
		"ForwardDense": func() { n.Forward(Dense(dense, 40).Scaled(0.5)) },
		"ForwardFrom":  func() { n.ForwardFrom(OneHot(sym), h0, c0) },
		"Final":        func() { n.Forward(OneHot(sym)); n.Final(h0, c0) },
		"Gradient":     func() { n.Gradient(OneHot(sym), 1, g) },
		"LRP":          func() { n.LRP(Dense(dense, 40), 0, DefaultEpsilon, 0, g) },
	} {
		f() // grow the buffers
		if a := testing.AllocsPerRun(20, f); a != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, a)
		}
	}
}

func TestErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	good := randomParams(rng, 3, 2, 2, true)
	n := mustNew(t, good)
	g := make([]float64, 4)
	for want, f := range map[string]func() error{
		"empty input":       func() error { _, err := n.Forward(OneHot(nil)); return err },
		"symbol 2":          func() error { _, err := n.Forward(OneHot([]int{0, 2})); return err },
		"symbol -2":         func() error { _, err := n.Forward(OneHot([]int{-2})); return err },
		"dense input has 3": func() error { _, err := n.Forward(Dense([]float64{1, 2, 3}, 2)); return err },
		"x[1][0] is NaN":    func() error { _, err := n.Forward(Dense([]float64{1, 2, math.NaN(), 3}, 2)); return err },
		"scale is +Inf":     func() error { _, err := n.Forward(OneHot([]int{1}).Scaled(math.Inf(1))); return err },
		"class 2":           func() error { _, err := n.Gradient(OneHot([]int{0, 1}), 2, g); return err },
		"class -1":          func() error { _, err := n.LRP(OneHot([]int{0, 1}), -1, 0.001, 0, g); return err },
		"output buffer":     func() error { _, err := n.Gradient(OneHot([]int{0}), 0, g); return err },
		"epsilon":           func() error { _, err := n.LRP(OneHot([]int{0, 1}), 0, math.NaN(), 0, g); return err },
		"bias factor 0.5":   func() error { _, err := n.LRP(OneHot([]int{0, 1}), 0, 0.001, 0.5, g); return err },
		"initial state has": func() error { _, err := n.ForwardFrom(OneHot([]int{0}), nil, nil); return err },
		"final state buffers": func() error {
			n.Forward(OneHot([]int{0}))
			return n.Final(nil, nil)
		},
	} {
		if err := f(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got error %v, want one containing %q", err, want)
		}
	}
	// LRPHao is for one LSTM layer, one direction, head hn, one Linear.
	p := good.stacked()
	p.Head = HeadLast
	if _, err := NewModel(p); err == nil || !strings.Contains(err.Error(), "LRP rule hao") {
		t.Errorf("LRPHao with head last: err = %v", err)
	}
	p = good.stacked()
	p.LRP = 7
	if _, err := NewModel(p); err == nil || !strings.Contains(err.Error(), "unknown LRP rule") {
		t.Errorf("LRP rule 7: err = %v", err)
	}
}

// Sizes whose products overflow or whose weights exceed MaxWeights are
// errors, not panics or allocations.
func TestSizesWithoutOverflow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := mustNew(t, randomParams(rng, 2, 1, 2, false))
	for _, steps := range []int{math.MaxInt/2 + 1, math.MaxInt/4 + 1, math.MaxInt} {
		if _, err := n.Forward(Dense([]float64{}, steps)); err == nil || !strings.Contains(err.Error(), "dense input has 0 values") {
			t.Errorf("Dense(empty, %d): err = %v", steps, err)
		}
	}
	for _, sz := range [][3]int{{1, math.MaxInt/2 + 1, 1}, {math.MaxInt/2 + 1, 1, 1}, {1, 1, math.MaxInt}, {5000, 4000, 2}} {
		if _, err := Weights(sz[0], sz[1], sz[2]); err == nil || !strings.Contains(err.Error(), "weights") {
			t.Errorf("Weights(H=%d D=%d C=%d): err = %v, want the weight cap", sz[0], sz[1], sz[2], err)
		}
	}
	if _, err := Weights(0, 1, 1); err == nil || !strings.Contains(err.Error(), "sizes must be positive") {
		t.Errorf("Weights(0, 1, 1): err = %v", err)
	}
	if w, err := Weights(3, 2, 2); err != nil || w != 4*3*(2+3+1)+2*(3+1) {
		t.Errorf("Weights(3, 2, 2) = %d, %v", w, err)
	}
}

// LRP with ε = 0 on a zero denominator is an error, not NaN; ForwardFrom
// refuses a NaN initial state; Predict passes over NaN.
func TestNaNHandling(t *testing.T) {
	// All weights zero: every z is 0, so ε = 0 divides by zero.
	p := netParams{Hidden: 1, Input: 1, Classes: 1, Wx: make([]float64, 4), Wh: make([]float64, 4), B: make([]float64, 4), Wy: make([]float64, 1), By: make([]float64, 1)}
	n := mustNew(t, p)
	rel := make([]float64, 2)
	if _, err := n.LRP(OneHot([]int{0, 0}), 0, 0, 0, rel); err == nil || !strings.Contains(err.Error(), "epsilon 0") {
		t.Errorf("LRP(ε = 0) on z = 0: err = %v", err)
	}
	if r, err := n.LRP(OneHot([]int{0, 0}), 0, DefaultEpsilon, 0, rel); err != nil || r.Output != 0 {
		t.Errorf("LRP(ε = 0.001): %v, %v", r, err)
	}
	for _, st := range [][2][]float64{{{math.NaN()}, {0}}, {{0}, {math.Inf(1)}}} {
		if _, err := n.ForwardFrom(OneHot([]int{0}), st[0], st[1]); err == nil || !strings.Contains(err.Error(), "initial state") {
			t.Errorf("ForwardFrom(%v, %v): err = %v", st[0], st[1], err)
		}
	}
	nan := math.NaN()
	for _, c := range []struct {
		logits []float64
		want   int
	}{
		{[]float64{nan, 1}, 1}, {[]float64{1, nan}, 0}, {[]float64{nan, nan}, 0}, {nil, 0},
		{[]float64{nan, -1, 2, nan}, 2}, {[]float64{3, 3}, 0}, {[]float64{math.Inf(-1), nan}, 0},
	} {
		if got := Predict(c.logits); got != c.want {
			t.Errorf("Predict(%v) = %d, want %d", c.logits, got, c.want)
		}
	}
}

func randomRule(rng *rand.Rand, n int) (alphas, weights []float64) {
	alphas, weights = make([]float64, n), make([]float64, n)
	for k := range alphas {
		alphas[k], weights[k] = rng.Float64(), rng.Float64()
	}
	alphas[0] = 0 // a zero copy: the one-hot path skips its input product
	return alphas, weights
}

// perClass returns C buffers of n values.
func perClass(c, n int) [][]float64 {
	v := make([][]float64, c)
	for k := range v {
		v[k] = make([]float64, n)
	}
	return v
}

func mustRunner(t testing.TB, s *Model) *Runner {
	t.Helper()
	r, err := NewRunner(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

package cell

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// gruHeads are the heads the GRU tests cover.
var gruHeads = []Head{HeadHN, HeadHNBF, HeadLast, HeadMean, HeadMax}

// gruCases covers every head on one and two directions and one and two
// layers, with the three classifiers.
func gruCases() []headCase {
	var cs []headCase
	for _, h := range gruHeads {
		for _, shape := range []struct {
			layers int
			bi     bool
		}{{1, false}, {1, true}, {2, false}, {2, true}} {
			for _, a := range []Activation{ActNone, ActReLU, ActTanh} {
				cs = append(cs, headCase{shape.layers, shape.bi, h, a})
			}
		}
	}
	return cs
}

// randomGRU returns a GRU model of c's shape with weights uniform in
// ±scale/√H (and, with a hidden classifier layer, 5 units).
func randomGRU(t testing.TB, rng *rand.Rand, in, h, classes int, c headCase, scale float64, bias bool) *Model {
	t.Helper()
	dirs := 1
	if c.bi {
		dirs = 2
	}
	u := func(n int, sc float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = (2*rng.Float64() - 1) * sc
		}
		return v
	}
	w := scale / math.Sqrt(float64(h))
	p := Params{Input: in, Hidden: h, Layers: c.layers, Bidirectional: c.bi, Classes: classes, Kind: LayerGRU, Head: c.head, Act: c.act}
	for k := range c.layers {
		li := in
		if k > 0 {
			li = h * dirs
		}
		for range dirs {
			sc := CellParams{Wih: u(3*h*li, w), Whh: u(3*h*h, w)}
			if bias {
				sc.B, sc.Bhh = u(3*h, w), u(3*h, w)
			}
			p.Cells = append(p.Cells, sc)
		}
	}
	d := h * dirs
	if c.act != ActNone {
		p.Units = 5
		p.W1, p.B1 = u(5*d, 1), u(5, 0.5)
		p.Wy = u(classes*5, 1)
	} else {
		p.Wy = u(classes*d, w)
	}
	if bias {
		p.By = u(classes, 0.5)
	}
	s, err := NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// refGRULayers runs the GRU layers of s on x by PyTorch's equations, plain
// loops, and returns the top layer's outputs (T × H·dirs) and final states.
func refGRULayers(s *Model, x []float64, steps int) (out [][]float64, hn [2][]float64) {
	p := s.Params()
	h, dirs := s.h, s.dirs
	layerIn := x
	for k := range p.Layers {
		in := s.layerInput(k)
		out = make([][]float64, steps)
		for t := range out {
			out[t] = make([]float64, h*dirs)
		}
		for d := range dirs {
			c := p.Cells[k*dirs+d]
			hs := make([]float64, h)
			for i := range steps {
				t := order(d == 1, i, steps)
				gi, gh := make([]float64, 3*h), make([]float64, 3*h)
				for r := range 3 * h {
					a, b := 0.0, 0.0
					if c.B != nil {
						a, b = c.B[r], c.Bhh[r]
					}
					for j := range in {
						a += c.Wih[r*in+j] * layerIn[t*in+j]
					}
					for j := range h {
						b += c.Whh[r*h+j] * hs[j]
					}
					gi[r], gh[r] = a, b
				}
				nh := make([]float64, h)
				for j := range h {
					rg := sigm(gi[j] + gh[j])
					zg := sigm(gi[h+j] + gh[h+j])
					n := math.Tanh(gi[2*h+j] + rg*gh[2*h+j])
					nh[j] = (1-zg)*n + zg*hs[j]
				}
				hs = nh
				copy(out[t][d*h:], hs)
			}
			hn[d] = hs
		}
		layerIn = make([]float64, 0, steps*h*dirs)
		for _, o := range out {
			layerIn = append(layerIn, o...)
		}
	}
	return out, hn
}

// refGRU computes a GRU model's logits from scratch.
func refGRU(s *Model, x []float64, steps int) []float64 {
	out, hn := refGRULayers(s, x, steps)
	return refClassify(s, out, hn, steps)
}

// refClassify is refHead's head and classifier on given layer outputs.
func refClassify(s *Model, out [][]float64, hn [2][]float64, steps int) []float64 {
	p := s.p
	var v []float64
	switch p.Head {
	case HeadHN:
		v = append(append(v, hn[0]...), hn[1]...)
	case HeadHNBF:
		if s.dirs == 1 {
			v = hn[0]
		} else {
			v = append(append(v, hn[1]...), hn[0]...)
		}
	case HeadLast:
		v = out[steps-1]
	case HeadMean, HeadMax:
		v = append([]float64(nil), out[0]...)
		for t := 1; t < steps; t++ {
			for i, o := range out[t] {
				if p.Head == HeadMean {
					v[i] += o
				} else {
					v[i] = math.Max(v[i], o)
				}
			}
		}
		if p.Head == HeadMean {
			for i := range v {
				v[i] /= float64(steps)
			}
		}
	}
	if p.Act != ActNone {
		a := make([]float64, p.Units)
		for m := range a {
			if p.B1 != nil {
				a[m] = p.B1[m]
			}
			for i, vi := range v {
				a[m] += p.W1[m*len(v)+i] * vi
			}
			if p.Act == ActReLU {
				a[m] = math.Max(a[m], 0)
			} else {
				a[m] = math.Tanh(a[m])
			}
		}
		v = a
	}
	y := make([]float64, p.Classes)
	for c := range y {
		if p.By != nil {
			y[c] = p.By[c]
		}
		for i, vi := range v {
			y[c] += p.Wy[c*len(v)+i] * vi
		}
	}
	return y
}

func relClose(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

// The forward pass against the plain loop, every head and shape; the
// gradient against central differences.
func TestGRUForwardAndGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(101, 102))
	for _, c := range gruCases() {
		for _, bias := range []bool{true, false} {
			s := randomGRU(t, rng, 4, 5, 3, c, 2, bias)
			if s.Kind() != LayerGRU {
				t.Fatal("kind")
			}
			steps := 6
			x := randomStackedInput(rng, steps, 4)
			r, _ := NewRunner(s)
			y, err := r.Forward(x)
			if err != nil {
				t.Fatal(err)
			}
			want := refGRU(s, x.DenseValues(), steps)
			for k := range want {
				if !relClose(y[k], want[k], 1e-13) {
					t.Fatalf("%v bias=%v: y[%d] = %v, reference %v", c, bias, k, y[k], want[k])
				}
			}
			grad := make([]float64, steps*4)
			if _, err := r.Gradient(x, 1, grad); err != nil {
				t.Fatal(err)
			}
			v := x.DenseValues()
			for i := range v {
				old := v[i]
				const eps = 1e-5
				v[i] = old + eps
				p := refGRU(s, v, steps)[1]
				v[i] = old - eps
				m := refGRU(s, v, steps)[1]
				v[i] = old
				fd := (p - m) / (2 * eps)
				if c.head == HeadMax && math.Abs(fd-grad[i]) > 1e-4 {
					continue // a max switching step within ±eps
				}
				if math.Abs(fd-grad[i]) > 1e-7*(1+math.Abs(fd)) {
					t.Fatalf("%v bias=%v: ∂y/∂x[%d] = %v, central difference %v", c, bias, i, grad[i], fd)
				}
			}
			r.Close()
		}
	}
}

// IG and occlusion of GRU models: the same bits for every plan (lanes,
// workers, budgets, checkpoints), IG close to the sum of one-lane
// gradients, occlusion the one-lane pass of the occluded input, and the
// all-classes paths the one-class ones.
func TestGRUBatchedSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(103, 104))
	ctx := context.Background()
	for _, c := range gruCases() {
		if c.act == ActTanh && c.layers == 1 {
			continue
		}
		s := randomGRU(t, rng, 3, 5, 3, c, 2, true)
		steps, n := 9, 13
		x := randomStackedInput(rng, steps, 3)
		alphas, weights := midpointRule(n)
		choose := func([]float64) (int, error) { return 1, nil }
		r, _ := NewRunner(s)
		var ref, refOcc []float64
		opts := []RunOptions{{}, {Workers: 1, Lanes: 1}, {Workers: 3, Lanes: 5}, {Budget: 1 << 15, Workers: 2}, {Workers: 2}}
		for ck := range 2 {
			restore := func() {}
			if ck == 1 {
				restore = forceCheckpoints()
			}
			for _, opt := range opts {
				name := fmt.Sprintf("%v ck=%d %+v", c, ck, opt)
				grad, y, y0 := make([]float64, steps*3), make([]float64, 3), make([]float64, 3)
				if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, grad, y, y0, opt); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				occ := make([]float64, steps)
				if err := r.Occlusion(ctx, x, 2, occ, opt); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if ref != nil {
					assertSameBits(t, name+" IG", grad, ref)
					assertSameBits(t, name+" occlusion", occ, refOcc)
					continue
				}
				ref, refOcc = grad, occ
				want, g := make([]float64, steps*3), make([]float64, steps*3)
				for k := range n {
					if _, err := r.Gradient(x.Scaled(alphas[k]), 1, g); err != nil {
						t.Fatal(err)
					}
					for i := range g {
						want[i] += weights[k] * g[i]
					}
				}
				for i := range want {
					if !relClose(grad[i], want[i], 1e-12) {
						t.Fatalf("%s: IG sum[%d] = %v, one-lane sum %v", name, i, grad[i], want[i])
					}
				}
				for pos := range steps {
					v := append([]float64(nil), x.DenseValues()...)
					clear(v[pos*3 : pos*3+3])
					y, _ := r.Forward(Dense(v, steps))
					if y[2] != occ[pos] {
						t.Fatalf("%s: occluded %d: %v, one lane %v", name, pos, occ[pos], y[2])
					}
				}
				// Every class at once.
				grads := [][]float64{make([]float64, steps*3), make([]float64, steps*3), make([]float64, steps*3)}
				if err := r.IntegratedGradientsAll(ctx, x, alphas, weights, grads, y, y0, opt); err != nil {
					t.Fatal(err)
				}
				assertSameBits(t, name+" IG all, class 1", grads[1], ref)
				occs := [][]float64{make([]float64, steps), make([]float64, steps), make([]float64, steps)}
				if err := r.OcclusionAll(ctx, x, occs, opt); err != nil {
					t.Fatal(err)
				}
				assertSameBits(t, name+" occlusion all, class 2", occs[2], refOcc)
				ga := [][]float64{make([]float64, steps*3), make([]float64, steps*3), make([]float64, steps*3)}
				if _, err := r.GradientAll(ctx, x, ga); err != nil {
					t.Fatal(err)
				}
				if _, err := r.Gradient(x, 0, g); err != nil {
					t.Fatal(err)
				}
				assertSameBits(t, name+" gradient all, class 0", ga[0], g)
			}
			restore()
		}
		r.Close()
	}
}

// A GRU's steps on a team: the bits of one goroutine.
func TestGRUTeamSameBits(t *testing.T) {
	defer func(on bool, w int) { teamsOn, teamMinWork = on, w }(teamsOn, teamMinWork)
	defer func(cpus int) { teamCPUs = cpus }(teamCPUs)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	teamCPUs = 8
	rng := rand.New(rand.NewPCG(105, 106))
	for _, c := range []headCase{{2, true, HeadHN, ActNone}, {1, false, HeadMean, ActTanh}, {1, false, HeadHN, ActNone}} {
		s := randomGRU(t, rng, 8, 32, 3, c, 2, true)
		steps, n := 15, 21
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
			for _, w := range []int{2, 3} {
				ig, occ := run(RunOptions{Workers: w})
				assertSameBits(t, fmt.Sprintf("%v ck=%v %d workers: IG", c, ck, w), ig, wantIG)
				assertSameBits(t, fmt.Sprintf("%v ck=%v %d workers: occlusion", c, ck, w), occ, wantOcc)
			}
			restore()
		}
		r.Close()
	}
}

// One-hot input reads as its dense rows on a GRU.
func TestGRUOneHot(t *testing.T) {
	rng := rand.New(rand.NewPCG(107, 108))
	s := randomGRU(t, rng, 4, 5, 3, headCase{1, false, HeadHN, ActNone}, 2, true)
	syms := []int{0, 3, 1, 1, 2, 0, 3}
	dense := make([]float64, len(syms)*4)
	for t, k := range syms {
		dense[t*4+k] = 1
	}
	r, _ := NewRunner(s)
	alphas, weights := midpointRule(9)
	choose := func([]float64) (int, error) { return 2, nil }
	ctx := context.Background()
	got, want := make([]float64, len(dense)+6), make([]float64, len(dense)+6)
	n := len(dense)
	if err := r.IntegratedGradients(ctx, OneHot(syms), choose, alphas, weights, got[:n], got[n:n+3], got[n+3:], RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.IntegratedGradients(ctx, Dense(dense, len(syms)), choose, alphas, weights, want[:n], want[n:n+3], want[n+3:], RunOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !relClose(got[i], want[i], 1e-12) {
			t.Fatalf("one-hot IG[%d] = %v, dense %v", i, got[i], want[i])
		}
	}
}

// NewModel checks a GRU's sizes and biases; Params returns PyTorch's
// layout; contextual decomposition refuses a GRU by name.
func TestGRUParamsAndRefusals(t *testing.T) {
	rng := rand.New(rand.NewPCG(109, 110))
	s := randomGRU(t, rng, 3, 4, 2, headCase{2, true, HeadHN, ActNone}, 2, true)
	p := s.Params()
	if p.Kind != LayerGRU || len(p.Cells[0].Wih) != 3*4*3 || len(p.Cells[2].Wih) != 3*4*8 || len(p.Cells[0].Bhh) != 12 {
		t.Fatalf("Params: kind %v, sizes %d %d %d", p.Kind, len(p.Cells[0].Wih), len(p.Cells[2].Wih), len(p.Cells[0].Bhh))
	}
	if s.Weights() != 2*(36+48+24)+2*(96+48+24)+2*8+2 {
		t.Fatalf("Weights = %d", s.Weights())
	}
	s2, err := NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	x := randomStackedInput(rng, 4, 3)
	r1, _ := NewRunner(s)
	r2, _ := NewRunner(s2)
	y1, _ := r1.Forward(x)
	y2, _ := r2.Forward(x)
	assertSameBits(t, "rebuilt from Params", y2, y1)
	q := s.Params()
	q.Cells[1].Bhh = nil
	if _, err := NewModel(q); err == nil || !strings.Contains(err.Error(), "bias_hh") {
		t.Fatalf("one bias: %v", err)
	}
	q = s.Params()
	q.Cells[0].Whh = q.Cells[0].Whh[:40]
	if _, err := NewModel(q); err == nil || !strings.Contains(err.Error(), "3H×H") {
		t.Fatalf("short weight_hh: %v", err)
	}
	one := randomGRU(t, rng, 3, 4, 2, headCase{1, false, HeadHN, ActNone}, 2, true)
	if err := CDSupported(one); !errors.Is(err, ErrCDGRU) {
		t.Fatalf("CD: %v", err)
	}
	if _, err := NewCDRunner(one); err == nil || !strings.Contains(err.Error(), "GRU") {
		t.Fatalf("CD runner: %v", err)
	}
}

// refGRULRP is a plain float64 transliteration of lrpCellGRU's rules for
// a model with the hn head and one Linear layer: the decoder's
// lrp_linear, then each layer from the top, each direction from its last
// step to its first. It returns the input's relevance (T×E).
func refGRULRP(s *Model, x []float64, steps, class int, eps, bf float64) []float64 {
	p := s.Params()
	h, dirs := s.h, s.dirs
	sgn := func(v float64) float64 {
		if v >= 0 {
			return 1
		}
		return -1
	}
	stab := func(v float64) float64 { return v + eps*sgn(v) }
	type trace struct{ r, z, n, ghn, a, h [][]float64 }
	// Forward, keeping every step.
	ins := [][]float64{x}
	trs := make([]trace, len(p.Cells))
	for k := range p.Layers {
		in := s.layerInput(k)
		layerIn := ins[k]
		out := make([]float64, steps*h*dirs)
		for d := range dirs {
			c := p.Cells[k*dirs+d]
			tr := trace{}
			for _, f := range []*[][]float64{&tr.r, &tr.z, &tr.n, &tr.ghn, &tr.a, &tr.h} {
				*f = make([][]float64, steps)
			}
			hs := make([]float64, h)
			for i := range steps {
				t := order(d == 1, i, steps)
				gi, gh := make([]float64, 3*h), make([]float64, 3*h)
				for r := range 3 * h {
					if c.B != nil {
						gi[r], gh[r] = c.B[r], c.Bhh[r]
					}
					for j := range in {
						gi[r] += c.Wih[r*in+j] * layerIn[t*in+j]
					}
					for j := range h {
						gh[r] += c.Whh[r*h+j] * hs[j]
					}
				}
				tr.r[t], tr.z[t], tr.n[t], tr.ghn[t], tr.a[t], tr.h[t] = make([]float64, h), make([]float64, h), make([]float64, h), gh[2*h:], make([]float64, h), make([]float64, h)
				for j := range h {
					tr.r[t][j] = sigm(gi[j] + gh[j])
					tr.z[t][j] = sigm(gi[h+j] + gh[h+j])
					tr.a[t][j] = gi[2*h+j] + tr.r[t][j]*gh[2*h+j]
					tr.n[t][j] = math.Tanh(tr.a[t][j])
					tr.h[t][j] = (1-tr.z[t][j])*tr.n[t][j] + tr.z[t][j]*hs[j]
				}
				hs = tr.h[t]
				copy(out[t*h*dirs+d*h:], hs)
			}
			trs[k*dirs+d] = tr
		}
		ins = append(ins, out)
	}
	// The decoder on v = h_n (forward's last step, then reverse's first).
	v := make([]float64, 0, h*dirs)
	top := p.Layers - 1
	v = append(v, trs[top*dirs].h[steps-1]...)
	if dirs == 2 {
		v = append(v, trs[top*dirs+1].h[0]...)
	}
	y := p.By[class]
	for i, vi := range v {
		y += p.Wy[class*len(v)+i] * vi
	}
	relV := make([]float64, len(v))
	for i, vi := range v {
		relV[i] = (p.Wy[class*len(v)+i]*vi + bf*(p.By[class]+eps*sgn(y))/float64(len(v))) / stab(y) * y
	}
	// The layers.
	var relOut []float64 // relevance of layer k's outputs, T × H·dirs
	for k := top; k >= 0; k-- {
		in := s.layerInput(k)
		relIn := make([]float64, steps*in)
		for d := range dirs {
			c := p.Cells[k*dirs+d]
			tr := trs[k*dirs+d]
			rh := make([]float64, h)
			if k == top {
				copy(rh, relV[d*h:(d+1)*h])
			}
			for i := steps - 1; i >= 0; i-- {
				t := order(d == 1, i, steps)
				if relOut != nil {
					for j := range h {
						rh[j] += relOut[t*h*dirs+d*h+j]
					}
				}
				hp := make([]float64, h)
				if i > 0 {
					hp = tr.h[order(d == 1, i-1, steps)]
				}
				// h = u + v: lrp_linear, identity, 2H inputs, no bias.
				rn, rd := make([]float64, h), make([]float64, h)
				for j := range h {
					u, w := (1-tr.z[t][j])*tr.n[t][j], tr.z[t][j]*hp[j]
					for m := range h { // the stabilizer's share of output m
						share := bf * eps * sgn(tr.h[t][m]) / float64(2*h) / stab(tr.h[t][m]) * rh[m]
						rn[j] += share
						rd[j] += share
					}
					rn[j] += u / stab(tr.h[t][j]) * rh[j]
					rd[j] += w / stab(tr.h[t][j]) * rh[j]
				}
				// a: lrp_linear over (x, h_{t-1}), N = in + H.
				nh := make([]float64, h)
				for j := range h {
					qj := rn[j] / stab(tr.a[t][j])
					b := 0.0
					if c.B != nil {
						b = c.B[2*h+j] + tr.r[t][j]*c.Bhh[2*h+j]
					}
					share := bf * (b + eps*sgn(tr.a[t][j])) / float64(in+h) * qj
					for m := range in {
						relIn[t*in+m] += c.Wih[(2*h+j)*in+m]*ins[k][t*in+m]*qj + share
					}
					for m := range h {
						nh[m] += tr.r[t][j]*c.Whh[(2*h+j)*h+m]*hp[m]*qj + share
					}
				}
				for j := range h {
					rh[j] = nh[j] + rd[j]
				}
			}
		}
		relOut = relIn
	}
	return relOut
}

// GRU LRP: against the plain transliteration (hn head, Linear), and with
// bias factor 1 conserving relevance on every head and classifier.
func TestGRULRP(t *testing.T) {
	rng := rand.New(rand.NewPCG(111, 112))
	for _, c := range []headCase{{1, false, HeadHN, ActNone}, {1, true, HeadHN, ActNone}, {2, false, HeadHN, ActNone}, {2, true, HeadHN, ActNone}} {
		for _, bf := range []float64{0, 0.5, 1} {
			s := randomGRU(t, rng, 4, 5, 3, c, 2, true)
			steps := 6
			x := randomStackedInput(rng, steps, 4)
			r, _ := NewRunner(s)
			rel := make([]float64, steps*4)
			if _, err := r.LRP(x, 2, 0.01, bf, rel); err != nil {
				t.Fatal(err)
			}
			want := refGRULRP(s, x.DenseValues(), steps, 2, 0.01, bf)
			for i := range want {
				if !relClose(rel[i], want[i], 1e-12) {
					t.Fatalf("%v bf=%v: R[%d] = %v, reference %v", c, bf, i, rel[i], want[i])
				}
			}
		}
	}
	for _, c := range gruCases() {
		s := randomGRU(t, rng, 4, 5, 3, c, 2, true)
		steps := 7
		x := randomStackedInput(rng, steps, 4)
		r, _ := NewRunner(s)
		rel := make([]float64, steps*4)
		out, err := r.LRP(x, 1, 1e-3, 1, rel)
		if err != nil {
			t.Fatal(err)
		}
		total := out.Initial
		for _, v := range rel {
			total += v
		}
		if math.Abs(total-out.Output) > 1e-10*(1+math.Abs(out.Output)) || math.Abs(out.Bias) > 1e-10*(1+math.Abs(out.Output)) {
			t.Fatalf("%v: inputs + initial = %v, logit %v (bias %v)", c, total, out.Output, out.Bias)
		}
	}
}

// IG (50 nodes, one worker) on a GRU and an LSTM of the same size, and
// the gate steps alone: go test ./cell -run '^$' -bench GRU
func BenchmarkGRU(b *testing.B) {
	const e, h, steps = 32, 64, 64
	for _, kind := range []LayerKind{LayerLSTM, LayerGRU} {
		rng := rand.New(rand.NewPCG(1, 2))
		c := headCase{1, false, HeadHN, ActNone}
		var s *Model
		if kind == LayerGRU {
			s = randomGRU(b, rng, e, h, 3, c, 2, true)
		} else {
			s = randomStacked(b, rng, e, h, 1, false, 3, 2, true)
		}
		x := randomStackedInput(rng, steps, e)
		alphas, weights := midpointRule(50)
		choose := func([]float64) (int, error) { return 0, nil }
		b.Run("IG/"+kind.String(), func(b *testing.B) {
			r, _ := NewRunner(s)
			defer r.Close()
			grad, y, y0 := make([]float64, steps*e), make([]float64, 3), make([]float64, 3)
			for b.Loop() {
				if err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, grad, y, y0, RunOptions{Workers: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	n := 64 * 64 // H × lanes
	gates, zg, cp, c, tc, hh := make([]float64, 4*n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	fill := func() {
		for i := range gates {
			gates[i] = float64(i%17)/8 - 1
		}
	}
	b.Run("step/lstm", func(b *testing.B) {
		for b.Loop() {
			fill()
			kernelGateStep(gates, zg, cp, c, tc, hh)
		}
	})
	b.Run("step/gru", func(b *testing.B) {
		for b.Loop() {
			fill()
			gruStep(gates, n, nil, cp, c, tc, hh)
		}
	})
}

func kernelGateStep(gates, zg, cPrev, c, tc, h []float64) {
	kernel.GateStep(gates, zg, cPrev, c, tc, h)
}

package cell

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// headCase is a model shape with a head and a classifier.
type headCase struct {
	layers int
	bi     bool
	head   Head
	act    Activation
}

func (c headCase) String() string {
	return fmt.Sprintf("L=%d bi=%v %v+%v", c.layers, c.bi, c.head, c.act)
}

// headCases covers every head on one and two directions and one and two
// layers, with the three classifiers.
func headCases() []headCase {
	var cs []headCase
	for _, h := range Heads() {
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

// randomHeadStacked is randomStacked with c's head and, for an activation,
// a hidden layer of 5 units.
func randomHeadStacked(t testing.TB, rng *rand.Rand, in, h, classes int, c headCase) *Model {
	t.Helper()
	p := randomStacked(t, rng, in, h, c.layers, c.bi, classes, 2, true).Params()
	p.Head, p.Act = c.head, c.act
	d := h * len(p.Cells) / c.layers
	u := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = (2*rng.Float64() - 1) * scale
		}
		return v
	}
	if c.act != ActNone {
		p.Units = 5
		p.W1, p.B1 = u(5*d, 1), u(5, 0.5)
		p.Wy = u(classes*5, 1)
	}
	s, err := NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// refHead computes a head's logits from scratch: the top layer's outputs
// by a plain LSTM loop, then the head and the classifier as PyTorch
// writes them.
func refHead(s *Model, x []float64, steps int) []float64 {
	p := s.p
	h, dirs := s.h, s.dirs
	layerIn := x
	var out [][]float64 // T × (H·dirs)
	var hn [2][]float64
	for k := range p.Layers {
		in := s.layerInput(k)
		out = make([][]float64, steps)
		for t := range out {
			out[t] = make([]float64, h*dirs)
		}
		for d := range dirs {
			c := p.Cells[k*dirs+d]
			hs, cs := make([]float64, h), make([]float64, h)
			for i := range steps {
				t := order(d == 1, i, steps)
				z := make([]float64, 4*h)
				for r := range 4 * h {
					v := 0.0
					if c.B != nil {
						v = c.B[r]
					}
					for j := range in {
						v += c.Wih[r*in+j] * layerIn[t*in+j]
					}
					for j := range h {
						v += c.Whh[r*h+j] * hs[j]
					}
					z[r] = v
				}
				for j := range h {
					ig, fg := sigm(z[j]), sigm(z[h+j])
					gg, og := math.Tanh(z[2*h+j]), sigm(z[3*h+j])
					cs[j] = fg*cs[j] + ig*gg
					hs[j] = og * math.Tanh(cs[j])
				}
				copy(out[t][d*h:], hs)
			}
			hn[d] = hs
		}
		layerIn = make([]float64, 0, steps*h*dirs)
		for _, o := range out {
			layerIn = append(layerIn, o...)
		}
	}
	var v []float64
	switch p.Head {
	case HeadHN:
		v = append(append(v, hn[0]...), hn[1]...)
	case HeadHNBF:
		if dirs == 1 {
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
			a[m] = p.B1[m]
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
		y[c] = p.By[c]
		for i, vi := range v {
			y[c] += p.Wy[c*len(v)+i] * vi
		}
	}
	return y
}

func sigm(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// Every head's logits equal a plain loop's; the gradient equals central
// differences; LRP with bias factor 1 conserves relevance.
func TestModelHeads(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, c := range headCases() {
		s := randomHeadStacked(t, rng, 3, 4, 3, c)
		r, _ := NewRunner(s)
		for _, steps := range []int{1, 2, 6} {
			x := randomStackedInput(rng, steps, 3)
			v := x.DenseValues()
			want := refHead(s, v, steps)
			got, err := r.Forward(x)
			if err != nil {
				t.Fatal(err)
			}
			for k := range want {
				if math.Abs(got[k]-want[k]) > 1e-13*(1+math.Abs(want[k])) {
					t.Fatalf("%v T=%d: logit %d = %v, reference %v", c, steps, k, got[k], want[k])
				}
			}
			grad := make([]float64, steps*3)
			if _, err := r.Gradient(x, 2, grad); err != nil {
				t.Fatal(err)
			}
			for i := range v {
				old := v[i]
				const eps = 1e-5
				v[i] = old + eps
				yp := refHead(s, v, steps)[2]
				v[i] = old - eps
				ym := refHead(s, v, steps)[2]
				v[i] = old
				fd := (yp - ym) / (2 * eps)
				if math.Abs(fd-grad[i]) > 1e-7*(1+math.Abs(fd)) {
					t.Fatalf("%v T=%d: ∂y/∂x[%d] = %v, central difference %v", c, steps, i, grad[i], fd)
				}
			}
			rel := make([]float64, steps*3)
			out, err := r.LRP(x, 1, 0.001, 1, rel)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(out.Bias) > 1e-12*(1+math.Abs(out.Output)) {
				t.Fatalf("%v T=%d: bias factor 1 leaves %v of %v unaccounted (initial %v)", c, steps, out.Bias, out.Output, out.Initial)
			}
		}
	}
}

// IG and occlusion on every head: the same bits for every number of
// workers, lanes and budget, IG close to the sum of one-lane gradients
// and each occluded copy equal to a one-lane pass.
func TestModelHeadsBatched(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, c := range headCases() {
		if c.layers == 1 && c.act == ActTanh {
			continue // covered by the others; keeps the test short
		}
		s := randomHeadStacked(t, rng, 3, 5, 3, c)
		steps := 7
		x := randomStackedInput(rng, steps, 3)
		n := 21
		alphas, weights := midpointRule(n)
		choose := func([]float64) (int, error) { return 1, nil }
		var ref, refOcc []float64
		for _, opt := range []RunOptions{{}, {Workers: 1, Lanes: 1}, {Workers: 3, Lanes: 5}, {Budget: 1 << 15, Workers: 2}} {
			r, _ := NewRunner(s)
			grad, y, y0 := make([]float64, steps*3), make([]float64, 3), make([]float64, 3)
			if err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, grad, y, y0, opt); err != nil {
				t.Fatalf("%v %+v: %v", c, opt, err)
			}
			occ := make([]float64, steps)
			if err := r.Occlusion(context.Background(), x, 2, occ, opt); err != nil {
				t.Fatalf("%v %+v: %v", c, opt, err)
			}
			if ref != nil {
				assertSameBits(t, fmt.Sprintf("%v %+v IG", c, opt), grad, ref)
				assertSameBits(t, fmt.Sprintf("%v %+v occlusion", c, opt), occ, refOcc)
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
				if math.Abs(want[i]-grad[i]) > 1e-12*(1+math.Abs(want[i])) {
					t.Fatalf("%v: IG sum[%d] = %v, one-lane sum %v", c, i, grad[i], want[i])
				}
			}
			for pos := range steps {
				v := append([]float64(nil), x.DenseValues()...)
				clear(v[pos*3 : pos*3+3])
				y, _ := r.Forward(Dense(v, steps))
				if y[2] != occ[pos] {
					t.Fatalf("%v: occluded %d: %v, one lane %v", c, pos, occ[pos], y[2])
				}
			}
		}
	}
}

// Max pooling's ties go to the earliest step, in the gradient and in LRP.
func TestModelMaxTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	// With no recurrent weights and closed forget gates (σ(−1000) = 0),
	// equal rows give equal outputs.
	p := randomHeadStacked(t, rng, 2, 3, 2, headCase{1, false, HeadMax, ActNone}).Params()
	clear(p.Cells[0].Whh)
	clear(p.Cells[0].Wih[3*2 : 6*2])
	for j := 3; j < 6; j++ {
		p.Cells[0].B[j] = -1000
	}
	s, err := NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := NewRunner(s)
	x := Dense([]float64{0.3, -0.7, 0.3, -0.7, 0.3, -0.7}, 3)
	grad := make([]float64, 6)
	if _, err := r.Gradient(x, 0, grad); err != nil {
		t.Fatal(err)
	}
	if grad[2] != 0 || grad[3] != 0 || grad[4] != 0 || grad[5] != 0 || (grad[0] == 0 && grad[1] == 0) {
		t.Fatalf("tied steps: gradient %v, want all of it at step 0", grad)
	}
	rel := make([]float64, 6)
	if _, err := r.LRP(x, 0, 0.001, 1, rel); err != nil {
		t.Fatal(err)
	}
	if rel[2] != 0 || rel[3] != 0 || rel[4] != 0 || rel[5] != 0 {
		t.Fatalf("tied steps: relevance %v, want all of it at step 0", rel)
	}
}

// NewModel refuses inconsistent heads and classifiers, naming the
// problem.
func TestModelHeadRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	base := randomStacked(t, rng, 3, 4, 1, true, 2, 2, true).Params()
	for _, c := range []struct {
		name string
		edit func(p *Params)
		want string
	}{
		{"unknown head", func(p *Params) { p.Head = 9 }, "unknown head"},
		{"unknown act", func(p *Params) { p.Act = 7 }, "unknown activation"},
		{"units without act", func(p *Params) { p.Units = 3 }, "needs an activation"},
		{"act without units", func(p *Params) { p.Act = ActReLU }, "at least one unit"},
		{"short W1", func(p *Params) {
			p.Act, p.Units, p.W1, p.Wy = ActTanh, 3, make([]float64, 5), make([]float64, 6)
		}, "hidden layer weight"},
		{"bad Wy", func(p *Params) {
			p.Act, p.Units, p.W1 = ActTanh, 3, make([]float64, 24)
		}, "C×Units"},
		{"NaN B1", func(p *Params) {
			p.Act, p.Units, p.W1, p.B1, p.Wy = ActReLU, 3, make([]float64, 24), []float64{0, math.NaN(), 0}, make([]float64, 6)
		}, "hidden layer bias[1]"},
	} {
		p := base
		c.edit(&p)
		if _, err := NewModel(p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// The head's and classifier's LRP rules, written out plainly: the ε-rule
// through each Linear layer (N its inputs), relevance unchanged through
// the activation, and the head's hand-over to the top layer's outputs.
func TestModelHeadLRPRules(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	const eps, steps, class = 0.01, 5, 1
	stab := func(z float64) float64 { return z + eps*sign(z) }
	for _, c := range headCases() {
		s := randomHeadStacked(t, rng, 3, 4, 3, c)
		p := s.Params()
		r, _ := NewRunner(s)
		x := randomStackedInput(rng, steps, 3)
		for _, bf := range []float64{0, 1} {
			r.single(x)
			lr := r.one
			h, dirs := s.h, s.dirs
			d := h * dirs
			// The top layer's outputs, T × D, and the head's v.
			out := make([][]float64, steps)
			for tt := range out {
				out[tt] = make([]float64, d)
				for k := range dirs {
					copy(out[tt][k*h:(k+1)*h], lr.topTrace(k).hs[tt*h:(tt+1)*h])
				}
			}
			v := make([]float64, d)
			arg := make([]int, d)
			for i := range v {
				k, j := i/h, i%h
				switch c.head {
				case HeadHN, HeadHNBF:
					kk := k
					if c.head == HeadHNBF {
						kk = dirs - 1 - k
					}
					tt := steps - 1
					if kk == 1 {
						tt = 0
					}
					v[i] = out[tt][kk*h+j]
				case HeadLast:
					v[i] = out[steps-1][i]
				case HeadMean:
					for tt := range steps {
						v[i] += out[tt][i]
					}
					v[i] /= steps
				case HeadMax:
					v[i] = out[0][i]
					for tt := 1; tt < steps; tt++ {
						if out[tt][i] > v[i] {
							v[i], arg[i] = out[tt][i], tt
						}
					}
				}
			}
			y := lr.logitsBuf[class]
			relV := make([]float64, d)
			if c.act == ActNone {
				for i := range relV {
					relV[i] = (p.Wy[class*d+i]*v[i] + bf*(p.By[class]+eps*sign(y))/float64(d)) * y / stab(y)
				}
			} else {
				for m := range p.Units {
					a := p.B1[m]
					for i := range v {
						a += p.W1[m*d+i] * v[i]
					}
					u := activate(c.act, a)
					ru := (p.Wy[class*p.Units+m]*u + bf*(p.By[class]+eps*sign(y))/float64(p.Units)) * y / stab(y)
					for i := range v {
						relV[i] += (p.W1[m*d+i]*v[i] + bf*(p.B1[m]+eps*sign(a))/float64(d)) * ru / stab(a)
					}
				}
			}
			run := lrpRun{steps: steps, class: class, eps: eps, bf: bf}
			run.decoderShare, run.decoderBias = s.headDecoderShare(y, s.by[class], eps, bf)
			seq := make([]float64, steps*d)
			got := lr.headLRP(&run, seq)
			check := func(what string, g, w float64) {
				if math.Abs(g-w) > 1e-12*(1+math.Abs(w)) {
					t.Fatalf("%v bf=%v: %s = %v, rule %v", c, bf, what, g, w)
				}
			}
			for i := range relV {
				check(fmt.Sprintf("R_v[%d]", i), got[i], relV[i])
			}
			if !c.head.dense() {
				continue
			}
			for tt := range steps {
				for i := range d {
					want := 0.0
					switch c.head {
					case HeadLast:
						if tt == steps-1 {
							want = relV[i]
						}
					case HeadMax:
						if tt == arg[i] {
							want = relV[i]
						}
					case HeadMean:
						want = (out[tt][i]/steps + bf*eps*sign(v[i])/steps) * relV[i] / stab(v[i])
					}
					check(fmt.Sprintf("R_out[%d][%d]", tt, i), seq[tt*d+i], want)
				}
			}
		}
	}
}

package cell

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// attnCase is a model shape with an attention head.
type attnCase struct {
	layers int
	bi     bool
	units  int // the score's hidden units (0: one Linear layer)
	bias   bool
	act    Activation
}

func (c attnCase) String() string {
	return fmt.Sprintf("L=%d bi=%v A=%d bias=%v %v", c.layers, c.bi, c.units, c.bias, c.act)
}

func attnCases() []attnCase {
	var cs []attnCase
	for _, sh := range []struct {
		layers int
		bi     bool
	}{{1, false}, {1, true}, {2, false}, {2, true}} {
		for _, units := range []int{0, 3} {
			for _, bias := range []bool{true, false} {
				act := ActNone
				if bias && units == 3 {
					act = ActTanh
				}
				cs = append(cs, attnCase{sh.layers, sh.bi, units, bias, act})
			}
		}
	}
	return cs
}

// randomAttnStacked is randomHeadStacked with an attention head.
func randomAttnStacked(t testing.TB, rng *rand.Rand, in, h, classes int, c attnCase) *Model {
	t.Helper()
	p := randomHeadStacked(t, rng, in, h, classes, headCase{c.layers, c.bi, HeadMean, c.act}).Params()
	d := h * len(p.Cells) / c.layers
	u := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = (2*rng.Float64() - 1) * scale
		}
		return v
	}
	a := &Attention{Units: c.units}
	rows := max(c.units, 1)
	a.W1 = u(rows*d, 2)
	if c.bias {
		a.B1 = u(rows, 1)
	}
	if c.units > 0 {
		a.W2 = u(c.units, 2)
		if c.bias {
			a.B2 = u(1, 1)
		}
	}
	p.Head, p.Attention = HeadAttention, a
	s, err := NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// refAttention computes an attention model's logits and α from scratch:
// the top layer's outputs by refHead's plain loop (a mean head on the same
// weights, read through its pooled outputs per step), then the head by
// PyTorch's expression with a two-pass softmax.
func refAttention(s *Model, x []float64, steps int) (logits, alpha []float64) {
	out := attnRefOutputs(s, x, steps)
	a := s.p.Attention
	d := len(out[0])
	e := make([]float64, steps)
	for t, o := range out {
		rows := max(a.Units, 1)
		hid := make([]float64, rows)
		for m := range hid {
			if a.B1 != nil {
				hid[m] = a.B1[m]
			}
			for i := range d {
				hid[m] += a.W1[m*d+i] * o[i]
			}
		}
		if a.Units == 0 {
			e[t] = hid[0]
			continue
		}
		if a.B2 != nil {
			e[t] = a.B2[0]
		}
		for m := range hid {
			e[t] += a.W2[m] * math.Tanh(hid[m])
		}
	}
	mx := math.Inf(-1)
	for _, v := range e {
		mx = math.Max(mx, v)
	}
	alpha = make([]float64, steps)
	sum := 0.0
	for t := range e {
		alpha[t] = math.Exp(e[t] - mx)
		sum += alpha[t]
	}
	v := make([]float64, d)
	for t := range alpha {
		alpha[t] /= sum
		for i := range v {
			v[i] += alpha[t] * out[t][i]
		}
	}
	return attnRefClassify(s, v), alpha
}

// attnRefOutputs is the top layer's outputs by a plain LSTM loop.
func attnRefOutputs(s *Model, x []float64, steps int) [][]float64 {
	p := s.p
	h, dirs := s.h, s.dirs
	layerIn := x
	var out [][]float64
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
		}
		layerIn = make([]float64, 0, steps*h*dirs)
		for _, o := range out {
			layerIn = append(layerIn, o...)
		}
	}
	return out
}

// attnRefClassify is the classifier on v.
func attnRefClassify(s *Model, v []float64) []float64 {
	p := s.p
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

// The attention head's logits and α equal a plain loop's; the gradient
// equals central differences; LRP with bias factor 1 conserves relevance;
// DeepLIFT and CD are refused.
func TestModelAttention(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for _, c := range attnCases() {
		s := randomAttnStacked(t, rng, 3, 4, 3, c)
		r, _ := NewRunner(s)
		for _, steps := range []int{1, 2, 6} {
			x := randomStackedInput(rng, steps, 3)
			v := x.DenseValues()
			want, wantA := refAttention(s, v, steps)
			got, err := r.Forward(x)
			if err != nil {
				t.Fatal(err)
			}
			for k := range want {
				if math.Abs(got[k]-want[k]) > 1e-13*(1+math.Abs(want[k])) {
					t.Fatalf("%v T=%d: logit %d = %v, reference %v", c, steps, k, got[k], want[k])
				}
			}
			gotA := make([]float64, steps)
			if err := r.AttentionWeights(x, gotA); err != nil {
				t.Fatal(err)
			}
			for k := range wantA {
				if math.Abs(gotA[k]-wantA[k]) > 1e-14 {
					t.Fatalf("%v T=%d: α_%d = %v, reference %v", c, steps, k, gotA[k], wantA[k])
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
				yp, _ := refAttention(s, v, steps)
				v[i] = old - eps
				ym, _ := refAttention(s, v, steps)
				v[i] = old
				fd := (yp[2] - ym[2]) / (2 * eps)
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
		if CDSupported(s) == nil {
			t.Fatalf("%v: CD not refused", c)
		}
		r.Close()
	}
}

// IG and occlusion on the attention head: the same bits for every number
// of workers, lanes and budget and with checkpoints, IG close to the sum
// of one-lane gradients and each occluded copy equal to a one-lane pass.
func TestModelAttentionBatched(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	ctx := context.Background()
	choose := func([]float64) (int, error) { return 1, nil }
	for _, c := range attnCases() {
		s := randomAttnStacked(t, rng, 3, 5, 3, c)
		for _, steps := range []int{1, 7, 17} {
			x := randomStackedInput(rng, steps, 3)
			n := 21
			alphas, weights := midpointRule(n)
			var ref, refOcc []float64
			r, _ := NewRunner(s)
			check := func(name string, opt RunOptions) {
				grad := make([]float64, steps*3+6)
				if err := r.IntegratedGradients(ctx, x, choose, alphas, weights, grad[:steps*3], grad[steps*3:steps*3+3], grad[steps*3+3:], opt); err != nil {
					t.Fatalf("%v %+v: %v", c, opt, err)
				}
				occ := make([]float64, steps)
				if err := r.Occlusion(ctx, x, 2, occ, opt); err != nil {
					t.Fatalf("%v %+v: %v", c, opt, err)
				}
				if ref != nil {
					assertSameBits(t, fmt.Sprintf("%v T=%d %s %+v IG", c, steps, name, opt), grad, ref)
					assertSameBits(t, fmt.Sprintf("%v T=%d %s %+v occlusion", c, steps, name, opt), occ, refOcc)
					return
				}
				ref, refOcc = grad, occ
			}
			opts := []RunOptions{{}, {Workers: 1, Lanes: 1}, {Workers: 3, Lanes: 5}, {Budget: 1 << 15, Workers: 2}}
			for _, opt := range opts {
				check("full", opt)
			}
			restore := forceCheckpoints()
			for _, opt := range append(opts, RunOptions{Workers: 2}, RunOptions{Lanes: 16, Workers: 2}) {
				check("checkpointed", opt)
			}
			restore()
			func() {
				defer func(on bool, w int) { teamsOn, teamMinWork = on, w }(teamsOn, teamMinWork)
				teamsOn, teamMinWork = true, 0
				check("team", RunOptions{Workers: 2})
				check("team", RunOptions{Workers: 2, Lanes: 3})
				defer forceCheckpoints()()
				check("team checkpointed", RunOptions{Workers: 2})
			}()
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
				if math.Abs(want[i]-ref[i]) > 1e-12*(1+math.Abs(want[i])) {
					t.Fatalf("%v: IG sum[%d] = %v, one-lane sum %v", c, i, ref[i], want[i])
				}
			}
			for pos := range steps {
				v := append([]float64(nil), x.DenseValues()...)
				clear(v[pos*3 : pos*3+3])
				y, _ := r.Forward(Dense(v, steps))
				if y[2] != refOcc[pos] {
					t.Fatalf("%v: occluded %d: %v, one lane %v", c, pos, refOcc[pos], y[2])
				}
			}
			r.Close()
		}
	}
}

func TestModelAttentionAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(65, 66))
	testStackedAllocs(t, rng, randomAttnStacked(t, rng, 4, 8, 3, attnCase{2, true, 3, true, ActTanh}))
	testStackedAllocs(t, rng, randomAttnStacked(t, rng, 4, 8, 3, attnCase{1, false, 0, false, ActNone}))
}

// A bad attention head is refused.
func TestModelAttentionRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(67, 68))
	p := randomAttnStacked(t, rng, 3, 4, 3, attnCase{1, true, 3, true, ActNone}).Params()
	for name, f := range map[string]func(p *Params){
		"none":     func(p *Params) { p.Attention = nil },
		"short W1": func(p *Params) { p.Attention.W1 = p.Attention.W1[:5] },
		"no W2":    func(p *Params) { p.Attention.W2 = nil },
		"NaN":      func(p *Params) { p.Attention.W2[0] = math.NaN() },
		"units<0":  func(p *Params) { p.Attention.Units = -1 },
		"W2 with 0": func(p *Params) {
			p.Attention.Units = 0
			p.Attention.W1 = p.Attention.W1[:8]
			p.Attention.B1 = nil
		},
	} {
		q := p
		q.Attention = &Attention{Units: p.Attention.Units, W1: clone(p.Attention.W1), B1: clone(p.Attention.B1), W2: clone(p.Attention.W2), B2: clone(p.Attention.B2)}
		f(&q)
		if _, err := NewModel(q); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The attention weights of an input too long for a whole trace come from
// a checkpointed lane (as its logits do): the same bits as from the whole
// trace.
func TestModelAttentionWeightsCheckpointed(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	for _, c := range attnCases() {
		s := randomAttnStacked(t, rng, 3, 4, 3, c)
		r, _ := NewRunner(s)
		x := randomStackedInput(rng, 40, 3)
		whole := make([]float64, 40)
		if err := r.AttentionWeights(x, whole); err != nil {
			t.Fatal(err)
		}
		old := fullTraceMax
		fullTraceMax = 1 // every input checkpointed
		ck := make([]float64, 40)
		err := r.AttentionWeights(x, ck)
		fullTraceMax = old
		if err != nil {
			t.Fatal(err)
		}
		for k := range whole {
			if math.Float64bits(whole[k]) != math.Float64bits(ck[k]) {
				t.Fatalf("%v: α_%d = %v from checkpoints, %v from the whole trace", c, k, ck[k], whole[k])
			}
		}
		r.Close()
	}
}

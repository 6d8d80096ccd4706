package cell

import (
	"fmt"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// The head and the classifier of a model: the stage between the
// top layer's outputs and the logits.
//
// Forward. The head maps the top layer's trace to v (D = H·directions
// values, forward direction's half first), exactly as PyTorch's expression
// (see Head): hn and hn-bf read the final states, last the outputs at step
// T−1, mean their sum over the steps divided by T, max their maximum over
// the steps, ties to the earliest step (PyTorch's CPU max(dim) returns the
// first maximal index). For one direction hn, hn-bf and last are one
// function, h_n[-1]. The classifier is logits = W_y·v + b_y, or with a
// hidden layer logits = W_y·act(W_1·v + b_1) + b_y.
//
// Backward. ∂ŷ_c/∂v is W_y's row c, or W_1ᵀ·(act′(a)⊙W_y[c]) with a the
// hidden pre-activation (ReLU′(a) = 1 for a > 0, else 0, as PyTorch's
// threshold_backward; tanh′ = 1 − tanh²). It reaches the top layer's
// outputs as PyTorch's backward sends it: hn and hn-bf to each direction's
// final state; last to step T−1 of both directions (for the backward
// direction, its first step); mean 1/T of it to every step; max all of it
// to the maximising step of each unit.
//
// LRP (the ε-rule of lrp_linear, bias factor bf, sign(0) = +1): every
// Linear layer z = W·a + b passes R_z to a_i as Σ_j (w_ji·a_i + bf·(b_j +
// ε·sign(z_j))/N)·R_j/(z_j + ε·sign(z_j)), N its number of inputs (D for
// the first Linear, Units for the second, H·dirs for a single one); the
// top Linear starts from ŷ_c on class c. ReLU and tanh pass relevance
// unchanged (R_a = R_act(a)). Mean pooling is, for each unit j, the
// Linear map v_j = Σ_t h_{t,j}/T of T inputs without bias: h_{t,j} gets
// (h_{t,j}/T + bf·ε·sign(v_j)/T)·R_j/(v_j + ε·sign(v_j)). Max pooling
// gives all of R_j to the maximising step. hn, hn-bf and last hand R_v to
// the states v was read from. With bf = 1 every rule conserves relevance.

// dense reports whether the head reads the top layer's outputs at
// steps other than each direction's last one (its gradient and relevance
// then enter the top layer as a per-step sequence, like a layer above).
func (h Head) dense() bool {
	return h == HeadLast || h == HeadMean || h == HeadMax || h == HeadAttention
}

// checkHead validates p's head and classifier for NewModel; d is H·dirs.
func checkHead(p Params, d int) error {
	if p.Head < 0 || int(p.Head) >= len(headNames) {
		return fmt.Errorf("cell: unknown head %v", p.Head)
	}
	if p.Act < 0 || int(p.Act) >= len(actNames) {
		return fmt.Errorf("cell: unknown activation %v", p.Act)
	}
	if err := checkAttention(p, d); err != nil {
		return err
	}
	if p.Act == ActNone {
		if p.Units != 0 || p.W1 != nil || p.B1 != nil {
			return fmt.Errorf("cell: a hidden classifier layer (Units=%d, W1, B1) needs an activation (relu, tanh)", p.Units)
		}
		return checkWeights("decoder weight", p.Wy, p.Classes*d, fmt.Sprintf("C×(H·directions) = %d×%d", p.Classes, d))
	}
	if p.Units < 1 {
		return fmt.Errorf("cell: activation %v needs a hidden layer of at least one unit, not Units=%d", p.Act, p.Units)
	}
	if err := checkWeights("hidden layer weight", p.W1, p.Units*d, fmt.Sprintf("Units×(H·directions) = %d×%d", p.Units, d)); err != nil {
		return err
	}
	if p.B1 != nil {
		if err := checkWeights("hidden layer bias", p.B1, p.Units, fmt.Sprintf("Units = %d", p.Units)); err != nil {
			return err
		}
	}
	return checkWeights("decoder weight", p.Wy, p.Classes*p.Units, fmt.Sprintf("C×Units = %d×%d", p.Classes, p.Units))
}

// setHead packs the checked head and classifier of p into s.
func (s *Model) setHead(p Params) {
	d := s.h * s.dirs
	s.p.Head, s.p.Act = p.Head, p.Act
	s.k = d
	s.setAttention(p)
	if p.Act != ActNone {
		s.p.Units, s.k = p.Units, p.Units
		s.w1 = clone(p.W1)
		s.w1T = transpose(s.w1, p.Units, d)
		s.b1 = make([]float64, p.Units)
		copy(s.b1, p.B1)
		for i := range s.b1 {
			s.b1[i] += 0
		}
		s.p.W1, s.p.B1 = s.w1, clone(p.B1)
	}
}

// Units returns the number of units of the classifier's hidden layer (0
// without one).
func (s *Model) Units() int { return s.p.Units }

// headWords is the float64s (and ints) of the head's buffers per lane.
func (s *Model) headWords() int64 {
	d := int64(s.h * s.dirs)
	return 3*d + 3*int64(s.p.Units)
}

// newHeadBuffers allocates the head's buffers of r.
func (r *lanes) newHeadBuffers() {
	s, l := r.s, r.l
	d, u := s.h*s.dirs, s.p.Units
	r.v = make([]float64, d*l)
	r.argmax = make([]int, d*l)
	r.dv = make([]float64, d*l)
	r.a, r.u, r.da = make([]float64, u*l), make([]float64, u*l), make([]float64, u*l)
	r.relV, r.headIn = make([]float64, d), make([]float64, d)
	r.relU = make([]float64, u)
}

// topTrace returns the trace of direction dir of the top layer.
func (r *lanes) topTrace(dir int) *cellTrace {
	return &r.cells[len(r.s.cells)-r.s.dirs+dir]
}

// headOut computes the head's output v for l lanes after the forward pass
// and returns it as its segments: v = cat(seg[0], seg[1]) (seg[1] nil for
// one direction), each H×l, read where they lie in the trace or computed
// into r.v.
func (r *lanes) headOut(steps, l int) (seg [2][]float64) {
	s := r.s
	hl := s.h * l
	if s.p.Head == HeadAttention {
		return r.attnOutTrace(steps, l)
	}
	for d := range s.dirs {
		tr := r.topTrace(d)
		switch s.p.Head {
		case HeadHN:
			seg[d] = r.final(d, steps, l)
		case HeadHNBF:
			seg[d] = r.final(s.dirs-1-d, steps, l)
		case HeadLast:
			t := r.hSlot(steps - 1)
			seg[d] = tr.hs[t*hl : (t+1)*hl]
		case HeadMean:
			v := r.v[d*hl : (d+1)*hl]
			copy(v, tr.hs[:hl])
			for t := 1; t < steps; t++ {
				for i, x := range tr.hs[t*hl : (t+1)*hl] {
					v[i] += x
				}
			}
			n := float64(steps)
			for i := range v {
				v[i] /= n
			}
			seg[d] = v
		case HeadMax:
			v, arg := r.v[d*hl:(d+1)*hl], r.argmax[d*hl:(d+1)*hl]
			copy(v, tr.hs[:hl])
			clear(arg)
			for t := 1; t < steps; t++ {
				for i, x := range tr.hs[t*hl : (t+1)*hl] {
					if x > v[i] { // strictly: ties keep the earliest step
						v[i], arg[i] = x, t
					}
				}
			}
			seg[d] = v
		}
	}
	return seg
}

// decode writes the logits of l lanes, C×l, to r.logitsBuf: the head's
// output through the classifier.
func (r *lanes) decode(steps, l int) { r.classify(r.headOut(steps, l), l) }

// classify writes the logits of l lanes, C×l, to r.logitsBuf: the head's
// output v = cat(seg[0], seg[1]) through the classifier.
func (r *lanes) classify(seg [2][]float64, l int) {
	s := r.s
	h, d := s.h, s.h*s.dirs
	src := seg[0]
	if s.p.Act != ActNone {
		u, a := r.u[:s.p.Units*l], r.a[:s.p.Units*l]
		clear(a)
		for k := range s.dirs {
			mulAddLanes(a, s.w1, s.w1T, s.nonzero, s.p.Units, h, d, k*h, seg[k], l)
		}
		for m, b := range s.b1 {
			for j := range l {
				a[m*l+j] += b
				u[m*l+j] = activate(s.p.Act, a[m*l+j])
			}
		}
		src = u
	}
	lin := r.lin[:s.c*l]
	clear(lin)
	if s.p.Act != ActNone {
		mulAddLanes(lin, s.wy, s.wyT, s.nonzero, s.c, s.k, s.k, 0, src, l)
	} else {
		for k := range s.dirs {
			mulAddLanes(lin, s.wy, s.wyT, s.nonzero, s.c, h, d, k*h, seg[k], l)
		}
	}
	for k, b := range s.by {
		for j := range l {
			r.logitsBuf[k*l+j] = lin[k*l+j] + b
		}
	}
}

// activate returns act(a).
func activate(act Activation, a float64) float64 {
	switch act {
	case ActReLU:
		if a > 0 {
			return a
		}
		return 0
	case ActTanh:
		return kernel.Tanh(a)
	}
	return a
}

// headGrad writes ∂ŷ_class/∂v of l lanes, D×l, to r.dv and returns it.
func (r *lanes) headGrad(class, l int) []float64 {
	s := r.s
	d := s.h * s.dirs
	dv := r.dv[:d*l]
	if s.p.Act == ActNone {
		for i, w := range s.wy[class*d : (class+1)*d] {
			row := dv[i*l : (i+1)*l]
			for q := range row {
				row[q] = w
			}
		}
		return dv
	}
	u := s.p.Units
	da := r.da[:u*l]
	for m, w := range s.wy[class*u : (class+1)*u] {
		for q := range l {
			var g float64
			switch s.p.Act {
			case ActReLU:
				if r.a[m*l+q] > 0 {
					g = w
				}
			case ActTanh:
				y := r.u[m*l+q]
				g = float64(w * float64(1-float64(y*y)))
			}
			da[m*l+q] = g
		}
	}
	clear(dv)
	mulAddLanes(dv, s.w1T, s.w1, s.nonzero, d, u, u, 0, da, l)
	return dv
}

// headSeed starts backpropagation in the top layer: for hn and hn-bf it
// writes direction dir's share of dv to dh (the gradient of its final
// state); the dense heads leave dh alone (their gradient is in
// headSequence's sequence).
func (r *lanes) headSeed(dv, dh []float64, dir, l int) {
	s := r.s
	if s.p.Head.dense() {
		return
	}
	hl := s.h * l
	from := dir
	if s.p.Head == HeadHNBF {
		from = s.dirs - 1 - dir
	}
	copy(dh, dv[from*hl:(from+1)*hl])
}

// headSequence writes to seq (T×dirs×H×l, as a layer above writes dOut)
// the gradient of the top layer's outputs at every step that a dense head
// sends them, given dv.
func (r *lanes) headSequence(dv, seq []float64, steps, l int) {
	s := r.s
	hl := s.h * l
	dirs := s.dirs
	switch s.p.Head {
	case HeadMean:
		n := float64(steps)
		for t := range steps {
			for d := range dirs {
				dst := seq[(t*dirs+d)*hl : (t*dirs+d+1)*hl]
				for i, g := range dv[d*hl : (d+1)*hl] {
					dst[i] = g / n
				}
			}
		}
	case HeadLast:
		clear(seq)
		copy(seq[(steps-1)*dirs*hl:steps*dirs*hl], dv[:dirs*hl])
	case HeadMax:
		clear(seq)
		for d := range dirs {
			for i, t := range r.argmax[d*hl : (d+1)*hl] {
				seq[(t*dirs+d)*hl+i] = dv[d*hl+i]
			}
		}
	case HeadAttention:
		at := r.attn(steps)
		r.attnGV(at, dv, l)
		for t := range steps {
			th := r.hSlot(t)
			s0 := r.topTrace(0).hs[th*hl : (th+1)*hl]
			var s1 []float64
			if dirs == 2 {
				s1 = r.topTrace(1).hs[th*hl : (th+1)*hl]
			}
			r.attnSeqStep(at, dv, seq[t*dirs*hl:(t+1)*dirs*hl], s0, s1, t, l)
		}
	}
}

// headLRP computes the relevance of the head's output v of the last
// one-lane pass (r.relV, D values) for class, by the classifier's rules,
// and for the dense heads writes the relevance of the top layer's outputs
// at every step to seq (T×dirs×H); it returns R_v.
func (r *lanes) headLRP(run *lrpRun, seq []float64) []float64 {
	s := r.s
	h, dirs, steps := s.h, s.dirs, run.steps
	d := h * dirs
	seg := r.headOut(steps, 1)
	v := r.headIn[:d]
	for k := range dirs {
		copy(v[k*h:(k+1)*h], seg[k])
	}
	relV := r.relV[:d]
	c := run.class
	if s.p.Act == ActNone {
		// lrp_linear(v, W_yᵀ, b_y, ŷ, ŷ_c·onehot(c), D).
		for i, w := range s.wy[c*d : (c+1)*d] {
			relV[i] = (float64(w*v[i]) + run.decoderBias) * run.decoderShare
		}
	} else {
		// lrp_linear(u, W_yᵀ, b_y, ŷ, ŷ_c·onehot(c), Units); the
		// activation passes R_u to a; lrp_linear(v, W_1ᵀ, b_1, a, R_a, D).
		units := s.p.Units
		q := r.relU[:units]
		kb := 0.0
		for m, w := range s.wy[c*units : (c+1)*units] {
			rel := (float64(w*r.u[m]) + run.decoderBias) * run.decoderShare
			q[m] = rel / stabilize(r.a[m], run.eps)
			kb += float64((s.b1[m] + float64(run.eps*sign(r.a[m]))) * q[m])
		}
		kb = float64(kb * (run.bf / float64(d)))
		clear(relV)
		kernel.LRPLinear(relV, r.acc[:d], v, s.w1, d, q)
		for i := range relV {
			relV[i] += kb
		}
	}
	switch s.p.Head {
	case HeadLast:
		clear(seq)
		copy(seq[(steps-1)*d:steps*d], relV)
	case HeadMax:
		clear(seq)
		for i, t := range r.argmax[:d] {
			seq[t*d+i] = relV[i]
		}
	case HeadAttention:
		// The weights α_t are constants: v_j = Σ_t α_t·out_{t,j}, the
		// ε-rule of a linear map of T inputs without bias.
		alpha := r.attn(steps).alpha
		n := float64(steps)
		for k := range dirs {
			tr := r.topTrace(k)
			for j := range h {
				i := k*h + j
				q := relV[i] / stabilize(v[i], run.eps)
				b := float64(float64(run.bf*float64(run.eps*sign(v[i]))) / n)
				for t := range steps {
					seq[t*d+i] = float64(float64(alpha[t]*tr.hs[t*h+j])*q) + float64(b*q)
				}
			}
		}
	case HeadMean:
		n := float64(steps)
		for k := range dirs {
			tr := r.topTrace(k)
			for j := range h {
				i := k*h + j
				q := relV[i] / stabilize(v[i], run.eps)
				b := float64(float64(run.bf*float64(run.eps*sign(v[i]))) / n)
				for t := range steps {
					seq[t*d+i] = float64(float64(tr.hs[t*h+j]/n)*q) + float64(b*q)
				}
			}
		}
	}
	return relV
}

// headDecoderShare returns the factors of the top Linear layer's ε-rule:
// ŷ_c/(ŷ_c ± ε) and each input's share of its bias and stabilizer,
// bf·(b_c + ε·sign(ŷ_c))/N, N = the layer's inputs.
func (s *Model) headDecoderShare(y, by, eps, bf float64) (share, bias float64) {
	return y / stabilize(y, eps), float64(bf*(by+float64(eps*sign(y)))) / float64(s.k)
}

package cell

import (
	"math"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// gradSink receives what backprop sends to the input of layer 0: dz_t
// (4H×l) of each step and direction. One input's gradient multiplies it by
// W_ihᵀ into grad; IG adds each lane's weighted dz_t to its block's sum
// instead (dzSum, blocks × dirs × T×4H), lane j with weight wts[j] to block
// (k0+j)/igBlock, k0 the lane 0's step in its chunk.
//
// On checkpointed lanes seg > 0: the sums cover one segment of seg steps
// (blocks of the chunk × seg×4H, one direction at a time), and flushSums
// adds their products to part (blocks of the chunk × T×E) after each
// segment, once every batch of the chunk has been through it.
type gradSink struct {
	grad  []float64 // T×E, or nil for IG
	dzSum []float64
	wts   []float64
	k0    int // lane 0's step in its chunk: lane j sums into block (k0+j)/igBlock
	seg   int
	part  []float64
	used  int // IG's lanes, the first of the batch; 0: every lane (ig_split.go)
	// perLane: the sums hold each lane's weighted input gradient W_ihᵀ·dz_t
	// (E wide) instead of its dz_t, and their products are plain
	// additions: the order the white-box networks' IG was defined with
	// on one-hot input, whose bits they keep.
	perLane bool
}

// width is the number of values a sum holds per step: E or 4H.
func (k *gradSink) width(s *Model) int {
	if k.perLane {
		return s.in
	}
	return 4 * s.h
}

func (r *lanes) sink(k *gradSink, d, t, steps, l int, dz []float64) {
	s := r.s
	g := 4 * s.h
	if k.grad != nil {
		e := s.in
		kernel.AxpyRows(k.grad[t*e:(t+1)*e], s.cells[d].wih, e, dz[:g])
		return
	}
	w, v := g, dz // the sums' width and what each lane adds
	if k.perLane {
		cl := &s.cells[d]
		w, v = s.in, r.inputGrads(l)
		clear(v)
		r.mulAdd(v, cl.wihT, cl.wih, cl.terms.wihT, s.in, g, g, 0, dz, l)
	}
	r.sinkSums(k, d, t, steps, l, v, w, 0, w)
}

// sinkSums adds the elements [e0, e1) of each lane's v (w×l) to its
// block's sum of step t, direction d (sink; a team step adds its own rows).
func (r *lanes) sinkSums(k *gradSink, d, t, steps, l int, v []float64, w, e0, e1 int) {
	// Each run of lanes [a, e) with the same block adds to its sum in one
	// laneSums, lane after lane for every element: each element of a sum
	// still gets its lanes' terms in order of j.
	n := l // lanes sunk; v's rows are l lanes wide
	if k.used > 0 {
		n = k.used
	}
	for a := 0; a < n; {
		b := (k.k0 + a) / igBlock
		e := min(n, (b+1)*igBlock-k.k0)
		var sum []float64
		if k.seg > 0 {
			sum = k.dzSum[(b*k.seg+t%k.seg)*w:]
		} else {
			sum = k.dzSum[((b*r.s.dirs+d)*steps+t)*w:]
		}
		laneSums(sum[e0:e1], v[e0*l:], l, a, e, k.wts[a:e])
		a = e
	}
}

// inputGrads returns E×l scratch for the lanes' input gradients, made on
// first use (one-hot IG only).
func (r *lanes) inputGrads(l int) []float64 {
	if len(r.gx) < r.s.in*r.l {
		r.gx = make([]float64, r.s.in*r.l)
	}
	return r.gx[:r.s.in*l]
}

// addSums adds to dst (m steps of E values) the sum of m steps of d's
// direction (one width each): W_ihᵀ·sum, or the sum itself when the sums
// hold input gradients already (perLane). With a team (tm) the steps are
// shared among its members, each step's row computed as alone, a chunk of
// steps at a time with a stopper (inputProducts). It ends early once stop
// has.
func (k *gradSink) addSums(tm *team, s *Model, d int, dst, sum []float64, m int, stop *stopper) {
	e := s.in
	if k.perLane {
		kernel.Axpy(1, sum[:m*e], dst[:m*e])
		return
	}
	g := 4 * s.h
	if tm != nil && e > 1 && m*g*e >= teamMinWork {
		n := m // the steps of a team's product
		if stop != nil {
			n = chunkSteps(e*g, max(inputBlock, teamChunkWork()/(e*g)))
		}
		for a := 0; a < m; a += n {
			c := min(a+n, m)
			if stop.spend((c - a) * e * g) {
				return
			}
			tm.mulAdd(dst[a*e:c*e], sum[a*g:c*g], nil, false, c-a, g, g, 0, s.cells[d].wih, e)
		}
		return
	}
	for a := 0; a < m; a += inputBlock {
		c := min(a+inputBlock, m)
		if stop.spend((c - a) * e * g) {
			return
		}
		kernel.MulAddRows(dst[a*e:c*e], e, s.cells[d].wih, e, sum[a*g:], g, g)
	}
}

// backward runs backpropagation through time of the logit of class over
// the trace of the last forward pass of l lanes, through every layer and
// direction, and hands each step's dz of layer 0 to sk.
func (r *lanes) backward(steps, l, class int, sk *gradSink) {
	if r.ck != nil {
		r.backwardCk(l, class, sk)
		return
	}
	s := r.s
	h, g := s.h, 4*s.h
	hl, gl := h*l, g*l
	top := s.p.Layers - 1
	dv := r.headGrad(class, l)
	for k := top; k >= 0; k-- {
		// dOut[k&1] is the gradient of layer k's output sequence, written by
		// layer k+1 (or, for the top layer, by a dense head); layer k
		// writes that of layer k−1 to dOut[(k−1)&1].
		var above, below []float64
		if k < top {
			above = r.dOut[k&1][:steps*h*s.dirs*l]
		} else if s.p.Head.dense() {
			above = r.dOut[k&1][:steps*h*s.dirs*l]
			r.headSequence(dv, above, steps, l)
		}
		if k > 0 {
			below = r.dOut[(k-1)&1][:steps*h*s.dirs*l]
			clear(below)
		}
		for d := range s.dirs {
			ci := k*s.dirs + d
			cl, tr := &s.cells[ci], &r.cells[ci]
			dh, dc, dcPrev, dz := r.dh[:hl], r.dc[:hl], r.dcPrev[:hl], r.dz[:gl]
			clear(dh)
			clear(dc)
			if k == top {
				r.headSeed(dv, dh, d, l)
			}
			work := s.stepWork(ci, l)
			for i := steps - 1; i >= 0; i-- {
				if r.stop.spend(work) {
					return
				}
				t := order(cl.reverse, i, steps)
				var at []float64
				if above != nil {
					at = above[(t*s.dirs+d)*hl : (t*s.dirs+d+1)*hl]
				}
				cPrev := r.zero[:hl]
				if i > 0 {
					tp := r.stateSlot(order(cl.reverse, i-1, steps)) // (not read on a state ring)
					cPrev = tr.c[tp*hl : (tp+1)*hl]
				}
				var sk0 *gradSink // layer 0's sink, which a team step may serve
				if k == 0 {
					sk0 = sk
				}
				sunk := r.stepBackward(cl, t, dz, dcPrev, dh, dc, at, tr.z[t*gl:(t+1)*gl], tr.tc[t*hl:(t+1)*hl], cPrev, i > 0, l, sk0, steps)
				if k > 0 {
					bt := below[t*s.dirs*hl : (t+1)*s.dirs*hl]
					r.mulAdd(bt, cl.wihT, cl.wih, cl.terms.wihT, cl.in, g, g, 0, dz, l)
				} else if !sunk {
					r.sink(sk, d, t, steps, l, dz)
				}
				dc, dcPrev = dcPrev, dc
			}
		}
	}
}

// stepBackward is backprop's time step of one cell for l lanes: dh gets
// the gradient the layer above (or a dense head) sends to this step's
// output (at, nil for none); dz and dcPrev get the gradients of the
// pre-activations and of c_{t−1}; then, unless this is the cell's first
// step (recur false), dh becomes W_hhᵀ·dz, the gradient of h_{t−1}.
//
// Layer 0's IG hands its sink sk (nil: none) and the steps: a team step
// adds dz to the sums itself, and stepBackward reports that it did.
func (r *lanes) stepBackward(cl *packedCell, t int, dz, dcPrev, dh, dc, at, gates, tc, cPrev []float64, recur bool, l int, sk *gradSink, steps int) (sunk bool) {
	ci := cl.layer*r.s.dirs + cl.dir
	if tm := r.stepTeam(ci, l); tm != nil {
		return r.teamBackward(tm, ci, t, dz, dcPrev, dh, dc, at, gates, tc, cPrev, recur, l, sk, steps)
	}
	for j, v := range at {
		dh[j] += v
	}
	if r.s.p.Kind == LayerGRU {
		gruBackward(dz, len(dh), dcPrev, dh, dc, gates, cPrev)
	} else if cl.layer == 0 && r.tablesOn(0, l) {
		r.gateBackwardTable(t, dz, dcPrev, dh, dc, gates, tc, cPrev, l)
	} else {
		kernel.GateBackward(dz, dcPrev, dh, dc, gates, tc, cPrev)
	}
	if recur {
		h, g := r.s.h, 4*r.s.h
		clear(dh)
		r.mulAdd(dh, cl.whhT, cl.whh, cl.terms.whhT, h, g, g, 0, dz, l)
	}
	return false
}

// lrp runs the ε-rule of Arras et al.'s LSTM_bidi.lrp over the trace of the
// last one-lane forward pass, layer by layer from the top, and adds the
// relevance of layer 0's input x (T×E) to rel. See Runner.LRP.
// Every product is rounded before it is added (float64(a*b) + c): Go may
// fuse a*b + c into one FMA on arm64 and not on amd64, and the results
// must be the same bits on every CPU.
func (r *lanes) lrp(x []float64, steps, class int, eps, bf float64, rel []float64) Relevance {
	s := r.s
	h, dirs := s.h, s.dirs
	top := s.p.Layers - 1
	y := r.logitsBuf[class]
	run := lrpRun{x: x, steps: steps, class: class, eps: eps, bf: bf, rel: rel}
	// The decoder: lrp_linear(its input, W_yᵀ, b_y, ŷ, ŷ_c·onehot(c), N).
	run.decoderShare, run.decoderBias = s.headDecoderShare(y, s.by[class], eps, bf)
	if s.p.LRP == LRPHao { // the decoder: ŷ_c/(z_c ± ε), z_c = W_y·h
		run.decoderShare, run.decoderBias, run.netBias = y/stabilize(r.lin[class], eps), 0, true
	}
	var seq []float64
	if s.p.Head.dense() {
		seq = r.dOut[top&1][:steps*h*dirs]
	}
	run.relV = r.headLRP(&run, seq)
	out := Relevance{Output: y}
	clear(rel)
	for k := top; k >= 0; k-- {
		run.above, run.below = nil, nil
		if k < top || seq != nil {
			run.above = r.dOut[k&1][:steps*h*dirs]
		}
		if k > 0 {
			run.below = r.dOut[(k-1)&1][:steps*h*dirs]
			clear(run.below)
		}
		for d := range dirs {
			out.Initial += r.lrpCell(&run, k, d, k == top)
		}
	}
	inputs := 0.0
	for _, v := range rel[:steps*s.in] {
		inputs += v
	}
	out.Bias = out.Output - inputs - out.Initial
	if run.netBias {
		out.Bias = run.gBias
	}
	return out
}

// lrpRun is one LRP pass: its input and settings, the relevance of the
// current layer's outputs (above, from the layer above; nil for the top)
// and of its inputs (below, the outputs of the layer below; rel for layer 0).
type lrpRun struct {
	x                         []float64
	steps, class              int
	eps, bf                   float64
	rel, above, below         []float64
	decoderShare, decoderBias float64
	relV                      []float64 // the relevance of the head's output v
	netBias                   bool      // LRPHao: gBias sums Σ_j b_gj·q_j over the steps
	gBias                     float64
}

// lrpCell runs Arras et al.'s loop over direction d of layer k, from the
// last step it processed to the first, adding its inputs' relevance to
// run.below (or run.rel), and returns the relevance that reaches its zero
// initial state.
func (r *lanes) lrpCell(run *lrpRun, k, d int, top bool) float64 {
	s := r.s
	if s.p.Kind == LayerGRU {
		return r.lrpCellGRU(run, k, d, top)
	}
	h, g, dirs, steps := s.h, 4*s.h, s.dirs, run.steps
	cl, tr := &s.cells[k*dirs+d], &r.cells[k*dirs+d]
	rh, rc, rcPrev, q, acc := r.dh[:h], r.dc[:h], r.dcPrev[:h], r.dz[:h], r.dz[h:2*h]
	clear(rh)
	clear(rc)
	if top {
		r.headSeed(run.relV, rh, d, 1)
	}
	wg, whg := cl.wih[2*h*cl.in:3*h*cl.in], cl.whh[2*h*h:3*h*h]
	work := s.stepWork(k*dirs+d, 1)
	for i := steps - 1; i >= 0; i-- {
		if r.stop.spend(work) {
			return 0
		}
		t := order(cl.reverse, i, steps)
		if run.above != nil {
			for j, v := range run.above[(t*dirs+d)*h : (t*dirs+d+1)*h] {
				rh[j] += v
			}
		}
		cPrev, hPrev := r.zero[:h], r.zero[:h]
		if i > 0 {
			tp := order(cl.reverse, i-1, steps)
			cPrev, hPrev = tr.c[tp*h:(tp+1)*h], tr.hs[tp*h:(tp+1)*h]
		}
		kx := r.lrpGate(run, cl, tr.z[t*g:(t+1)*g], tr.c[t*h:(t+1)*h], tr.zg[t*h:(t+1)*h], cPrev)
		if run.netBias {
			for j, b := range cl.b[2*h : 3*h] {
				run.gBias += float64(b * q[j])
			}
		}
		// x_t: lrp_linear(x_t, W_gᵀ, b_g, z_g, R_g, H+in).
		var xt, dst []float64
		if k > 0 {
			dst, xt = run.below[t*dirs*h:(t+1)*dirs*h], r.layerInput(k, t, steps)
		} else {
			dst, xt = run.rel[t*s.in:(t+1)*s.in], run.x[t*s.in:(t+1)*s.in]
		}
		kernel.LRPLinear(dst, r.acc[:cl.in], xt, wg, cl.in, q)
		if !run.netBias { // LRPHao has no shares of the bias
			for j := range dst {
				dst[j] += kx
			}
		}
		// h_{t−1}: the same map's recurrent inputs.
		clear(rh)
		kernel.LRPLinear(rh, acc, hPrev, whg, h, q)
		if !run.netBias {
			for j := range rh {
				rh[j] += kx
			}
		}
		copy(rc, rcPrev)
	}
	initial := 0.0
	for j := range rh {
		initial += rh[j] + rc[j]
	}
	return initial
}

// lrpGate splits the relevance of c_t (r.dc, that of h_t r.dh added) by
// c_t = f⊙c_{t−1} + i⊙g, lrp_linear with the identity and 2H units: the
// share of c_{t−1} to r.dcPrev, that of g divided by z_g ± ε to q (r.dz);
// it returns each input's share of g's bias and stabilizer,
// bf·Σ_j (b_j + ε·sign(z_j))·q_j / (H + in).
func (r *lanes) lrpGate(run *lrpRun, cl *packedCell, gates, c, zg, cPrev []float64) float64 {
	h, eps, bf := r.s.h, run.eps, run.bf
	rh, rc, rcPrev, q, bg := r.dh[:h], r.dc[:h], r.dcPrev[:h], r.dz[:h], cl.b[2*h:3*h]
	if run.netBias { // LRPHao (bias factor 0), in its order of operations
		for j := range rc {
			rc[j] += rh[j]
		}
		kernel.LRPCell(rcPrev, q, rc, gates, zg, c, cPrev, eps)
		return 0
	}
	cross := 0.0
	for j := range rc {
		rc[j] += rh[j]
		sv := rc[j] / stabilize(c[j], eps)
		rc[j] = sv // s_j, until the split below
		cross += float64(sign(c[j]) * sv)
	}
	cross = float64(cross * (bf * eps / float64(2*h)))
	kx := 0.0
	for j := range rc {
		sv := rc[j]
		rcPrev[j] = float64(float64(gates[h+j]*cPrev[j])*sv) + cross
		rg := float64(float64(gates[j]*gates[2*h+j])*sv) + cross
		q[j] = rg / stabilize(zg[j], eps)
		kx += float64((bg[j] + float64(eps*sign(zg[j]))) * q[j])
	}
	return float64(kx * (bf / float64(h+cl.in)))
}

// layerInput returns layer k's input at step t (k ≥ 1): the output of
// layer k−1, both directions, in r.row.
func (r *lanes) layerInput(k, t, steps int) []float64 {
	s := r.s
	h := s.h
	row := r.row[:h*s.dirs]
	for d := range s.dirs {
		tr := &r.cells[(k-1)*s.dirs+d]
		copy(row[d*h:(d+1)*h], tr.hs[t*h:(t+1)*h])
	}
	return row
}

// sign is numpy's np.where(z >= 0, 1, -1): sign(0) = +1.
func sign(z float64) float64 {
	if z >= 0 || math.IsNaN(z) {
		return 1
	}
	return -1
}

// laneSums adds Σ_q w[q]·gx[i*l+a+q], q in order, to p[i] for every i <
// len(p). The sums are independent chains of fused multiply-adds, each bound
// by the latency of the one before; four run side by side so that the
// processor overlaps them (measured, IG sp-counter T = 256, 1000 steps, 1
// thread: the sums took 12% of the time one at a time).
func laneSums(p, gx []float64, l, a, e int, w []float64) {
	w = w[:e-a]
	i := 0
	for ; i+4 <= len(p); i += 4 {
		r0 := gx[i*l+a : i*l+e]
		r1 := gx[(i+1)*l+a : (i+1)*l+e]
		r2 := gx[(i+2)*l+a : (i+2)*l+e]
		r3 := gx[(i+3)*l+a : (i+3)*l+e]
		r0, r1, r2, r3 = r0[:len(w)], r1[:len(w)], r2[:len(w)], r3[:len(w)]
		s0, s1, s2, s3 := p[i], p[i+1], p[i+2], p[i+3]
		for q, v := range w {
			s0 = math.FMA(v, r0[q], s0)
			s1 = math.FMA(v, r1[q], s1)
			s2 = math.FMA(v, r2[q], s2)
			s3 = math.FMA(v, r3[q], s3)
		}
		p[i], p[i+1], p[i+2], p[i+3] = s0, s1, s2, s3
	}
	for ; i < len(p); i++ {
		acc := p[i]
		for q, v := range gx[i*l+a : i*l+e] {
			acc = math.FMA(w[q], v, acc)
		}
		p[i] = acc
	}
}

// inputBlock is the number of time steps whose input products one
// kernel.MulAddRows call computes (the weights go by once per block
// instead of once per step).
const inputBlock = 32

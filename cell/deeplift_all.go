package cell

import (
	"context"
	"fmt"
	"math"
)

// DeepLIFT of every class at once: the traced passes of the input and of
// the reference run once, and the multiplier passes of the C classes run
// together as C lanes (lane-minor, [j·C + c], as the batched lanes keep
// theirs), so each step's products with W_hh and W_ih are one product with
// C columns instead of C products with one. Each multiplier of each lane
// is computed by the operations of the one-class pass in the same order
// (mulAddLanes does the same fused multiply-adds for one lane as for
// many), so class c's scores have the bits of DeepLIFT(x, ref, c, ·).

// deepLIFTLanes is the multi-class multiplier pass's scratch, C lanes.
type deepLIFTLanes struct {
	l, steps           int
	mh, mc, mcPrev, mz []float64 // H·C, H·C, H·C, 4H·C
	mv, ma             []float64 // D·C, Units·C
	seq                [2][]float64
	mx                 []float64 // T×E×C
}

// DeepLIFTAllBytes is the memory DeepLIFTAll takes beyond DeepLIFT's
// (DeepLIFTBytes) for C classes on steps steps: the multipliers of every
// class at once.
func (s *Model) DeepLIFTAllBytes(steps int) int64 {
	c, t := int64(s.c), int64(steps)
	h, d := int64(s.h), int64(s.h)*int64(s.dirs)
	seq := int64(0)
	if len(s.cells) > s.dirs || s.p.Head.dense() {
		seq = 2 * t * d
	}
	return 8*c*(7*h+d+int64(s.p.Units)+seq+t*int64(s.in)) + s.attnDeepLIFTBytes(steps, s.c) - s.attnDeepLIFTBytes(steps, 1)
}

// DeepLIFTAll writes the DeepLIFT scores of x against ref for every class
// c to outs[c] (C buffers of T×E) and returns the logits of x and of ref
// (owned by r). The traced passes of x and of ref run once and the
// multiplier passes of all the classes together (see above); outs[c] has
// the bits of DeepLIFT(x, ref, c, ·). It takes DeepLIFTAllBytes more
// memory than DeepLIFT. It ends soon after ctx is done (nil: never) with
// an error wrapping ctx.Err().
func (r *Runner) DeepLIFTAll(ctx context.Context, x, ref Input, outs [][]float64) (logits, refLogits []float64, err error) {
	err = r.withStop(ctx, func() error {
		logits, refLogits, err = r.deepLIFTAll(x, ref, outs)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return logits, refLogits, nil
}

func (r *Runner) deepLIFTAll(x, ref Input, outs [][]float64) (logits, refLogits []float64, err error) {
	if err := r.acquire(); err != nil {
		return nil, nil, err
	}
	defer r.release()
	if r.s.p.Kind == LayerGRU && !gruDeepLIFT {
		return nil, nil, errGRU("DeepLIFT")
	}
	if err := r.check(x); err != nil {
		return nil, nil, err
	}
	if err := checkClasses(outs, r.s.c, x.Len()*r.s.in, "DeepLIFT"); err != nil {
		return nil, nil, err
	}
	d, err := r.deepLIFTInput(x, ref)
	if err != nil {
		return nil, nil, err
	}
	defer func() { d.x.stop, d.ref.stop = nil, nil }()
	steps := x.Len()
	d.ref.forward(d.uref, steps, 1)
	b := d.lanesFor(steps, r.s.c)
	mx := b.mx[:steps*r.s.in*b.l]
	clear(mx)
	d.backwardAll(steps, b, mx)
	if r.pass.err() != nil {
		return nil, nil, nil // withStop returns the context's error
	}
	l := b.l
	for k := range steps * r.s.in {
		dx := x.feature(x.dense[k]) - ref.feature(ref.dense[k])
		for c, contrib := range outs {
			contrib[k] = float64(dx * mx[k*l+c])
		}
	}
	for c, contrib := range outs {
		for k, v := range contrib {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("cell: the DeepLIFT score of input value %d is %v (class %d)", k, v, c)
			}
		}
	}
	return d.x.logitsBuf[:r.s.c], d.ref.logitsBuf[:r.s.c], nil
}

// lanesFor returns d's multi-class scratch for l classes, grown to steps.
func (d *deepLIFTState) lanesFor(steps, l int) *deepLIFTLanes {
	s := d.x.s
	b := d.all
	if b != nil && b.l == l && b.steps >= steps {
		return b
	}
	h, dd := s.h, s.h*s.dirs
	b = &deepLIFTLanes{l: l, steps: steps,
		mh: make([]float64, h*l), mc: make([]float64, h*l), mcPrev: make([]float64, h*l), mz: make([]float64, 4*h*l),
		mv: make([]float64, dd*l), ma: make([]float64, s.p.Units*l), mx: make([]float64, steps*s.in*l)}
	if len(s.cells) > s.dirs || s.p.Head.dense() {
		for i := range b.seq {
			b.seq[i] = make([]float64, steps*dd*l)
		}
	}
	d.all = b
	return b
}

// backwardAll is backward for every class at once, the class c in lane c:
// it adds the multipliers of ŷ_c to mx[(t*E+i)*C + c].
func (d *deepLIFTState) backwardAll(steps int, b *deepLIFTLanes, mx []float64) {
	x, x0 := d.x, d.ref
	s := x.s
	l := b.l
	h, g, dirs, e := s.h, 4*s.h, s.dirs, s.in
	hl := h * l
	top := s.p.Layers - 1
	mv := d.headMultipliersAll(b)
	for k := top; k >= 0; k-- {
		var above, below []float64
		if k < top {
			above = b.seq[k&1][:steps*hl*dirs]
		} else if s.p.Head.dense() {
			above = b.seq[k&1][:steps*hl*dirs]
			d.headSequenceAll(mv, above, steps, l)
		}
		if k > 0 {
			below = b.seq[(k-1)&1][:steps*hl*dirs]
			clear(below)
		}
		for dir := range dirs {
			ci := k*dirs + dir
			cl, tr, tr0 := &s.cells[ci], &x.cells[ci], &x0.cells[ci]
			mh, mc, mcPrev, mz := b.mh[:hl], b.mc[:hl], b.mcPrev[:hl], b.mz[:g*l]
			clear(mh)
			clear(mc)
			if k == top {
				x.headSeed(mv, mh, dir, l)
			}
			work := s.stepWork(ci, l)
			for i := steps - 1; i >= 0; i-- {
				if x.stop.spend(work) {
					return
				}
				t := order(cl.reverse, i, steps)
				if above != nil {
					for j, v := range above[(t*dirs+dir)*hl : (t*dirs+dir+1)*hl] {
						mh[j] += v
					}
				}
				cPrev, cPrev0 := x.zero[:h], x0.zero[:h]
				if i > 0 {
					tp := order(cl.reverse, i-1, steps)
					cPrev, cPrev0 = tr.c[tp*h:(tp+1)*h], tr0.c[tp*h:(tp+1)*h]
				}
				if s.p.Kind == LayerGRU {
					gruMultipliersLanes(mz, mcPrev, mh, mc, stepOf(tr, t, h), stepOf(tr0, t, h), cPrev, cPrev0, l)
				} else {
					gateMultipliersLanes(mz, mcPrev, mh, mc, stepOf(tr, t, h), stepOf(tr0, t, h), cPrev, cPrev0, l)
				}
				if k > 0 {
					mulAddLanes(below[t*dirs*hl:(t+1)*dirs*hl], cl.wihT, cl.wih, s.nonzero, cl.in, g, g, 0, mz, l)
				} else {
					mulAddLanes(mx[t*e*l:(t+1)*e*l], cl.wihT, cl.wih, s.nonzero, e, g, g, 0, mz, l)
				}
				if i > 0 {
					clear(mh)
					mulAddLanes(mh, cl.whhT, cl.whh, s.nonzero, h, g, g, 0, mz, l)
				}
				mc, mcPrev = mcPrev, mc
			}
		}
	}
}

// gateMultipliersLanes is gateMultipliers for l lanes of multipliers over
// one trace: each factor is computed once and applied to every lane, by
// the one-lane operations.
func gateMultipliersLanes(mz, mcPrev, mh, mc []float64, x, x0 cellStep, cPrev, cPrev0 []float64, l int) {
	h := len(mh) / l
	for j := range h {
		i, f, g, o := x.act[j], x.act[h+j], x.act[2*h+j], x.act[3*h+j]
		i0, f0, g0, o0 := x0.act[j], x0.act[h+j], x0.act[2*h+j], x0.act[3*h+j]
		so, stc := shapley(x0.tc[j], x.tc[j]), shapley(o0, o)
		rtc := rescale(x.c[j], x0.c[j], x.tc[j], x0.tc[j], tanhPrime)
		sf, sc, si, sg := shapley(cPrev0[j], cPrev[j]), shapley(f0, f), shapley(g0, g), shapley(i0, i)
		ri := rescale(x.pre[j], x0.pre[j], i, i0, sigmoidPrime)
		rf := rescale(x.pre[h+j], x0.pre[h+j], f, f0, sigmoidPrime)
		rg := rescale(x.pre[2*h+j], x0.pre[2*h+j], g, g0, tanhPrime)
		ro := rescale(x.pre[3*h+j], x0.pre[3*h+j], o, o0, sigmoidPrime)
		for c := range l {
			u := j*l + c
			mo := float64(mh[u] * so)
			mtc := float64(mh[u] * stc)
			m := mc[u] + float64(mtc*rtc)
			mf := float64(m * sf)
			mcPrev[u] = float64(m * sc)
			mi := float64(m * si)
			mg := float64(m * sg)
			mz[u] = float64(mi * ri)
			mz[(h+j)*l+c] = float64(mf * rf)
			mz[(2*h+j)*l+c] = float64(mg * rg)
			mz[(3*h+j)*l+c] = float64(mo * ro)
		}
	}
}

// headMultipliersAll is headMultipliers for every class, class c in lane
// c of b.mv (D×C).
func (d *deepLIFTState) headMultipliersAll(b *deepLIFTLanes) []float64 {
	x, x0 := d.x, d.ref
	s := x.s
	l, dd := b.l, s.h*s.dirs
	mv := b.mv[:dd*l]
	if s.p.Act == ActNone {
		for c := range l {
			for u, w := range s.wy[c*dd : (c+1)*dd] {
				mv[u*l+c] = w
			}
		}
		return mv
	}
	units := s.p.Units
	prime := tanhPrime
	if s.p.Act == ActReLU {
		prime = reluPrime
	}
	ma := b.ma[:units*l]
	for m := range units {
		ra := rescale(x.a[m], x0.a[m], x.u[m], x0.u[m], prime)
		for c := range l {
			ma[m*l+c] = float64(s.wy[c*units+m] * ra)
		}
	}
	clear(mv)
	mulAddLanes(mv, s.w1T, s.w1, s.nonzero, dd, units, units, 0, ma, l)
	return mv
}

// headSequenceAll is headSequence for every class, class c in lane c.
func (d *deepLIFTState) headSequenceAll(mv, seq []float64, steps, l int) {
	x, x0 := d.x, d.ref
	s := x.s
	if s.p.Head == HeadAttention {
		d.attnSequence(mv, seq, steps, l)
		return
	}
	if s.p.Head != HeadMax {
		x.headSequence(mv, seq, steps, l)
		return
	}
	h, dirs := s.h, s.dirs
	clear(seq)
	for dir := range dirs {
		hs, hs0 := x.topTrace(dir).hs, x0.topTrace(dir).hs
		for j := range h {
			u := dir*h + j
			a, b := x.argmax[u], x0.argmax[u]
			ua, ub := ((a*dirs+dir)*h+j)*l, ((b*dirs+dir)*h+j)*l
			if a == b {
				copy(seq[ua:ua+l], mv[u*l:(u+1)*l])
				continue
			}
			gap := hs[a*h+j] - hs[b*h+j]
			gap0 := hs0[b*h+j] - hs0[a*h+j]
			lambda := gap / (gap + gap0)
			for c := range l {
				seq[ua+c] = float64(lambda * mv[u*l+c])
				seq[ub+c] = float64((1 - lambda) * mv[u*l+c])
			}
		}
	}
}

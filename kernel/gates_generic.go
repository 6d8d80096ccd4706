package kernel

import "math"

// The generic twins. Each is the specification of its kernel: an optimized
// body must perform exactly these IEEE operations, in this order, per element.

func axpyGeneric(alpha float64, x, y []float64) {
	x = x[:len(y)] // bounds check elimination hint
	for i, v := range x {
		y[i] = math.FMA(alpha, v, y[i])
	}
}

func axpyRowsGeneric(dst, rows []float64, stride int, coef []float64) {
	n := len(dst)
	for j, a := range coef {
		if a == 0 {
			continue
		}
		axpyGeneric(a, rows[j*stride:j*stride+n], dst)
	}
}

func mulAddRowsGeneric(dst []float64, n int, rows []float64, stride int, coef []float64, coefStride, k int) {
	for r := range len(dst) / n {
		axpyRowsGeneric(dst[r*n:(r+1)*n], rows, stride, coef[r*coefStride:r*coefStride+k])
	}
}

func gateStepGeneric(gates, zg, cPrev, c, tc, h []float64) {
	n := len(c)
	gateStepBlocks(gates[:n], gates[n:2*n], gates[2*n:3*n], gates[3*n:4*n], zg, cPrev, c, tc, h)
}

// gateStepBlocks is gateStepGeneric with the four gate blocks passed
// separately (the AVX2 path finishes its tail with it).
func gateStepBlocks(gi, gf, gg, gt, zg, cPrev, c, tc, h []float64) {
	n := len(c)
	gi, gf, gg, gt = gi[:n], gf[:n], gg[:n], gt[:n]
	zg, cPrev, tc, h = zg[:n], cPrev[:n], tc[:n], h[:n]
	for j := range n {
		zgj := gg[j]
		i := sigmoidGeneric(gi[j])
		f := sigmoidGeneric(gf[j])
		g := tanhGeneric(zgj)
		o := sigmoidGeneric(gt[j])
		cj := float64(f*cPrev[j]) + float64(i*g)
		t := tanhGeneric(cj)
		gi[j], gf[j], gg[j], gt[j] = i, f, g, o
		zg[j], c[j], tc[j], h[j] = zgj, cj, t, o*t
	}
}

func gateStepTableGeneric(gates []float64, stride int, act []float64, table int, cPrev, c, tc, h []float64) {
	n := len(c)
	var ai, af, ag, ao []float64
	if table != 0 {
		ai, af, ag, ao = act[:n], act[stride:stride+n], act[2*stride:2*stride+n], act[3*stride:3*stride+n]
	}
	gateStepTableBlocks(gates[:n], gates[stride:stride+n], gates[2*stride:2*stride+n], gates[3*stride:3*stride+n],
		ai, af, ag, ao, table, cPrev, c, tc, h)
}

// gateStepTableBlocks is gateStepTableGeneric with the gate blocks of gates
// and act passed separately (act's are nil when table is 0).
func gateStepTableBlocks(gi, gf, gg, gt, ai, af, ag, ao []float64, table int, cPrev, c, tc, h []float64) {
	n := len(c)
	gi, gf, gg, gt = gi[:n], gf[:n], gg[:n], gt[:n]
	cPrev, tc, h = cPrev[:n], tc[:n], h[:n]
	for j := range n {
		var i, f, g, o float64
		if table&TableI != 0 {
			i = ai[j]
		} else {
			i = sigmoidGeneric(gi[j])
			gi[j] = i
		}
		if table&TableF != 0 {
			f = af[j]
		} else {
			f = sigmoidGeneric(gf[j])
			gf[j] = f
		}
		if table&TableG != 0 {
			g = ag[j]
		} else {
			g = tanhGeneric(gg[j])
			gg[j] = g
		}
		if table&TableO != 0 {
			o = ao[j]
		} else {
			o = sigmoidGeneric(gt[j])
			gt[j] = o
		}
		cj := float64(f*cPrev[j]) + float64(i*g)
		t := tanhGeneric(cj)
		c[j], tc[j], h[j] = cj, t, o*t
	}
}

func gateBackwardGeneric(dz, dcPrev, dh, dc, gates, tc, cPrev []float64) {
	n := len(dh)
	gateBackwardBlocks(dz[:n], dz[n:2*n], dz[2*n:3*n], dz[3*n:4*n], dcPrev, dh, dc,
		gates[:n], gates[n:2*n], gates[2*n:3*n], gates[3*n:4*n], tc, cPrev)
}

// gateBackwardBlocks is gateBackwardGeneric with the gate blocks of dz and
// gates passed separately.
func gateBackwardBlocks(di, df, dg, do, dcPrev, dh, dc, gi, gf, gg, gt, tc, cPrev []float64) {
	n := len(dh)
	di, df, dg, do = di[:n], df[:n], dg[:n], do[:n]
	gi, gf, gg, gt = gi[:n], gf[:n], gg[:n], gt[:n]
	dcPrev, dc, tc, cPrev = dcPrev[:n], dc[:n], tc[:n], cPrev[:n]
	for j := range n {
		i, f, g, o, t, d := gi[j], gf[j], gg[j], gt[j], tc[j], dh[j]
		// dL/dc_t: through h_t = o·tanh(c_t), plus what c_{t+1} = f·c_t + … sent back.
		dct := float64(float64(d*o)*float64(1-float64(t*t))) + dc[j]
		// The sigmoid and tanh derivatives in autograd's order: (g·(1−y))·y and g·(1−y²).
		do[j] = float64(float64(d*t)*float64(1-o)) * o
		di[j] = float64(float64(dct*g)*float64(1-i)) * i
		df[j] = float64(float64(dct*cPrev[j])*float64(1-f)) * f
		dg[j] = float64(dct*i) * float64(1-float64(g*g))
		dcPrev[j] = dct * f
	}
}

func gateBackwardTableGeneric(dz []float64, stride int, dcPrev, dh, dc, gates, act []float64, table, need int, tc, cPrev []float64) {
	n := len(dh)
	blocks := func(v []float64) [4][]float64 {
		return [4][]float64{v[:n], v[stride : stride+n], v[2*stride : 2*stride+n], v[3*stride : 3*stride+n]}
	}
	d, g := blocks(dz), blocks(gates)
	if table != 0 {
		a := blocks(act)
		for q := range 4 {
			if table&(1<<q) != 0 {
				g[q] = a[q]
			}
		}
	}
	gateBackwardNeed(d[0], d[1], d[2], d[3], dcPrev, dh, dc, g[0], g[1], g[2], g[3], need, tc, cPrev)
}

// gateBackwardNeed is gateBackwardBlocks writing dz only for the gates in
// need (bit q: gate q), with the same operations for those.
func gateBackwardNeed(di, df, dg, do, dcPrev, dh, dc, gi, gf, gg, gt []float64, need int, tc, cPrev []float64) {
	if need&15 == 15 {
		gateBackwardBlocks(di, df, dg, do, dcPrev, dh, dc, gi, gf, gg, gt, tc, cPrev)
		return
	}
	n := len(dh)
	dcPrev, dc, tc, gf, gt = dcPrev[:n], dc[:n], tc[:n], gf[:n], gt[:n]
	for j := range n {
		f, o, t, d := gf[j], gt[j], tc[j], dh[j]
		dct := float64(float64(d*o)*float64(1-float64(t*t))) + dc[j]
		if need&TableO != 0 {
			do[j] = float64(float64(d*t)*float64(1-o)) * o
		}
		if need&TableI != 0 {
			i := gi[j]
			di[j] = float64(float64(dct*gg[j])*float64(1-i)) * i
		}
		if need&TableF != 0 {
			df[j] = float64(float64(dct*cPrev[j])*float64(1-f)) * f
		}
		if need&TableG != 0 {
			g := gg[j]
			dg[j] = float64(dct*gi[j]) * float64(1-float64(g*g))
		}
		dcPrev[j] = dct * f
	}
}

// stabilize is Stabilize (the kernels' own name for it).
func stabilize(z, eps float64) float64 { return Stabilize(z, eps) }

func lrpCellGeneric(rcPrev, qg, rc, gates, zg, c, cPrev []float64, eps float64) {
	n := len(rc)
	lrpCellBlocks(rcPrev, qg, rc, gates[:n], gates[n:2*n], gates[2*n:3*n], zg, c, cPrev, eps)
}

// lrpCellBlocks is lrpCellGeneric with the gate blocks passed separately.
func lrpCellBlocks(rcPrev, qg, rc, gi, gf, gg, zg, c, cPrev []float64, eps float64) {
	n := len(rc)
	gi, gf, gg = gi[:n], gf[:n], gg[:n]
	rcPrev, qg, zg, c, cPrev = rcPrev[:n], qg[:n], zg[:n], c[:n], cPrev[:n]
	for j := range n {
		s := rc[j] / stabilize(c[j], eps)
		rcPrev[j] = float64(gf[j]*cPrev[j]) * s
		rg := float64(gi[j]*gg[j]) * s
		qg[j] = rg / stabilize(zg[j], eps)
	}
}

func lrpLinearGeneric(dst, acc, a []float64) {
	acc, a = acc[:len(dst)], a[:len(dst)]
	for i := range dst {
		dst[i] += float64(a[i] * acc[i])
	}
}

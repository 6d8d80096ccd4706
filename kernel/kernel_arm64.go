//go:build !purego

package kernel

// ASIMD (NEON) is part of the arm64 baseline, so the NEON bodies of
// kernel_arm64.s are always available. They cover n rounded down to an even
// number; the twin finishes an odd last element.

func init() {
	supported[implNEON] = true
	impl = implNEON
}

// neonTail is where the NEON bodies stop.
func neonTail(n int) int { return n &^ 1 }

// gateStepNEON is gateStepGeneric on 2-lane NEON vectors, for n rounded down to an even number.
//
//go:noescape
func gateStepNEON(gates, zg, cPrev, c, tc, h []float64)

// gateBackwardNEON is gateBackwardGeneric on 2-lane NEON vectors, for n rounded down to an even number.
//
//go:noescape
func gateBackwardNEON(dz, dcPrev, dh, dc, gates, tc, cPrev []float64)

// gateStepTableNEON is gateStepTableGeneric on 2-lane NEON vectors, for n rounded down to an even number.
//
//go:noescape
func gateStepTableNEON(gates []float64, stride int, act []float64, table int, cPrev, c, tc, h []float64)

// gateBackwardTableNEON is gateBackwardTableGeneric on 2-lane NEON vectors, for n rounded down to an even number.
//
//go:noescape
func gateBackwardTableNEON(dz []float64, stride int, dcPrev, dh, dc, gates, act []float64, table, need int, tc, cPrev []float64)

// lrpCellNEON is lrpCellGeneric on 2-lane NEON vectors, for n rounded down to an even number.
//
//go:noescape
func lrpCellNEON(rcPrev, qg, rc, gates, zg, c, cPrev []float64, eps float64)

// lrpLinearNEON is lrpLinearGeneric on 2-lane NEON vectors, for n rounded down to an even number.
//
//go:noescape
func lrpLinearNEON(dst, acc, a []float64)

// axpyNEON is axpyGeneric on 2-lane NEON vectors, for n rounded down to an even number.
//
//go:noescape
func axpyNEON(alpha float64, x, y []float64)

// axpyRowsNEON is axpyRowsGeneric on 2-lane NEON vectors, for n rounded down to an even number.
//
//go:noescape
func axpyRowsNEON(dst, rows []float64, stride int, coef []float64)

func axpy(alpha float64, x, y []float64) {
	if impl != implNEON {
		axpyGeneric(alpha, x, y)
		return
	}
	axpyNEON(alpha, x, y)
	if m := neonTail(len(y)); m < len(y) {
		axpyGeneric(alpha, x[m:], y[m:])
	}
}

func axpyRows(dst, rows []float64, stride int, coef []float64) {
	if impl != implNEON {
		axpyRowsGeneric(dst, rows, stride, coef)
		return
	}
	axpyRowsNEON(dst, rows, stride, coef)
	if m := neonTail(len(dst)); m < len(dst) {
		axpyRowsGeneric(dst[m:], rows[m:], stride, coef)
	}
}

// mulAddRows runs axpyRowsNEON row by row: on two-lane vectors a tile of
// output rows buys little over the axpys, and every row gets the same bits.
func mulAddRows(dst []float64, n int, rows []float64, stride int, coef []float64, coefStride, k int, _ bool) {
	for r := range len(dst) / n {
		axpyRows(dst[r*n:(r+1)*n], rows, stride, coef[r*coefStride:r*coefStride+k])
	}
}

func gateStep(gates, zg, cPrev, c, tc, h []float64) {
	if impl != implNEON {
		gateStepGeneric(gates, zg, cPrev, c, tc, h)
		return
	}
	gateStepNEON(gates, zg, cPrev, c, tc, h)
	if n, m := len(c), neonTail(len(c)); m < n {
		gateStepBlocks(gates[m:n], gates[n+m:2*n], gates[2*n+m:3*n], gates[3*n+m:4*n],
			zg[m:], cPrev[m:], c[m:], tc[m:], h[m:])
	}
}

func gateStepTable(gates []float64, stride int, act []float64, table int, cPrev, c, tc, h []float64) {
	if impl != implNEON {
		gateStepTableGeneric(gates, stride, act, table, cPrev, c, tc, h)
		return
	}
	gateStepTableNEON(gates, stride, act, table, cPrev, c, tc, h)
	if n, m := len(c), neonTail(len(c)); m < n {
		var ai, af, ag, ao []float64
		if table != 0 {
			ai, af, ag, ao = act[m:n], act[stride+m:stride+n], act[2*stride+m:2*stride+n], act[3*stride+m:3*stride+n]
		}
		gateStepTableBlocks(gates[m:n], gates[stride+m:stride+n], gates[2*stride+m:2*stride+n], gates[3*stride+m:3*stride+n],
			ai, af, ag, ao, table, cPrev[m:], c[m:], tc[m:], h[m:])
	}
}

func gateBackwardTable(dz []float64, stride int, dcPrev, dh, dc, gates, act []float64, table, need int, tc, cPrev []float64) {
	if impl != implNEON {
		gateBackwardTableGeneric(dz, stride, dcPrev, dh, dc, gates, act, table, need, tc, cPrev)
		return
	}
	if table == 0 {
		act = gates // never read; the NEON body takes a valid base
	}
	gateBackwardTableNEON(dz, stride, dcPrev, dh, dc, gates, act, table, need, tc, cPrev)
	if n, m := len(dh), neonTail(len(dh)); m < n {
		var a []float64
		if table != 0 {
			a = act[m:]
		}
		gateBackwardTableGeneric(dz[m:], stride, dcPrev[m:n], dh[m:n], dc[m:], gates[m:], a, table, need, tc[m:], cPrev[m:])
	}
}

func gateBackward(dz, dcPrev, dh, dc, gates, tc, cPrev []float64) {
	if impl != implNEON {
		gateBackwardGeneric(dz, dcPrev, dh, dc, gates, tc, cPrev)
		return
	}
	gateBackwardNEON(dz, dcPrev, dh, dc, gates, tc, cPrev)
	if n, m := len(dh), neonTail(len(dh)); m < n {
		gateBackwardBlocks(dz[m:n], dz[n+m:2*n], dz[2*n+m:3*n], dz[3*n+m:4*n], dcPrev[m:], dh[m:], dc[m:],
			gates[m:n], gates[n+m:2*n], gates[2*n+m:3*n], gates[3*n+m:4*n], tc[m:], cPrev[m:])
	}
}

func lrpCell(rcPrev, qg, rc, gates, zg, c, cPrev []float64, eps float64) {
	if impl != implNEON {
		lrpCellGeneric(rcPrev, qg, rc, gates, zg, c, cPrev, eps)
		return
	}
	lrpCellNEON(rcPrev, qg, rc, gates, zg, c, cPrev, eps)
	if n, m := len(rc), neonTail(len(rc)); m < n {
		lrpCellBlocks(rcPrev[m:], qg[m:], rc[m:], gates[m:n], gates[n+m:2*n], gates[2*n+m:3*n],
			zg[m:], c[m:], cPrev[m:], eps)
	}
}

func lrpLinear(dst, acc, a []float64) {
	if impl != implNEON {
		lrpLinearGeneric(dst, acc, a)
		return
	}
	lrpLinearNEON(dst, acc, a)
	if m := neonTail(len(dst)); m < len(dst) {
		lrpLinearGeneric(dst[m:], acc[m:], a[m:])
	}
}

// gruStepNEON is gruStepGeneric on 2-lane NEON vectors, for n rounded down to an even number.
//
//go:noescape
func gruStepNEON(gates []float64, stride int, hPrev, c, tc, h []float64)

// gruBackwardNEON is gruBackwardGeneric on 2-lane NEON vectors, for n rounded down to an even number.
//
//go:noescape
func gruBackwardNEON(dz []float64, stride int, dcPrev, dh, dc, gates, hPrev []float64)

func gruStep(gates []float64, stride int, hPrev, c, tc, h []float64) {
	if impl != implNEON {
		gruStepGeneric(gates, stride, hPrev, c, tc, h)
		return
	}
	gruStepNEON(gates, stride, hPrev, c, tc, h)
	if n, m := len(c), neonTail(len(c)); m < n {
		gruStepBlocks(gates[m:n], gates[stride+m:stride+n], gates[2*stride+m:2*stride+n], gates[3*stride+m:3*stride+n],
			hPrev[m:], c[m:], tc[m:], h[m:])
	}
}

func gruBackward(dz []float64, stride int, dcPrev, dh, dc, gates, hPrev []float64) {
	if impl != implNEON {
		gruBackwardGeneric(dz, stride, dcPrev, dh, dc, gates, hPrev)
		return
	}
	gruBackwardNEON(dz, stride, dcPrev, dh, dc, gates, hPrev)
	if n, m := len(dh), neonTail(len(dh)); m < n {
		gruBackwardBlocks(dz[m:n], dz[stride+m:stride+n], dz[2*stride+m:2*stride+n], dz[3*stride+m:3*stride+n],
			dcPrev[m:], dh[m:], dc[m:], gates[m:n], gates[stride+m:stride+n], gates[2*stride+m:2*stride+n], gates[3*stride+m:3*stride+n], hPrev[m:])
	}
}

func implNote() string { return "" }

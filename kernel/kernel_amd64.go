//go:build !purego

package kernel

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd _gen && go run . -out ../kernel_amd64.s -stubs ../kernel_stubs_amd64.go -pkg kernel"

// The assembly bodies are declared in kernel_stubs_amd64.go, generated with
// kernel_amd64.s by _gen. The AVX-512 bodies need AVX512F, and AVX512VL and
// FMA for MulAddRows' 256-bit last vectors (their "Requires" lines say so;
// TestAsmRequires checks it): every AVX-512 core but Xeon Phi's has them.
// The AVX2 bodies need AVX2 and FMA. x/sys/cpu reports a feature only
// when the OS saves its registers, and honours GODEBUG=cpu.avx512f=off and
// cpu.avx2=off.
func init() {
	supported[implAVX2] = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	supported[implAVX512] = cpu.X86.HasAVX && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasFMA
	switch {
	case supported[implAVX512]:
		impl = implAVX512
	case supported[implAVX2]:
		impl = implAVX2
	}
}

// avx2Tail is where the AVX2 bodies stop: they cover n rounded down to a
// multiple of 4 and the twin finishes the rest.
func avx2Tail(n int) int { return n &^ 3 }

func axpy(alpha float64, x, y []float64) {
	switch impl {
	case implAVX512:
		axpyAVX512(alpha, x, y)
	case implAVX2:
		axpyAVX2(alpha, x, y)
		if m := avx2Tail(len(y)); m < len(y) {
			axpyGeneric(alpha, x[m:], y[m:])
		}
	default:
		axpyGeneric(alpha, x, y)
	}
}

func axpyRows(dst, rows []float64, stride int, coef []float64) {
	switch impl {
	case implAVX512:
		axpyRowsAVX512(dst, rows, stride, coef)
	case implAVX2:
		axpyRowsAVX2(dst, rows, stride, coef)
		if m := avx2Tail(len(dst)); m < len(dst) {
			axpyRowsGeneric(dst[m:], rows[m:], stride, coef)
		}
	default:
		axpyRowsGeneric(dst, rows, stride, coef)
	}
}

// mulAddRows runs the assembly on whole groups of output rows (6 with
// AVX-512, 4 with AVX2) and axpyRows on the rows left over. Under AVX-512,
// products of at most narrowLanes lanes run on whichever body this core
// runs faster (narrow_amd64.go): the bits are the same.
// With nonzero (no coefficient is ±0) the bodies skip their scan of each
// tile's coefficients for ±0.
func mulAddRows(dst []float64, n int, rows []float64, stride int, coef []float64, coefStride, k int, nonzero bool) {
	im := impl
	if im == implAVX512 && n <= narrowLanes && narrowOnAVX2() {
		im = implAVX2
	}
	mulAddRowsOn(im, dst, n, rows, stride, coef, coefStride, k, nonzero)
}

// mulAddRowsOn is mulAddRows on implementation im's bodies.
func mulAddRowsOn(im int, dst []float64, n int, rows []float64, stride int, coef []float64, coefStride, k int, nonzero bool) {
	m := len(dst) / n
	r := 0
	switch im {
	case implAVX512:
		const g = 6
		for ; r+g <= m; r += g {
			mulAddRowsAVX512(dst[r*n:(r+g)*n], n, rows, stride, coef[r*coefStride:(r+g-1)*coefStride+k], coefStride, k, nonzero)
		}
		if r+4 <= m {
			mulAddRows4AVX512(dst[r*n:(r+4)*n], n, rows, stride, coef[r*coefStride:(r+3)*coefStride+k], coefStride, k, nonzero)
			r += 4
		}
		if r+2 <= m {
			mulAddRows2AVX512(dst[r*n:(r+2)*n], n, rows, stride, coef[r*coefStride:(r+1)*coefStride+k], coefStride, k, nonzero)
			r += 2
		}
	case implAVX2:
		const g = 4
		for ; r+g <= m; r += g {
			mulAddRowsAVX2(dst[r*n:(r+g)*n], n, rows, stride, coef[r*coefStride:(r+g-1)*coefStride+k], coefStride, k, nonzero)
		}
	default:
		mulAddRowsGeneric(dst, n, rows, stride, coef, coefStride, k)
		return
	}
	for ; r < m; r++ {
		axpyRows(dst[r*n:(r+1)*n], rows, stride, coef[r*coefStride:r*coefStride+k])
	}
}

func gateStep(gates, zg, cPrev, c, tc, h []float64) {
	switch impl {
	case implAVX512:
		gateStepAVX512(gates, zg, cPrev, c, tc, h)
	case implAVX2:
		gateStepAVX2(gates, zg, cPrev, c, tc, h)
		if n, m := len(c), avx2Tail(len(c)); m < n {
			gateStepBlocks(gates[m:n], gates[n+m:2*n], gates[2*n+m:3*n], gates[3*n+m:4*n],
				zg[m:], cPrev[m:], c[m:], tc[m:], h[m:])
		}
	default:
		gateStepGeneric(gates, zg, cPrev, c, tc, h)
	}
}

func gateStepTable(gates []float64, stride int, act []float64, table int, cPrev, c, tc, h []float64) {
	switch impl {
	case implAVX512:
		gateStepTableAVX512(gates, stride, act, table, cPrev, c, tc, h)
	case implAVX2:
		gateStepTableAVX2(gates, stride, act, table, cPrev, c, tc, h)
		if n, m := len(c), avx2Tail(len(c)); m < n {
			var ai, af, ag, ao []float64
			if table != 0 {
				ai, af, ag, ao = act[m:n], act[stride+m:stride+n], act[2*stride+m:2*stride+n], act[3*stride+m:3*stride+n]
			}
			gateStepTableBlocks(gates[m:n], gates[stride+m:stride+n], gates[2*stride+m:2*stride+n], gates[3*stride+m:3*stride+n],
				ai, af, ag, ao, table, cPrev[m:], c[m:], tc[m:], h[m:])
		}
	default:
		gateStepTableGeneric(gates, stride, act, table, cPrev, c, tc, h)
	}
}

func gateBackwardTable(dz []float64, stride int, dcPrev, dh, dc, gates, act []float64, table, need int, tc, cPrev []float64) {
	switch impl {
	case implAVX512:
		gateBackwardTableAVX512(dz, stride, dcPrev, dh, dc, gates, act, table, need, tc, cPrev)
	case implAVX2:
		gateBackwardTableAVX2(dz, stride, dcPrev, dh, dc, gates, act, table, need, tc, cPrev)
		if n, m := len(dh), avx2Tail(len(dh)); m < n {
			var a []float64
			if table != 0 {
				a = act[m:]
			}
			gateBackwardTableGeneric(dz[m:], stride, dcPrev[m:n], dh[m:n], dc[m:], gates[m:], a, table, need, tc[m:], cPrev[m:])
		}
	default:
		gateBackwardTableGeneric(dz, stride, dcPrev, dh, dc, gates, act, table, need, tc, cPrev)
	}
}

func gateBackward(dz, dcPrev, dh, dc, gates, tc, cPrev []float64) {
	switch impl {
	case implAVX512:
		gateBackwardAVX512(dz, dcPrev, dh, dc, gates, tc, cPrev)
	case implAVX2:
		gateBackwardAVX2(dz, dcPrev, dh, dc, gates, tc, cPrev)
		if n, m := len(dh), avx2Tail(len(dh)); m < n {
			gateBackwardBlocks(dz[m:n], dz[n+m:2*n], dz[2*n+m:3*n], dz[3*n+m:4*n], dcPrev[m:], dh[m:], dc[m:],
				gates[m:n], gates[n+m:2*n], gates[2*n+m:3*n], gates[3*n+m:4*n], tc[m:], cPrev[m:])
		}
	default:
		gateBackwardGeneric(dz, dcPrev, dh, dc, gates, tc, cPrev)
	}
}

func lrpCell(rcPrev, qg, rc, gates, zg, c, cPrev []float64, eps float64) {
	switch impl {
	case implAVX512:
		lrpCellAVX512(rcPrev, qg, rc, gates, zg, c, cPrev, eps)
	case implAVX2:
		lrpCellAVX2(rcPrev, qg, rc, gates, zg, c, cPrev, eps)
		if n, m := len(rc), avx2Tail(len(rc)); m < n {
			lrpCellBlocks(rcPrev[m:], qg[m:], rc[m:], gates[m:n], gates[n+m:2*n], gates[2*n+m:3*n],
				zg[m:], c[m:], cPrev[m:], eps)
		}
	default:
		lrpCellGeneric(rcPrev, qg, rc, gates, zg, c, cPrev, eps)
	}
}

func lrpLinear(dst, acc, a []float64) {
	switch impl {
	case implAVX512:
		lrpLinearAVX512(dst, acc, a)
	case implAVX2:
		lrpLinearAVX2(dst, acc, a)
		if m := avx2Tail(len(dst)); m < len(dst) {
			lrpLinearGeneric(dst[m:], acc[m:], a[m:])
		}
	default:
		lrpLinearGeneric(dst, acc, a)
	}
}

func gruStep(gates []float64, stride int, hPrev, c, tc, h []float64) {
	switch impl {
	case implAVX512:
		gruStepAVX512(gates, stride, hPrev, c, tc, h)
	case implAVX2:
		gruStepAVX2(gates, stride, hPrev, c, tc, h)
		if n, m := len(c), avx2Tail(len(c)); m < n {
			gruStepBlocks(gates[m:n], gates[stride+m:stride+n], gates[2*stride+m:2*stride+n], gates[3*stride+m:3*stride+n],
				hPrev[m:], c[m:], tc[m:], h[m:])
		}
	default:
		gruStepGeneric(gates, stride, hPrev, c, tc, h)
	}
}

func gruBackward(dz []float64, stride int, dcPrev, dh, dc, gates, hPrev []float64) {
	switch impl {
	case implAVX512:
		gruBackwardAVX512(dz, stride, dcPrev, dh, dc, gates, hPrev)
	case implAVX2:
		gruBackwardAVX2(dz, stride, dcPrev, dh, dc, gates, hPrev)
		if n, m := len(dh), avx2Tail(len(dh)); m < n {
			gruBackwardBlocks(dz[m:n], dz[stride+m:stride+n], dz[2*stride+m:2*stride+n], dz[3*stride+m:3*stride+n],
				dcPrev[m:], dh[m:], dc[m:], gates[m:n], gates[stride+m:stride+n], gates[2*stride+m:2*stride+n], gates[3*stride+m:3*stride+n], hPrev[m:])
		}
	default:
		gruBackwardGeneric(dz, stride, dcPrev, dh, dc, gates, hPrev)
	}
}

//go:build purego || !(amd64 || arm64)

package kernel

// Without assembly (-tags purego, or an architecture other than amd64 and
// arm64) the entry points call the generic twins.

func axpy(alpha float64, x, y []float64) { axpyGeneric(alpha, x, y) }

func axpyRows(dst, rows []float64, stride int, coef []float64) {
	axpyRowsGeneric(dst, rows, stride, coef)
}

func mulAddRows(dst []float64, n int, rows []float64, stride int, coef []float64, coefStride, k int, _ bool) {
	mulAddRowsGeneric(dst, n, rows, stride, coef, coefStride, k)
}

func gateStep(gates, zg, cPrev, c, tc, h []float64) {
	gateStepGeneric(gates, zg, cPrev, c, tc, h)
}

func gateStepTable(gates []float64, stride int, act []float64, table int, cPrev, c, tc, h []float64) {
	gateStepTableGeneric(gates, stride, act, table, cPrev, c, tc, h)
}

func gateBackwardTable(dz []float64, stride int, dcPrev, dh, dc, gates, act []float64, table, need int, tc, cPrev []float64) {
	gateBackwardTableGeneric(dz, stride, dcPrev, dh, dc, gates, act, table, need, tc, cPrev)
}

func gateBackward(dz, dcPrev, dh, dc, gates, tc, cPrev []float64) {
	gateBackwardGeneric(dz, dcPrev, dh, dc, gates, tc, cPrev)
}

func lrpCell(rcPrev, qg, rc, gates, zg, c, cPrev []float64, eps float64) {
	lrpCellGeneric(rcPrev, qg, rc, gates, zg, c, cPrev, eps)
}

func lrpLinear(dst, acc, a []float64) { lrpLinearGeneric(dst, acc, a) }

func gruStep(gates []float64, stride int, hPrev, c, tc, h []float64) {
	gruStepGeneric(gates, stride, hPrev, c, tc, h)
}

func gruBackward(dz []float64, stride int, dcPrev, dh, dc, gates, hPrev []float64) {
	gruBackwardGeneric(dz, stride, dcPrev, dh, dc, gates, hPrev)
}

func implNote() string { return "" }

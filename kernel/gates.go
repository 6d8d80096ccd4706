package kernel

// Axpy sets y[i] = fma(alpha, x[i], y[i]) for i < len(y). x must be at least
// as long as y.
func Axpy(alpha float64, x, y []float64) {
	x = x[:len(y)]
	if raceEnabled {
		raceRead(x)
		raceWrite(y)
	}
	axpy(alpha, x, y)
}

// AxpyRows adds Σ_j coef[j]·row_j to dst, where row_j is
// rows[j*stride : j*stride+len(dst)], one row after the other in order of j
// and with one fused multiply-add per element; rows with coef[j] == 0 are
// skipped. As a loop:
//
//	for j, a := range coef {
//		if a != 0 {
//			for i := range dst {
//				dst[i] = math.FMA(a, rows[j*stride+i], dst[i])
//			}
//		}
//	}
//
// It is both the matrix–vector product of the forward pass (over a
// transposed, packed weight copy) and that of backprop and LRP (over the
// weights' rows).
func AxpyRows(dst, rows []float64, stride int, coef []float64) {
	if len(coef) == 0 || len(dst) == 0 {
		return
	}
	rows = rows[:(len(coef)-1)*stride+len(dst)]
	if raceEnabled {
		raceRead(rows)
		raceRead(coef)
		raceWrite(dst)
	}
	axpyRows(dst, rows, stride, coef)
}

// MulAddRows is AxpyRows for the m = len(dst)/n output rows
// dst[r*n : (r+1)*n], r < m, which share the k rows row_j =
// rows[j*stride : j*stride+n] and take their coefficients from
// coef[r*coefStride : r*coefStride+k]. As a loop:
//
//	for r := range len(dst) / n {
//		AxpyRows(dst[r*n:(r+1)*n], rows, stride, coef[r*coefStride:r*coefStride+k])
//	}
//
// Every element gets exactly AxpyRows' operations in AxpyRows' order (terms
// in order of j, one fused multiply-add each, a term skipped where its
// coefficient is ±0), so the results are the same bits; the optimized bodies
// keep a tile of several output rows in registers while the shared rows go
// by once, instead of loading and storing dst for every output row. It is
// the batched engine's matrix product (package cell), with lanes along n.
// n must be positive; elements of dst past m·n are not touched.
func MulAddRows(dst []float64, n int, rows []float64, stride int, coef []float64, coefStride, k int) {
	mulAddRowsChecked(dst, n, rows, stride, coef, coefStride, k, false)
}

// MulAddRowsNonzero is MulAddRows for coefficients none of which is ±0
// (Nonzero): its bodies skip their scan of each tile's coefficients for
// ±0, which every MulAddRows call makes (on an AMD Zen 4 core, h = 128, a
// ninth of a 16-lane product's time and a quarter of an 8-lane one's). A
// caller whose coefficients are weights fixed once checks them once. Given a ±0 coefficient anyway, a
// body may take its term (0·x: NaN where x is ±Inf or NaN, +0 on a −0
// sum) where MulAddRows skips it.
func MulAddRowsNonzero(dst []float64, n int, rows []float64, stride int, coef []float64, coefStride, k int) {
	mulAddRowsChecked(dst, n, rows, stride, coef, coefStride, k, true)
}

// Nonzero reports whether no element of v is ±0: whether v may be the
// coefficients of MulAddRowsNonzero.
func Nonzero(v []float64) bool {
	for _, x := range v {
		if x == 0 {
			return false
		}
	}
	return true
}

func mulAddRowsChecked(dst []float64, n int, rows []float64, stride int, coef []float64, coefStride, k int, nonzero bool) {
	m := len(dst) / n
	if m == 0 || k == 0 {
		return
	}
	dst = dst[:m*n]
	rows = rows[:(k-1)*stride+n]
	coef = coef[:(m-1)*coefStride+k]
	if raceEnabled {
		raceRead(rows)
		raceRead(coef)
		raceWrite(dst)
	}
	mulAddRows(dst, n, rows, stride, coef, coefStride, k, nonzero)
}

// GateStep is one fused LSTM time step for H = len(c) units. On entry gates
// holds the 4H pre-activations z in the blocks i, f, g, o; on return it holds
// the activations σ(z_i), σ(z_f), tanh(z_g), σ(z_o). It also writes
// zg = z_g (LRP needs it), c = f⊙cPrev + i⊙g (each product rounded, then
// added), tc = tanh(c) and h = o⊙tc.
func GateStep(gates, zg, cPrev, c, tc, h []float64) {
	n := len(c)
	gates, zg, cPrev, tc, h = gates[:4*n], zg[:n], cPrev[:n], tc[:n], h[:n]
	if raceEnabled {
		raceRead(cPrev)
		raceWrite(gates)
		raceWrite(zg)
		raceWrite(c)
		raceWrite(tc)
		raceWrite(h)
	}
	gateStep(gates, zg, cPrev, c, tc, h)
}

// The gates whose activations GateStepTable and GateBackwardTable take from
// a table instead of computing them (bit q names gate q: i, f, g, o).
const (
	TableI = 1 << iota // input gate
	TableF             // forget gate
	TableG             // cell candidate
	TableO             // output gate
)

// GateStepTable is GateStep for H = len(c) units whose gate blocks lie
// stride elements apart (gate q of unit j is gates[q*stride+j], q = 0 … 3
// for i, f, g, o) and whose gates named in table are not computed: their
// activations are read from act, which has gates' layout. As a loop, per
// unit j: i = act[j] if table&TableI != 0, else i = σ(gates[j]) stored to
// gates[j]; f, g (tanh) and o likewise; then c = f⊙cPrev + i⊙g (each product
// rounded, then added), tc = tanh(c), h = o⊙tc, as GateStep. The rows of
// gates of the table gates are neither read nor written, and z_g is not
// kept (GateStep's zg is for LRP, which this path does not serve). With
// stride = len(c) and table = 0 the values are GateStep's, bit for bit.
//
// It serves gates whose pre-activation takes few values: a gate with no
// recurrent weights, on one-hot inputs, has one pre-activation per symbol
// (and per input scale), so package cell computes its activations once per
// symbol instead of once per time step, with the operations GateStep would
// perform on that z.
func GateStepTable(gates []float64, stride int, act []float64, table int, cPrev, c, tc, h []float64) {
	n := len(c)
	table &= TableI | TableF | TableG | TableO
	if n == 0 {
		return
	}
	gates = gates[:3*stride+n]
	if table != 0 {
		act = act[:3*stride+n]
	}
	cPrev, tc, h = cPrev[:n], tc[:n], h[:n]
	if raceEnabled {
		raceRead(cPrev)
		for q := range 4 {
			if table&(1<<q) != 0 {
				raceRead(act[q*stride : q*stride+n])
			} else {
				raceWrite(gates[q*stride : q*stride+n])
			}
		}
		raceWrite(c)
		raceWrite(tc)
		raceWrite(h)
	}
	gateStepTable(gates, stride, act, table, cPrev, c, tc, h)
}

// GateBackwardTable is GateBackward for gate blocks stride elements apart
// in dz, gates and act, where the activations of the gates named in table
// are read from act instead of gates (GateStepTable's trace), and where dz
// is written only for the gates named in need (the same bit values; the
// other blocks of dz are left alone: package cell skips the gradients of
// gates without weights, which nothing reads). With stride = len(dh),
// table = 0 and need = 15 it is GateBackward, bit for bit.
func GateBackwardTable(dz []float64, stride int, dcPrev, dh, dc, gates, act []float64, table, need int, tc, cPrev []float64) {
	n := len(dh)
	table &= TableI | TableF | TableG | TableO
	need &= TableI | TableF | TableG | TableO
	if n == 0 {
		return
	}
	dz, gates = dz[:3*stride+n], gates[:3*stride+n]
	if table != 0 {
		act = act[:3*stride+n]
	}
	dcPrev, dc, tc, cPrev = dcPrev[:n], dc[:n], tc[:n], cPrev[:n]
	if raceEnabled {
		raceRead(dh)
		raceRead(dc)
		raceRead(tc)
		raceRead(cPrev)
		for q := range 4 {
			if table&(1<<q) != 0 {
				raceRead(act[q*stride : q*stride+n])
			} else {
				raceRead(gates[q*stride : q*stride+n])
			}
			if need&(1<<q) != 0 {
				raceWrite(dz[q*stride : q*stride+n])
			}
		}
		raceWrite(dcPrev)
	}
	gateBackwardTable(dz, stride, dcPrev, dh, dc, gates, act, table, need, tc, cPrev)
}

// GateBackward is the backward step of GateStep for H = len(dh) units. Given
// the activations (gates, as GateStep left them), tc = tanh(c_t), c_{t−1}
// (cPrev), the gradient dh of h_t and the gradient dc that c_{t+1} sends to
// c_t, it writes the gradient of the 4H pre-activations to dz and that of
// c_{t−1} to dcPrev.
func GateBackward(dz, dcPrev, dh, dc, gates, tc, cPrev []float64) {
	n := len(dh)
	dz, dcPrev, dc, gates, tc, cPrev = dz[:4*n], dcPrev[:n], dc[:n], gates[:4*n], tc[:n], cPrev[:n]
	if raceEnabled {
		raceRead(dh)
		raceRead(dc)
		raceRead(gates)
		raceRead(tc)
		raceRead(cPrev)
		raceWrite(dz)
		raceWrite(dcPrev)
	}
	gateBackward(dz, dcPrev, dh, dc, gates, tc, cPrev)
}

// LRPCell redistributes the relevance rc of c_t (H = len(rc) units) by the
// ε-rule through c_t = f⊙c_{t−1} + i⊙g: with s = rc/(c_t + ε·sign(c_t)) and
// sign(0) = +1, rcPrev = (f⊙c_{t−1})·s goes to c_{t−1} and (i⊙g)·s to g. The
// gates receive nothing. It then divides g's relevance by the stabilized
// pre-activation, qg = (i⊙g)·s / (z_g + ε·sign(z_g)), so that the relevance of
// an input a_k of z_g through weight w_jk is a_k·Σ_j w_jk·qg_j.
func LRPCell(rcPrev, qg, rc, gates, zg, c, cPrev []float64, eps float64) {
	n := len(rc)
	rcPrev, qg, gates, zg, c, cPrev = rcPrev[:n], qg[:n], gates[:4*n], zg[:n], c[:n], cPrev[:n]
	if raceEnabled {
		raceRead(rc)
		raceRead(gates)
		raceRead(zg)
		raceRead(c)
		raceRead(cPrev)
		raceWrite(rcPrev)
		raceWrite(qg)
	}
	lrpCell(rcPrev, qg, rc, gates, zg, c, cPrev, eps)
}

// LRPLinear redistributes relevance through a linear map z_j = Σ_i w_ji·a_i
// (+ b_j) by the ε-rule, given q_j = r_j/(z_j ± ε) (LRPCell makes q for the
// LSTM's g): it adds a_i·Σ_j w_ji·q_j to dst[i] for i < len(dst), where row j
// of W is rows[j*stride : j*stride+len(dst)]. acc (len(dst) values) is
// scratch space; it is left holding Σ_j w_ji·q_j. As a loop:
//
//	clear(acc)
//	AxpyRows(acc, rows, stride, q)
//	for i := range dst {
//		dst[i] += float64(a[i] * acc[i])
//	}
func LRPLinear(dst, acc, a, rows []float64, stride int, q []float64) {
	n := len(dst)
	acc, a = acc[:n], a[:n]
	clear(acc)
	AxpyRows(acc, rows, stride, q)
	if raceEnabled {
		raceRead(acc)
		raceRead(a)
		raceWrite(dst)
	}
	lrpLinear(dst, acc, a)
}

// Stabilize returns z + ε·sign(z) with sign(0) = +1: the denominator of the
// ε-rule of LRP (LRPCell and package cell use this one definition).
func Stabilize(z, eps float64) float64 {
	if z >= 0 {
		return z + eps
	}
	return z - eps
}

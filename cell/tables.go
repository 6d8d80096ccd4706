package cell

import (
	"errors"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// One-hot input is a fast path of the first layer. A gate row of layer 0
// without recurrent weights has, on one-hot input, one pre-activation per
// symbol and lane (z = b + s_j·W_ih[r, k] for symbol k read at lane scale
// s_j; z = b for no symbol or an occluded row), whatever the step: a batch
// computes the activations of those gates once per symbol (tables), from
// the very z its step would compute, and its steps read them (tableSet,
// below). The white-box networks are made of
// such gates. The same bits as the step without tables.

// maxTableValues bounds a batch's tables, (E+1)·4H·l values: one-hot
// models have few symbols.
const maxTableValues = 1 << 20

// oneHotTables returns the tables of layer 0 for one-hot input, or nil
// where none applies: two directions (their cells differ), no gate
// without recurrent weights. With a dense product (no sparse terms), which
// multiplies zero weights instead of skipping them, backprop computes
// every gate's gradient.
func oneHotTables(c *packedCell, h int) *tableSet {
	tiled := c.terms.whhT == nil || c.terms.wihT == nil
	ts := tablesOf(c.whh, c.wih, h, c.in, true, tiled)
	if ts.runs == nil {
		return nil
	}
	return &ts
}

// laneTables are a batch's tables: the one-hot input's symbols (nil for
// dense input: no tables), and for the l lanes of the last full forward
// pass, block k < E holding the activations of the tabled gates when
// symbol k is read, block E when none is; patch is tableAt's scratch.
type laneTables struct {
	syms       []int
	tab, patch []float64
	// The steps [occLo, occHi] hold every row the lanes of the pass
	// occlude (r.occluded); occluded: there is one.
	occluded     bool
	occLo, occHi int
}

// occludes reports whether some lane may occlude row t.
func (tb *laneTables) occludes(t int) bool {
	return tb.occluded && t >= tb.occLo && t <= tb.occHi
}

// tablesOn reports whether step computations of cell ci over l lanes use
// the tables: layer 0 of a model that has them, on one-hot input, more
// than one lane, and lanes that keep no z_g for LRP (GateStepTable does not
// write it).
func (r *lanes) tablesOn(ci, l int) bool {
	s := r.s
	return ci == 0 && s.tabs != nil && r.tb.syms != nil && l > 1 && !r.keepZg &&
		(s.in+1)*4*s.h*l <= maxTableValues
}

// fillTables computes the tables for the scales and the lanes of the pass
// about to run (forward and forwardCk call it; the recomputed segments of
// checkpointed backprop read them).
func (r *lanes) fillTables(l int) {
	if !r.tablesOn(0, l) {
		return
	}
	s := r.s
	h, e, g := s.h, s.in, 4*s.h
	if n := (e + 1) * g * l; len(r.tb.tab) < n {
		r.tb.tab = make([]float64, (e+1)*g*r.l)
		r.tb.patch = make([]float64, g*r.l)
	}
	r.tb.occluded = false
	for _, o := range r.occluded[:l] {
		if o < 0 {
			continue
		}
		if !r.tb.occluded {
			r.tb.occLo, r.tb.occHi = o, o
		}
		r.tb.occluded = true
		r.tb.occLo, r.tb.occHi = min(r.tb.occLo, o), max(r.tb.occHi, o)
	}
	// The gate step's c, tc and h go to backprop's scratch, unused during
	// a forward pass.
	for k := range e + 1 {
		s.tabs.fillBlock(r.tb.tab[k*g*l:(k+1)*g*l], r.planes[0], s.cells[0].wih, h, e, k, r.scale[:l], r.zero[:h*l], r.dc, r.dcPrev, r.dh)
	}
}

// tableAt returns the table block of step t: that of its symbol, or where
// a lane's row t is occluded, that block with the lane's values replaced
// by those of no symbol.
func (r *lanes) tableAt(t, l int) []float64 {
	s := r.s
	e, g := s.in, 4*s.h
	sym := r.tb.syms[t]
	if sym < 0 {
		sym = e
	}
	tab := r.tb.tab[sym*g*l : (sym+1)*g*l]
	if sym == e || !r.tb.occludes(t) {
		return tab
	}
	p := r.tb.patch[:g*l]
	patched := false
	for j, o := range r.occluded[:l] {
		if o != t {
			continue
		}
		if !patched {
			copy(p, tab)
			patched = true
		}
		none := r.tb.tab[e*g*l : (e+1)*g*l]
		for _, run := range s.tabs.runs {
			for q := range 4 {
				if run.mask&(1<<q) == 0 {
					continue
				}
				for row := q*s.h + run.j0; row < q*s.h+run.j1; row++ {
					p[row*l+j] = none[row*l+j]
				}
			}
		}
	}
	if patched {
		return p
	}
	return tab
}

// stepForwardTable is stepForward of layer 0 with tables: the
// pre-activations of the other rows (b + s_j·u_t + W_hh·hPrev, b alone
// for an occluded row), then each run's gate step, the tabled gates'
// activations read from the tables.
func (r *lanes) stepForwardTable(t int, z, ut, hPrev, cPrev, c, tc, h []float64, l int) {
	s := r.s
	cl := &s.cells[0]
	g, hd := 4*s.h, s.h
	hl := hd * l
	ts := s.tabs
	plane := r.planes[0]
	scale := r.scale[:l]
	// Row range by row range: each range's z is
	// still in the L1 cache when the recurrent terms add to it.
	sparse := cl.terms.whh != nil && l >= sparseMinLanes
	for _, rr := range ts.rows {
		r0, r1 := rr[0], rr[1]
		copy(z[r0*l:r1*l], plane[r0*l:r1*l])
		for q := r0; q < r1; q++ {
			if uq := ut[q]; uq != 0 {
				kernel.Axpy(uq, scale, z[q*l:(q+1)*l])
			}
		}
		if r.tb.occludes(t) { // occlusion's lanes: b alone where a lane's row t is occluded
			for j, o := range r.occluded[:l] {
				if o == t {
					for q := r0; q < r1; q++ {
						z[q*l+j] = cl.b[q]
					}
				}
			}
		}
		if hPrev != nil && sparse {
			mulAddSparse(z, cl.terms.whh, r0, r1, hd, 0, hPrev, l)
		}
	}
	if hPrev != nil && !sparse {
		r.mulAdd(z, cl.whh, cl.whhT, cl.terms.whh, g, hd, hd, 0, hPrev, l)
	}
	act := r.tableAt(t, l)
	for _, run := range ts.runs {
		o, e := run.j0*l, run.j1*l
		kernel.GateStepTable(z[o:], hl, act[o:], run.mask, cPrev[o:e], c[o:e], tc[o:e], h[o:e])
	}
}

// gateBackwardTable is GateBackward of layer 0 with tables, dz computed for
// the gates that have weights only.
func (r *lanes) gateBackwardTable(t int, dz, dcPrev, dh, dc, gates, tc, cPrev []float64, l int) {
	hl := r.s.h * l
	act := r.tableAt(t, l)
	for _, run := range r.s.tabs.runs {
		o, e := run.j0*l, run.j1*l
		kernel.GateBackwardTable(dz[o:], hl, dcPrev[o:e], dh[o:e], dc[o:e], gates[o:], act[o:], run.mask, run.need, tc[o:e], cPrev[o:e])
	}
}

// setSymbols hands the symbols of a one-hot input (nil for dense input,
// and after the call, so that the lanes keep no caller's slice) to the
// lanes of pool, for their tables.
func setSymbols(pool []*worker, syms []int) {
	for _, wk := range pool {
		wk.r.tb.syms = syms
		for _, b := range wk.sib {
			b.tb.syms = syms
		}
	}
}

// rowsBytes is the memory of a one-hot input's dense rows (input), which
// a batched method counts in its budget (0 for dense input).
func (st *runnerState) rowsBytes() int64 {
	if !st.perLane {
		return 0
	}
	return 8 * int64(len(st.oh))
}

// withRows names the whole budget in a BudgetError of a batched method
// whose lanes had what the dense rows left (rowsBytes).
func (st *runnerState) withRows(err error) error {
	var be *BudgetError
	if rows := st.rowsBytes(); rows > 0 && errors.As(err, &be) {
		return &BudgetError{Budget: be.Budget + rows, Need: be.Need + rows, What: be.What + " and its dense one-hot rows"}
	}
	return err
}

// A tableSet lists the gates whose activations a batch takes from tables
// instead of computing them at every step. A gate row without recurrent
// weights has, on a one-hot input, the pre-activation z = b + s·W_x[r, k]
// when symbol k is read with scale s (z = b for no symbol); with the scale
// fixed per lane, that is one value per symbol and lane, whatever the time
// step. Its activation is computed once per symbol, from the very z the step
// would compute (the same fused multiply-add; the recurrent product skips
// the zero terms), so the bits do not change. On dense inputs only rows
// without any weight qualify (z = b). The white-box networks are made of
// such gates: in sp-counter 25 of the 28 rows (all but the input gates of
// the units that read other units), in the counting network all four.
//
// Measured, 1 thread, AVX-512 (this replaced a shortcut for rows without
// any weight): IG sp-counter T = 256, 1000 steps 15.1 → 10.3 ms; occlusion
// sp-counter T = 4096 286 → 160 ms. Backprop then skips the gradients of the
// gates without weights (tableRun.need): IG 7.9 → 6.6 ms.
type tableSet struct {
	runs  []tableRun // runs of units with the same table gates, covering every unit; nil: no table
	rows  [][2]int   // runs [r0, r1) of the rows (gate-major, 4H) still computed
	needF bool       // some run needs the forget gates' gradients
}

// tableRun is a run of units [j0, j1) whose gates in mask (kernel.TableI,
// TableF, TableG, TableO) come from the tables and whose pre-activation
// gradients backprop computes for the gates in need only: the others have
// no weights at all, so nothing reads their gradients.
type tableRun struct{ j0, j1, mask, need int }

// tablesOf finds the tabled gates of a cell with weights wh (4H×H) and wx
// (4H×D) for one-hot (oneHot) or dense inputs, and the gates without
// weights. With the register-blocked product (tiled), which multiplies zero
// weights instead of skipping them, every gradient is computed.
func tablesOf(wh, wx []float64, h, d int, oneHot, tiled bool) tableSet {
	zero := func(v []float64) bool {
		for _, x := range v {
			if x != 0 {
				return false
			}
		}
		return true
	}
	tabled := func(r int) bool {
		return zero(wh[r*h:(r+1)*h]) && (oneHot || zero(wx[r*d:(r+1)*d]))
	}
	var ts tableSet
	some := false
	for j := range h {
		m, need := 0, 15
		for q := range 4 {
			r := q*h + j
			if tabled(r) {
				m |= 1 << q
			}
			if !tiled && zero(wh[r*h:(r+1)*h]) && zero(wx[r*d:(r+1)*d]) {
				need &^= 1 << q
			}
		}
		some = some || m != 0
		if k := len(ts.runs); k > 0 && ts.runs[k-1].mask == m && ts.runs[k-1].need == need {
			ts.runs[k-1].j1 = j + 1
		} else {
			ts.runs = append(ts.runs, tableRun{j, j + 1, m, need})
		}
	}
	if !some {
		return tableSet{}
	}
	for _, run := range ts.runs {
		ts.needF = ts.needF || run.need&kernel.TableF != 0
	}
	for r := range 4 * h {
		if tabled(r) {
			continue
		}
		if k := len(ts.rows); k > 0 && ts.rows[k-1][1] == r {
			ts.rows[k-1][1] = r + 1
		} else {
			ts.rows = append(ts.rows, [2]int{r, r + 1})
		}
	}
	return ts
}

// fillBlock writes to tab (4H×l) the activations of the tabled gates
// when symbol sym is read at the lanes' scales (sym = d: none, z = b):
// z = b + scale·wx[r, sym] from the bias planes bias (4H×l) and wx (4H×d),
// then the activations in place, computing exactly the tabled gates (the
// others are read, unused, from tab itself). zero (H×l zeros) is the
// gate step's c_{t−1}; c, tc and h (H×l each) its scratch.
func (ts *tableSet) fillBlock(tab, bias, wx []float64, h, d, sym int, scale, zero, c, tc, hs []float64) {
	l := len(scale)
	hl := h * l
	for _, run := range ts.runs {
		if run.mask == 0 {
			continue
		}
		for q := range 4 {
			if run.mask&(1<<q) == 0 {
				continue
			}
			for r := q*h + run.j0; r < q*h+run.j1; r++ {
				row := tab[r*l : (r+1)*l]
				copy(row, bias[r*l:(r+1)*l])
				if sym < d {
					if v := wx[r*d+sym]; v != 0 {
						kernel.Axpy(v, scale, row)
					}
				}
			}
		}
		o, e := run.j0*l, run.j1*l
		kernel.GateStepTable(tab[o:], hl, tab[o:], ^run.mask&15, zero[o:e], c[o:e], tc[o:e], hs[o:e])
	}
}

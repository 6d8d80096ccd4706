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
// the very z its step would compute, and its steps read them (the
// Batcher's tables, batch_tables.go). The white-box networks are made of
// such gates. The same bits as the step without tables.

// maxTableValues bounds a batch's tables, (E+1)·4H·l values: one-hot
// models have few symbols.
const maxTableValues = 1 << 20

// oneHotTables returns the tables of layer 0 for one-hot input, or nil
// where none applies: two directions (their cells differ), no gate
// without recurrent weights. With a dense product (no sparse terms), which
// multiplies zero weights instead of skipping them, backprop computes
// every gate's gradient.
func oneHotTables(c *stackedCell, h int) *tableSet {
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
	// Row range by row range, as the Batcher does: each range's z is
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

package cell

import (
	"math"

	"github.com/whitebox-lstm/whitebox/kernel"
)

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

// tablesFor finds the tabled gates of n for one-hot (oneHot) or dense
// inputs, and the gates without weights. With the register-blocked product
// (tiled), which multiplies zero weights instead of skipping them, every
// gradient is computed.
func tablesFor(n *Network, oneHot, tiled bool) tableSet {
	return tablesOf(n.wh, n.wx, n.h, n.d, oneHot, tiled)
}

// tablesOf is tablesFor for a cell's weights wh (4H×H) and wx (4H×D).
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

// tabKey names the tables of a worker whose lanes all have one scale: the
// tableSet, the lanes and the scale's bits (zero: none, or per-lane scales).
type tabKey struct {
	set   *tableSet
	lanes int
	scale uint64
}

// fillTablesUniform sets the l lanes' scales to scale and fills the tables
// for them, unless w holds those already: occlusion's chunks and the single
// passes all read x at its own scale, so their tables are computed once per
// worker (measured: occlusion sp-fsa T = 16, whose eight chunks each
// computed them, 337 → 290 µs).
func (j *job) fillTablesUniform(w *laneWorker, l int, scale float64) {
	fill(w.scale[:l], scale)
	key := tabKey{j.tabs, l, math.Float64bits(scale)}
	if w.tabKey == key {
		return
	}
	j.fillTables(w, l)
	w.tabKey = key
}

// fillTables computes w's tables for the scales in w.scale[:l]: block k (k <
// D) holds the activations of every tabled gate when symbol k is read, block
// D those when no symbol is (one-hot inputs); dense inputs have the one
// block of z = b. The other rows of the blocks are not used.
func (j *job) fillTables(w *laneWorker, l int) {
	ts := j.tabs
	w.tabKey = tabKey{}
	if ts.runs == nil {
		return
	}
	n := j.net
	h, d, g := n.h, n.d, n.gates
	hl := h * l
	j.ensureBias(w, l)
	scale := w.scale[:l]
	blocks := 1
	if j.x.IsOneHot() {
		blocks = d + 1
	}
	zero := w.zero[:hl]
	clear(zero)
	for k := range blocks {
		sym := k
		if blocks == 1 {
			sym = d // dense input: z = b
		}
		ts.fillBlock(w.tab[k*g*l:(k+1)*g*l], w.bias, n.wx, h, d, sym, scale, zero, w.dc, w.dcPrev, w.dh)
	}
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

// tableAt returns the table block of step t: that of its symbol, or with
// w.occ ≥ 0 that block with lane w.occ's values replaced by those of no
// symbol (an occluded row).
func (j *job) tableAt(w *laneWorker, l, t int) []float64 {
	n := j.net
	g := n.gates
	x := j.x
	if x.dense != nil {
		return w.tab[:g*l]
	}
	s := x.symbols[t]
	if s < 0 {
		s = n.d
	}
	tab := w.tab[s*g*l : (s+1)*g*l]
	if w.occ < 0 || s == n.d {
		return tab
	}
	none := w.tab[n.d*g*l : (n.d+1)*g*l]
	p := w.patch[:g*l]
	copy(p, tab)
	for _, run := range j.tabs.runs {
		for q := range 4 {
			if run.mask&(1<<q) == 0 {
				continue
			}
			for r := q*n.h + run.j0; r < q*n.h+run.j1; r++ {
				p[r*l+w.occ] = none[r*l+w.occ]
			}
		}
	}
	return p
}

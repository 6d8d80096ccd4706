package cell

import "github.com/whitebox-lstm/whitebox/kernel"

// Team steps: a time step of a batch of lanes on a team (team.go)
// as one job, not only its products. Each part owns a run of the hidden
// units: their four gate rows in the products, their values in the gate
// step and in backprop's gate step. A forward step is one hand-over; a
// backward step is two, since the gradient of h_{t−1} reads every unit's
// dz. The gate steps and the sums, serial between a team's products, are
// a fifth of a step's time on one core (IG on the H = 256 model), and
// would hold two cores to 1.7×.
//
// Where the members write one array, each writes one contiguous run of it
// (team.chunk): two cores writing interleaved runs of one array ran slower
// than one core writing them all. So IG's sums of dz go in the second job
// (a job of their own on a cell's last step), each part on a run of the
// sums' rows, and a member's parts have side-by-side runs of units (and
// of a product's rows). Measured on the 2-core machine, IG 50 steps,
// T = 256, H = 256 (BENCHMARKS.md, "A team's members on contiguous
// runs"): with the sums in the gate step's job, four runs of 512 bytes a
// part, interleaved, that job took 31.2 ms a call on one core and 26.5 ms
// on two; after, 11.3 ms on two. The call 145.7 → 133.9 ms on two cores
// (benchstat, n = 10, p = 0.035), one core unchanged.
//
// A part's rows and units get the operations of a step on one goroutine,
// in the same order (GateStepTable and GateBackwardTable with no table
// are GateStep and GateBackward on blocks stride apart; a row's products
// are its terms in order, whatever rows run beside it): the same bits.

// teamStepParts is the parts per goroutine of a team step: a member slowed
// by another process leaves some of its parts to the others. Measured
// alike: IG 50 steps, 200 tokens, H = 256, 2 cores, 1, 2 and 4 parts a
// member 129.6, 131.2 and 130.7 ms; since side-by-side runs, T = 256
// (medians of six, alternating with 2 parts): 1 part 138.3 against
// 132.7 ms, 4 parts 134.0 against 134.5 ms.
const teamStepParts = 2

// teamStep is the job of one time step of cell ci on l lanes.
type teamStep struct {
	r        *lanes
	cl       *packedCell
	ci, t, l int
	phase    int // stepForward, stepGates or stepRecur

	z, ut, in0, in1, hPrev, cPrev, c, tc, h []float64 // forward
	dz, dcPrev, dh, dc, at, gates           []float64 // backprop
	sk                                      gradSink  // backprop of layer 0: takes dz's sums
	sums                                    bool      // sk is set
	recur                                   bool      // stepRecur computes dh (else only the sums)
	steps                                   int
}

// The phases of a teamStep.
const (
	stepForward = iota // z's rows of the units, then their gate step
	stepGates          // backprop's gate step of the units
	stepRecur          // the units' rows of dh = W_hhᵀ·dz, and a run of the sums' rows
)

// stepTeam returns the team that runs cell ci's steps on l lanes, or nil:
// none lent, one lane, a pass that keeps more than GateStepTable writes
// (z_g for LRP, the pre-activations for DeepLIFT), layer 0's tables
// (tables.go), sparse weights, or a step too small to share.
func (r *lanes) stepTeam(ci, l int) *team {
	t := r.team
	if t == nil || l < 2 || r.keepZg || r.cells[ci].pre != nil || r.tablesOn(ci, l) {
		return nil
	}
	cl := &r.s.cells[ci]
	if cl.terms.whh != nil || cl.terms.whhT != nil || (cl.layer > 0 && cl.terms.wih != nil) {
		return nil
	}
	if 4*r.s.h*r.s.h*l < teamMinWork {
		return nil
	}
	return t
}

// part runs the units [H·i/n, H·(i+1)/n) of the step (with IG's sums,
// the same run of their 4H rows).
func (ts *teamStep) part(i, n int) {
	h, l := ts.r.s.h, ts.l
	u0, u1 := h*i/n, h*(i+1)/n
	switch {
	case ts.phase == stepRecur:
		if ts.recur && u0 < u1 {
			clear(ts.dh[u0*l : u1*l])
			mulAddRowsOf(ts.dh, ts.cl.whhT, ts.cl.whh, ts.r.s.nonzero, h, 4*h, 4*h, 0, ts.dz, l, u0, u1)
		}
		if ts.sums {
			ts.r.sinkSums(&ts.sk, ts.cl.dir, ts.t, ts.steps, l, ts.dz, 4*h, 4*h*i/n, 4*h*(i+1)/n)
		}
	case u0 == u1: // no units: nothing to do in the other phases
	case ts.phase == stepForward:
		ts.forward(u0, u1)
	case ts.phase == stepGates:
		ts.gatesBack(u0, u1)
	}
}

// teamForward is stepForward's step on team tm.
func (r *lanes) teamForward(tm *team, ci, t int, z, ut, in0, in1, hPrev, cPrev, c, tc, h []float64, l int) {
	r.ts = teamStep{r: r, cl: &r.s.cells[ci], ci: ci, t: t, l: l, phase: stepForward,
		z: z, ut: ut, in0: in0, in1: in1, hPrev: hPrev, cPrev: cPrev, c: c, tc: tc, h: h}
	tm.run(&r.ts, tm.n*teamStepParts)
	r.ts = teamStep{}
}

// forward is stepForward for the rows of units [u0, u1).
func (ts *teamStep) forward(u0, u1 int) {
	r, cl, l := ts.r, ts.cl, ts.l
	h := r.s.h
	g := 4 * h
	z := ts.z
	for q := range 4 {
		r0, r1 := q*h+u0, q*h+u1
		if cl.layer == 0 {
			r.inputRows(ts.ci, ts.t, z, ts.ut, l, r0, r1)
		} else {
			copy(z[r0*l:r1*l], r.planes[ts.ci][r0*l:r1*l])
			mulAddRowsOf(z, cl.wih, cl.wihT, r.s.nonzero, g, h, cl.in, 0, ts.in0, l, r0, r1)
			if ts.in1 != nil {
				mulAddRowsOf(z, cl.wih, cl.wihT, r.s.nonzero, g, h, cl.in, h, ts.in1, l, r0, r1)
			}
		}
		if ts.hPrev != nil {
			mulAddRowsOf(z, cl.whh, cl.whhT, r.s.nonzero, g, h, h, 0, ts.hPrev, l, r0, r1)
		}
	}
	a, b := u0*l, u1*l
	if r.s.p.Kind == LayerGRU {
		gruStep(z[a:], h*l, nil, ts.cPrev[a:b], ts.c[a:b], ts.tc[a:b], ts.h[a:b])
		return
	}
	kernel.GateStepTable(z[a:], h*l, nil, 0, ts.cPrev[a:b], ts.c[a:b], ts.tc[a:b], ts.h[a:b])
}

// teamBackward is stepBackward's step on team tm. With sk, the sums of
// IG's dz take the step's dz in the same job; it reports whether they did
// (the sums of dz, not a gradient or one-hot input's W_ihᵀ·dz).
func (r *lanes) teamBackward(tm *team, ci, t int, dz, dcPrev, dh, dc, at, gates, tc, cPrev []float64, recur bool, l int, sk *gradSink, steps int) bool {
	sums := sk != nil && sk.grad == nil && !sk.perLane
	r.ts = teamStep{r: r, cl: &r.s.cells[ci], ci: ci, t: t, l: l, phase: stepGates,
		dz: dz, dcPrev: dcPrev, dh: dh, dc: dc, at: at, gates: gates, tc: tc, cPrev: cPrev, sums: sums, steps: steps}
	if sums {
		r.ts.sk = *sk // a copy: sk stays on its caller's stack
	}
	tm.run(&r.ts, tm.n*teamStepParts)
	if recur || sums {
		r.ts.phase, r.ts.recur = stepRecur, recur
		tm.run(&r.ts, tm.n*teamStepParts)
	}
	r.ts = teamStep{}
	return sums
}

// gatesBack is the gate step of stepBackward for units [u0, u1).
func (ts *teamStep) gatesBack(u0, u1 int) {
	r, l := ts.r, ts.l
	h := r.s.h
	a, b := u0*l, u1*l
	dh := ts.dh[a:b]
	if ts.at != nil {
		for j, v := range ts.at[a:b] {
			dh[j] += v
		}
	}
	if r.s.p.Kind == LayerGRU {
		gruBackward(ts.dz[a:], h*l, ts.dcPrev[a:b], dh, ts.dc[a:b], ts.gates[a:], ts.cPrev[a:b])
		return
	}
	kernel.GateBackwardTable(ts.dz[a:], h*l, ts.dcPrev[a:b], dh, ts.dc[a:b], ts.gates[a:], nil, 0,
		kernel.TableI|kernel.TableF|kernel.TableG|kernel.TableO, ts.tc[a:b], ts.cPrev[a:b])
}

package cell

import (
	"math"
	"math/rand/v2"
	"testing"
)

// biasPlusScaled gives the bits of its row-by-row definition, for scales
// of either sign, zero, −0 and past the finite ones, and rows with zeros.
func TestBiasPlusScaled(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	n := 37
	u, b, got := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range u {
		if i%3 != 0 {
			u[i] = rng.NormFloat64()
		}
		if i%4 != 0 {
			b[i] = rng.NormFloat64()
		}
	}
	for _, s := range []float64{1, -0.37, 0, math.Copysign(0, -1), 1e300, math.Inf(1), math.Inf(-1), math.NaN()} {
		biasPlusScaled(got, u, s, b)
		for q := range n {
			want := b[q]
			if u[q] != 0 {
				want = math.FMA(u[q], s, b[q])
			}
			if math.Float64bits(got[q]) != math.Float64bits(want) && !(math.IsNaN(got[q]) && math.IsNaN(want)) {
				t.Fatalf("scale %v, row %d: %v, want %v", s, q, got[q], want)
			}
		}
	}
}

// A batched method's lanes keep h of two steps where only the head reads
// it, at the last step (one layer, one direction; hn, hn-bf and last), and
// the plans count that memory; elsewhere, and in the one-lane passes that
// read h afterwards (LRP, DeepLIFT, occlusion's prefix), every step's.
// (The results are the same bits: the engine's parity tests run on these
// lanes.)
func TestWorkerLanesKeepTwoStepsOfH(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const h, l, steps = 6, 3, 10
	for _, c := range []struct {
		hc   headCase
		ring bool
	}{
		{headCase{1, false, HeadHN, ActNone}, true},
		{headCase{1, false, HeadHNBF, ActNone}, true},
		{headCase{1, false, HeadLast, ActTanh}, true},
		{headCase{1, false, HeadMean, ActNone}, false},
		{headCase{1, false, HeadMax, ActNone}, false},
		{headCase{2, false, HeadHN, ActNone}, false},
		{headCase{1, true, HeadHN, ActNone}, false},
	} {
		s := randomHeadStacked(t, rng, 4, h, 2, c.hc)
		w := newWorkerLanes(s, l, steps)
		keep := steps
		if c.ring {
			keep = 2
		}
		for ci, tr := range w.cells {
			if len(tr.hs) != keep*h*l {
				t.Errorf("%v: cell %d keeps %d values of h, want %d steps' (%d)", c.hc, ci, len(tr.hs), keep, keep*h*l)
			}
		}
		want := s.laneBytes(l, steps, false) - 8*int64(len(s.cells)*(steps-keep)*h*l)
		if got := s.workerLaneBytes(l, steps); got != want {
			t.Errorf("%v: workerLaneBytes %d, want %d", c.hc, got, want)
		}
		if n, seg := len(newCkLanes(s, l, 4, 3, false).cells[0].hs), min(4, keep); n != seg*h*l {
			t.Errorf("%v: checkpointed lanes (segments of 4 steps) keep %d values of h, want %d steps'", c.hc, n, seg)
		}
		for _, r := range []*lanes{newLanes(s, 1, steps, false), newLanes(s, 1, steps, true)} {
			if len(r.cells[0].hs) != steps*h {
				t.Errorf("%v: one-lane lanes keep %d values of h, want every step's", c.hc, len(r.cells[0].hs))
			}
		}
	}
}

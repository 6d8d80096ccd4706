package cell

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// TestPlanReport: RunOptions.Plan is told, once a call, the plan the call
// runs: checkpoints that keep the boundaries piped on a team of two when
// the budget holds only a few lanes, the whole trace when it holds them
// all; the memory it states is what the call allocates (within 25 %) and
// within the budget; and String says so in words.
func TestPlanReport(t *testing.T) {
	twoCores(t)
	defer func() { planSeen = nil }()
	rng := rand.New(rand.NewPCG(74, 75))
	choose := func([]float64) (int, error) { return 0, nil }
	s := randomHeadStacked(t, rng, 5, 16, 3, headCase{2, true, HeadMean, ActNone})
	const steps, n = 300, 50
	x := randomStackedInput(rng, steps, 5)
	alphas, weights := midpointRule(n)
	seg, nseg := segments(steps)
	small := 3 * s.ckLaneBytes(igBlock/2, seg, nseg, true) / 2 // kept lanes, 8 to 11 of them
	var seen runPlan
	planSeen = func(p runPlan) { seen = p }
	for _, c := range []struct {
		budget int64
		want   func(Plan) bool
		words  []string
	}{
		{small, func(p Plan) bool {
			return p.Trace == "checkpoints" && p.KeptBoundaries && p.Piped && p.Team == 2 && p.Workers == 1 &&
				p.Lanes == seen.lanes && p.Segment >= seen.seg && p.Segment*p.Segments >= steps // widened: longer segments than planSeen's
		}, []string{"IG of 50 steps on T = 300", "1 worker × ", "piped on a team of 2", "checkpoints every", "layer boundaries kept"}},
		{1 << 30, func(p Plan) bool { return p.Trace == "whole" && !p.Piped && p.Workers*p.Lanes >= n }, []string{"the whole trace", "of a 1024 MiB budget"}},
	} {
		r, _ := NewRunner(s)
		var got []Plan
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		if _, err := igOut(r, x, choose, alphas, weights, RunOptions{Workers: 2, Budget: c.budget, Plan: func(p Plan) { got = append(got, p) }}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&ms1)
		r.Close()
		if len(got) != 1 {
			t.Fatalf("budget %d: %d plans told, want 1", c.budget, len(got))
		}
		p := got[0]
		alloc := int64(ms1.TotalAlloc - ms0.TotalAlloc)
		t.Logf("%v (allocated %d bytes, stated %d)", p, alloc, p.Bytes)
		if p.Method != "IG" || p.Steps != steps || p.Items != n || p.Budget != c.budget || p.Bytes > p.Budget || !c.want(p) {
			t.Errorf("budget %d: plan %+v, runPlan %+v", c.budget, p, seen)
		}
		if float64(p.Bytes) < 0.75*float64(alloc) || float64(p.Bytes) > 1.25*float64(alloc) {
			t.Errorf("budget %d: plan states %d bytes, the call allocated %d", c.budget, p.Bytes, alloc)
		}
		for _, w := range c.words {
			if !strings.Contains(p.String(), w) {
				t.Errorf("%q: no %q", p, w)
			}
		}
	}
	// Occlusion: told too.
	r, _ := NewRunner(s)
	defer r.Close()
	var got []Plan
	out := make([]float64, steps)
	if err := r.Occlusion(t.Context(), x, 1, out, RunOptions{Workers: 1, Plan: func(p Plan) { got = append(got, p) }}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Method != "occlusion" || got[0].Items != steps || got[0].Bytes > got[0].Budget || got[0].Budget != DefaultBudget {
		t.Errorf("occlusion: plans %+v", got)
	} else if !strings.HasPrefix(got[0].String(), "occlusion of T = 300: 1 worker × ") {
		t.Errorf("occlusion: %q", got[0])
	}
}

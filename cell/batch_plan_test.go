package cell

import (
	"math"
	"testing"
)

// TestPlanIG checks IG plans directly: the budget is honoured (or only the
// minimum, one lane with checkpoints, exceeds it), every field is in range,
// and the plans the design notes promise come out.
func TestPlanIG(t *testing.T) {
	sp := shape{h: 7, d: 4} // sp-counter's shape
	wide := shape{h: 256, d: 128}
	for _, tc := range []struct {
		name        string
		s           shape
		steps, n    int
		dense       bool
		lim         limits
		check       func(p plan) bool // the promised plan, if any
		description string
	}{
		{"checkpoints when the trace does not fit", sp, 4096, 10000, false, limits{budget: 16 << 20, workers: 2},
			func(p plan) bool { return p.seg == 64 && p.lanes >= 16 && p.workers == 2 }, "checkpoints every 64 steps and ≥ 16 lanes"},
		{"the whole trace when it fits", sp, 256, 1000, false, limits{budget: 1 << 30, workers: 2},
			func(p plan) bool { return p.seg == 256 && p.lanes == maxLanes }, "the whole trace and 64 lanes"},
		{"a chunk for every worker", sp, 100, 50, false, limits{budget: DefaultBudget, workers: 2},
			func(p plan) bool { return p.workers == 2 && p.chunk == 32 }, "chunks of 32 on 2 workers"},
		{"all items in one batch per worker", wide, 256, 50, true, limits{budget: DefaultBudget, workers: 1},
			func(p plan) bool { return p.lanes == 56 && p.seg == 256 }, "one batch of 56 lanes"},
		{"lanes capped", sp, 300, 1000, false, limits{budget: DefaultBudget, workers: 3, lanes: 5},
			func(p plan) bool { return p.lanes == 5 && p.chunk == 16 }, "5 lanes, chunks of 16"},
		{"a budget of one byte", sp, 37, 70, false, limits{budget: 1, workers: 2},
			func(p plan) bool { return p.lanes == 1 && p.workers == 1 && p.seg == 7 }, "the minimum: one lane, one worker, checkpoints"},
		{"dense, cut blocks", shape{h: 9, d: 3}, 70, 100, true, limits{budget: 40 << 10, workers: 1}, nil, ""},
		{"one item", sp, 1, 1, false, limits{budget: DefaultBudget, workers: 4}, nil, ""},
		{"many workers", sp, 64, 20, true, limits{budget: 1 << 20, workers: 16}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planIG(tc.s, tc.steps, tc.n, tc.dense, tc.lim)
			bytes := int64(p.workers) * igBytes(tc.s, p.lanes, p.seg, tc.steps, tc.n, tc.dense)
			sqrtT := int(math.Ceil(math.Sqrt(float64(tc.steps))))
			switch {
			case p.lanes < 1 || p.lanes > maxLanes || (tc.lim.lanes > 0 && p.lanes > tc.lim.lanes):
				t.Errorf("plan %+v: lanes out of range", p)
			case p.workers < 1 || p.workers > tc.lim.workers:
				t.Errorf("plan %+v: workers out of 1…%d", p, tc.lim.workers)
			case p.chunk%sumBlock != 0 || p.chunk < p.lanes:
				t.Errorf("plan %+v: the chunk is not whole blocks of 16 holding a batch", p)
			case p.seg != tc.steps && p.seg != sqrtT:
				t.Errorf("plan %+v: segments of neither T = %d nor ⌈√T⌉ = %d steps", p, tc.steps, sqrtT)
			case p.workers > (tc.n+p.chunk-1)/p.chunk:
				t.Errorf("plan %+v: more workers than chunks", p)
			case bytes > tc.lim.budget && (p.lanes != 1 || p.workers != 1 || p.seg != sqrtT):
				t.Errorf("plan %+v: %d bytes over the budget of %d", p, bytes, tc.lim.budget)
			case tc.check != nil && !tc.check(p):
				t.Errorf("plan %+v, want %s", p, tc.description)
			}
		})
	}
}

// TestPlanOcclusion checks occlusion plans directly.
func TestPlanOcclusion(t *testing.T) {
	sp := shape{h: 7, d: 4}
	for _, tc := range []struct {
		name  string
		s     shape
		steps int
		lim   limits
		want  plan // zero: no promise beyond the ranges
	}{
		{"long input, 2 workers", sp, 4096, limits{budget: DefaultBudget, workers: 2}, plan{workers: 2, lanes: 64, chunk: 64, seg: 2}},
		{"three chunks per worker", sp, 240, limits{budget: DefaultBudget, workers: 2}, plan{workers: 2, lanes: 40, chunk: 40, seg: 2}},
		{"short input", sp, 16, limits{budget: DefaultBudget, workers: 2}, plan{workers: 2, lanes: 2, chunk: 2, seg: 2}},
		{"lanes capped", sp, 1000, limits{budget: DefaultBudget, workers: 1, lanes: 5}, plan{workers: 1, lanes: 5, chunk: 5, seg: 2}},
		{"a budget of one byte", sp, 1000, limits{budget: 1, workers: 3}, plan{workers: 3, lanes: 1, chunk: 1, seg: 2}},
		{"a small budget", shape{h: 100, d: 50}, 5000, limits{budget: 1 << 20, workers: 2}, plan{}},
		{"one step", sp, 1, limits{budget: DefaultBudget, workers: 8}, plan{workers: 1, lanes: 1, chunk: 1, seg: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planOcclusion(tc.s, tc.steps, tc.lim)
			switch {
			case p.lanes < 1 || p.lanes > maxLanes || (tc.lim.lanes > 0 && p.lanes > tc.lim.lanes):
				t.Errorf("plan %+v: lanes out of range", p)
			case p.workers < 1 || p.workers > tc.lim.workers || p.workers > (tc.steps+p.lanes-1)/p.lanes:
				t.Errorf("plan %+v: workers out of range", p)
			case p.chunk != p.lanes || p.seg != 2:
				t.Errorf("plan %+v: a chunk is one batch, two trace slots", p)
			case p.lanes > 1 && int64(tc.lim.workers*p.lanes)*occlusionLaneBytes(tc.s) > tc.lim.budget:
				t.Errorf("plan %+v: over the budget of %d", p, tc.lim.budget)
			case tc.want != (plan{}) && p != tc.want:
				t.Errorf("plan %+v, want %+v", p, tc.want)
			}
		})
	}
}

// TestLimitsOf: zero options mean the documented defaults.
func TestLimitsOf(t *testing.T) {
	l := limitsOf(BatchOptions{})
	if l.budget != DefaultBudget || l.workers < 1 || l.lanes != 0 {
		t.Errorf("limitsOf(zero options) = %+v", l)
	}
	l = limitsOf(BatchOptions{Budget: 5, Workers: 3, Lanes: 7})
	if l != (limits{budget: 5, workers: 3, lanes: 7}) {
		t.Errorf("limitsOf(5, 3, 7) = %+v", l)
	}
}

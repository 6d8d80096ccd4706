package cell

import (
	"fmt"
	"runtime"
)

// DefaultBudget is the scratch memory a run may use when RunOptions
// gives none: 256 MiB.
const DefaultBudget int64 = 256 << 20

// RunOptions tune a batched call of a Runner (IG, occlusion and
// their every-class forms). None of them changes a result: the lanes of a
// batch compute exactly the operations of the one-lane pass, and sums
// over steps are added in fixed blocks, in order, whatever the chunking.
// The zero value is the default for every field; a negative Budget,
// Workers or Lanes is an error.
type RunOptions struct {
	// Budget bounds the scratch memory of the call in bytes (0:
	// DefaultBudget). It decides the number of lanes per batch and whether
	// backprop keeps the whole trace or checkpoints (the segments in
	// between are recomputed). A budget too small for even one lane with
	// checkpoints is an error that gives the least budget the input needs.
	Budget int64
	// Spare is memory beyond Budget, ≥ 0, that IG and occlusion may also
	// use to run faster (more lanes, the whole trace instead of
	// checkpoints): memory another caller left idle, such as the share of
	// a worker with nothing to do. It never decides whether an input is
	// refused, which Budget alone does, nor a result.
	Spare int64
	// Workers is the number of goroutines (0: runtime.GOMAXPROCS(0)). A
	// Runner's IG may run one batch with each time step shared
	// among them (team.go), spinning between steps: callers that
	// run several inputs at once give each its share of the cores. A
	// Runner's call too small to gain from a second goroutine runs
	// on one (workers.go).
	Workers int
	// Lanes caps the lanes per batch (0: automatic, at most 64).
	Lanes int
	// Progress, if not nil, is called after each finished chunk with the
	// number of items done (IG steps or occluded positions) and the total.
	// Calls come from the worker goroutines, one at a time, with done
	// increasing (nil: no calls).
	Progress func(done, total int)
	// Plan, if not nil, is told the schedule the call chose, once it is
	// chosen and before the work starts, on the caller's goroutine (nil:
	// not told). An every-class IG on checkpoints tells one per class.
	Plan func(Plan)
}

// check rejects negative options, naming the field.
func (o RunOptions) check() error {
	switch {
	case o.Budget < 0:
		return fmt.Errorf("cell: RunOptions.Budget is %d, want ≥ 0 (0: DefaultBudget)", o.Budget)
	case o.Spare < 0:
		return fmt.Errorf("cell: RunOptions.Spare is %d, want ≥ 0", o.Spare)
	case o.Workers < 0:
		return fmt.Errorf("cell: RunOptions.Workers is %d, want ≥ 0 (0: GOMAXPROCS)", o.Workers)
	case o.Lanes < 0:
		return fmt.Errorf("cell: RunOptions.Lanes is %d, want ≥ 0 (0: automatic)", o.Lanes)
	}
	return nil
}

// limits are RunOptions with the defaults filled in.
type limits struct {
	budget  int64 // bytes of scratch memory, > 0
	workers int   // > 0
	lanes   int   // the cap on the lanes per batch; 0: automatic
}

// limitsOf fills in the defaults of opt (its fields are not negative).
func limitsOf(opt RunOptions) limits {
	l := limits{budget: opt.Budget, workers: opt.Workers, lanes: max(opt.Lanes, 0)}
	if l.budget <= 0 {
		l.budget = DefaultBudget
	}
	if l.workers <= 0 {
		l.workers = runtime.GOMAXPROCS(0)
	}
	return l
}

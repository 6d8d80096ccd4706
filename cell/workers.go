package cell

// How many workers a small call gets. A second worker costs a call about
// 50–100 µs on the 2-core machine where this was measured (waking its
// goroutine and core, its lanes' first touch of the input, the hand-over
// of the class), and splits IG's batch of 52 lanes into two: a sparse
// model's product, an axpy per nonzero weight into a row of lanes, costs
// nearly as much for 26 lanes as for 52. So a call whose work is small
// runs on one worker, whatever Workers allows; only the schedule changes,
// never a result.
//
// Measured, IG and occlusion on the white-box nets, 2 threads against 1
// (BenchmarkIG, BenchmarkOcclusion), before this: IG 50 steps on counting
// T = 16 and 256 0.56× and 0.58× (work 1.5·10⁴ and 2.4·10⁵), sp-counter
// 0.66× and 0.63× (1.0·10⁵, 1.6·10⁶), sp-fsa 0.67× and 0.94× (7·10⁵,
// 1.1·10⁷); IG 1,000 steps on counting T = 16 0.96× (2.9·10⁵); occlusion
// on counting T = 256 0.83× (5.9·10⁵). Gains kept: IG 1,000 steps on
// sp-counter T = 16 1.22× (2.0·10⁶) and counting T = 256 1.67× (4.6·10⁶);
// IG 50 steps on sp-counter T = 4,096 1.52× (2.6·10⁷) and bracket T = 256
// 1.25× (3.4·10⁷).

// parallelMinWork is the least work (laneStepWork units, see callWorkers)
// of a call on several workers; a sparse model's call whose workers would
// have fewer than maxBatchLanes lanes each needs sparseSplitMinWork.
// Tests lower them to run small inputs on several workers.
var (
	parallelMinWork    int64 = 1 << 20
	sparseSplitMinWork int64 = 1 << 24
)

// laneStepWork is the work of one time step of one lane through every
// cell, forward: the terms of its products (the nonzero ones on sparse
// weights), 4 per unit for layer 0's input (a scaled row of the input
// products the lanes share, or of one-hot input's tables) and 16 per unit
// for the gate step.
func (s *Model) laneStepWork() int64 {
	h := int64(s.h)
	var w int64
	for ci := range s.cells {
		cl := &s.cells[ci]
		if t := cl.terms.whh; t != nil {
			w += int64(len(t.coef))
		} else {
			w += 4 * h * h
		}
		switch t := cl.terms.wih; {
		case ci < s.dirs:
			w += 4 * h
		case t != nil:
			w += int64(len(t.coef))
		default:
			w += 4 * h * int64(cl.in)
		}
		w += 16 * h
	}
	return w
}

// callWorkers is the workers (at most workers) for a call that runs lanes
// lanes over steps time steps each: one where the work is too small to
// gain from more (see above).
func (s *Model) callWorkers(workers, lanes, steps int) int {
	if workers <= 1 {
		return workers
	}
	work := int64(lanes) * int64(steps) * s.laneStepWork()
	least := parallelMinWork
	if s.sparse() && lanes < maxBatchLanes*workers {
		least = sparseSplitMinWork
	}
	if work < least {
		return 1
	}
	return workers
}

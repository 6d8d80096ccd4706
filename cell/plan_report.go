package cell

import (
	"fmt"
	"strings"
)

// Plan is the schedule an IG or occlusion call chose for one input
// (RunOptions.Plan): how it spends the cores and the memory budget. It
// changes no result, only the time and memory a call takes.
type Plan struct {
	Method string // "IG" or "occlusion"
	Steps  int    // the input's time steps, T
	Items  int    // IG's steps or the occluded positions: the lanes to run in all

	Workers int // goroutines, each running batches of Lanes
	Lanes   int // lanes (IG steps, occluded copies) per batch of a worker
	// Team is the number of goroutines that share each time step of a
	// worker's batch (0: none).
	Team int
	// Piped: on a team of two, a checkpointed batch runs the two
	// directions of a layer side by side and backprop of one segment
	// beside the recomputation of the next.
	Piped bool
	// Split: the workers share IG's one chunk of checkpointed lanes, each a
	// run of them.
	Split bool

	// Trace is what a lane keeps of its forward pass: "whole" (every
	// step), "ring" (two steps: occlusion, forward only) or "checkpoints"
	// (every Segment-th step; backprop recomputes the segments between).
	Trace             string
	Segment, Segments int
	// KeptBoundaries: with checkpoints, the outputs of the layers below
	// the top are kept whole, so backprop recomputes each step of each
	// layer once; without, a layer's segment recomputes the layers below.
	KeptBoundaries bool

	Bytes  int64 // the scratch memory the plan needs
	Budget int64 // the budget it was planned in (Budget, plus Spare where used)
}

// String says the plan in one line, e.g. "IG of 50 steps on T = 2000:
// 1 worker × 8 lanes a batch, piped on a team of 2;
// checkpoints every 45 steps (45 segments), layer boundaries kept;
// 230 MiB of a 256 MiB budget".
func (p Plan) String() string {
	var b strings.Builder
	switch p.Method {
	case "IG":
		fmt.Fprintf(&b, "IG of %d steps on T = %d: ", p.Items, p.Steps)
	default:
		fmt.Fprintf(&b, "%s of T = %d: ", p.Method, p.Steps)
	}
	fmt.Fprintf(&b, "%s × %s a batch", plural(p.Workers, "worker"), plural(p.Lanes, "lane"))
	if p.Split {
		b.WriteString(", sharing one chunk")
	}
	switch {
	case p.Piped:
		fmt.Fprintf(&b, ", piped on a team of %d", p.Team)
	case p.Team > 1:
		fmt.Fprintf(&b, ", each time step on a team of %d", p.Team)
	}
	switch p.Trace {
	case "checkpoints":
		fmt.Fprintf(&b, "; checkpoints every %s (%s)", plural(p.Segment, "step"), plural(p.Segments, "segment"))
		if p.KeptBoundaries {
			b.WriteString(", layer boundaries kept")
		}
	case "ring":
		b.WriteString("; a ring of two steps a lane")
	default:
		b.WriteString("; the whole trace")
	}
	fmt.Fprintf(&b, "; %s of a %s budget", mebibytes(p.Bytes), mebibytes(p.Budget))
	return b.String()
}

// plural writes n words: "1 lane", "8 lanes".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// mebibytes writes n bytes in MiB, with one decimal below 10 MiB, or in
// KiB below 1 MiB.
func mebibytes(n int64) string {
	m := float64(n) / (1 << 20)
	switch {
	case m < 1:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	case m < 10:
		return fmt.Sprintf("%.1f MiB", m)
	}
	return fmt.Sprintf("%.0f MiB", m)
}

// report tells opt.Plan (if set) of p, a plan of method for items lanes
// of a T-step input that needs bytes of scratch memory within budget
// (both with the one-hot input's dense rows).
func (st *runnerState) report(opt RunOptions, method string, p runPlan, ring bool, steps, items int, bytes, budget int64) {
	if opt.Plan == nil {
		return
	}
	q := Plan{Method: method, Steps: steps, Items: items, Workers: p.workers, Lanes: p.lanes, Split: p.split,
		Trace: "whole", Bytes: bytes, Budget: budget}
	if p.team > 1 {
		q.Team = p.team
		q.Piped = p.team == 2 && st.pipesPlan(p)
	}
	switch {
	case ring:
		q.Trace = "ring"
	case p.ck:
		q.Trace, q.Segment, q.Segments, q.KeptBoundaries = "checkpoints", p.seg, p.nseg, p.keep
	}
	opt.Plan(q)
}

package cell

import (
	"fmt"
	"math"
	"runtime"
)

// Planning of the batched methods on a model: the workers, the
// lanes per batch and whether the lanes keep the whole trace or
// checkpoints (checkpoint.go). Only the schedule depends on the
// plan, never a result.

// runPlan is the decomposition of one IntegratedGradients or
// Occlusion call.
type runPlan struct {
	workers, lanes int
	ck             bool // checkpointed lanes, segments of seg steps
	// IG keeps its sums of dz for the whole input (always on the whole
	// trace; on checkpoints when that takes less memory than a chunk's
	// batches going through the segments together, see batchesPer).
	longSums  bool
	seg, nseg int
	// The workers share IG's one chunk of checkpointed lanes, each a run
	// of its lanes (ig_split.go).
	split bool
	// One worker's batch runs each time step on a team of this many
	// goroutines (team_steps.go); 0 or 1: none.
	team int
	// Checkpointed lanes keep the layers' boundaries whole (checkpoints.out
	// and dOut): each layer's segments are recomputed once in backprop,
	// not once per layer and direction above.
	keep bool
	// IG's last chunk also carries the tail lanes of a short last block
	// (tailPlan).
	tail int
}

// planSeen, when set (tests), is told the plan of each IG call.
var planSeen func(runPlan)

// fullTraceMax caps the whole trace one worker keeps, whatever the budget
// (tests lower it to force checkpoints).
var fullTraceMax int64 = math.MaxInt64

// laneCost is the memory of one worker's lanes under p for T steps.
func (s *Model) laneCost(p runPlan, steps int) int64 {
	if p.ck {
		return s.ckLaneBytes(p.lanes, p.seg, p.nseg, p.keep)
	}
	return s.workerLaneBytes(p.lanes, steps)
}

// newPlan is the plan of l lanes a batch (checkpointed with ck, segments
// of ⌈√T⌉ steps) for items variants of an input of T steps, on as many of
// the workers as get a batch.
func newPlan(steps, items, workers, l int, ck bool) runPlan {
	seg, nseg := segments(steps)
	return runPlan{workers: max(1, min(workers, (items+l-1)/l)), lanes: l, ck: ck, seg: seg, nseg: nseg, longSums: !ck}
}

// planCost is the memory of plan p for an input of T steps: what the
// workers share, and each worker's lanes and extra(p).
func (s *Model) planCost(p runPlan, steps int, extra func(p runPlan) int64) int64 {
	return s.sharedBytes(p, steps) + int64(p.workers)*(s.laneCost(p, steps)+extra(p))
}

// sharedBytes is the memory the workers of p share: the input products of
// the full-trace lanes (dirs×T×4H).
func (s *Model) sharedBytes(p runPlan, steps int) int64 {
	if p.ck {
		return 0
	}
	return 8 * int64(s.dirs) * int64(steps) * 4 * int64(s.h)
}

// plan chooses the plan for items variants of an input of T steps: the
// whole trace with as many lanes (up to maxLanes and items) and workers
// as fit the budget, halving the lanes down to one block of IG's 16 steps
// (halfLanes); else checkpointed lanes,
// as many as fit, then the fewest workers. Recomputing the segments costs
// about one more forward pass per layer below the top (one layer: a
// third more time; measured, IG 50 steps on 200 tokens, 1 core: H = 256,
// 1 layer 0.27 s whole trace, 0.41 s checkpointed; 2 bidirectional
// layers, H = 64, 0.19 s and 0.51 s), fewer lanes with the whole trace
// less. A budget too small for one checkpointed lane is an error that
// names the least budget. extra(p) is the memory of one worker besides
// its lanes.
func (r *Runner) plan(steps, items int, budget int64, workers, maxLanes int, extra func(p runPlan) int64) (runPlan, error) {
	s := r.s
	cost := func(p runPlan) int64 { return s.planCost(p, steps, extra) }
	for full := min(maxLanes, items); full > 0; full = halfLanes(full) {
		p := newPlan(steps, items, workers, full, false)
		for cost(p) > budget && p.workers > 1 {
			p.workers--
		}
		if cost(p) <= budget && s.laneCost(p, steps) <= fullTraceMax {
			return p, nil
		}
		if s.sparse() {
			break // see halfLanes
		}
	}
	return r.checkpointedPlan(steps, items, budget, workers, maxLanes, extra)
}

// checkpointedPlan is plan's choice among checkpointed lanes: the most
// lanes that fit, trying whole blocks of IG's 16 steps before halving
// below them (a batch that cuts a block keeps its sums of dz for the
// whole input), then the fewest workers.
func (r *Runner) checkpointedPlan(steps, items int, budget int64, workers, maxLanes int, extra func(p runPlan) int64) (runPlan, error) {
	s := r.s
	cost := func(p runPlan) int64 { return s.planCost(p, steps, extra) }
	fits := func(p runPlan) bool { return cost(p) <= budget }
	if s.keeps() { // the boundaries kept while a batch holds keepLeast lanes
		if p, ok := firstCheckpointed(steps, items, workers, min(maxLanes, items), min(items, keepLeast), true, false, fits); ok {
			return p, nil
		}
	}
	if p, ok := firstCheckpointed(steps, items, workers, min(maxLanes, items), 1, false, false, fits); ok {
		return p, nil
	}
	least := newPlan(steps, items, workers, 1, true)
	least.workers = 1
	need := cost(least)
	least.longSums = true
	need = min(need, cost(least))
	return runPlan{}, &BudgetError{Budget: budget, Need: need, What: fmt.Sprintf("one variant of this %d-step input (with checkpoints)", steps)}
}

// igPlan is plan for IG's n steps: a dense model's steps large enough to
// share (teamable) in one batch on one worker's whole trace, each time
// step on a team of the workers (team.go); else with batches of at
// most an equal share of the blocks of 16 steps per worker, so that every
// worker has a chunk, kept when it runs on the
// whole trace with several workers; else, steps large enough to share,
// every lane in one batch of checkpoints on a team (its segments as long
// as the budget allows, widenSegments); else plan's most lanes, whose
// checkpointed lanes the workers share (splitPlan) where plan leaves some
// idle, or, where that does not fit either, whose checkpointed batches
// take turns on a team. Only the schedule changes, never a result.
// Measured, IG 50 steps, 2 cores (BenchmarkEngines, BenchmarkStackedIG):
// one batch of 50 lanes on one worker against 32 + 18 lanes on two,
// sp-fsa T = 256 10 → 7 ms,
// dense-h64 T = 256 29 → 18 ms, H = 256 T = 200 205 → 150 ms; 1,000
// tokens of the H = 256 model, whose whole trace holds 16 lanes
// (BenchmarkImportedIG, six alternating rounds): split checkpointed lanes
// 739–901 ms, one batch of checkpoints on a team 676–775 ms (one core,
// 16 lanes' whole trace: 1.12–1.24 s); 200 tokens in an 8 MiB share (the
// CLI's, -budget 32MiB), whose batch holds 16 checkpointed lanes: one
// worker 0.38–0.42 s, the batches on a team 0.31–0.33 s.
func (r *Runner) igPlan(steps, n int, budget int64, workers, maxLanes int, extra func(p runPlan) int64) (runPlan, error) {
	team := workers > 1 && r.teamable(min(maxLanes, n)) // steps large enough to share
	if team {
		if p, err := r.plan(steps, n, budget, 1, maxLanes, extra); err == nil && r.teamable(p.lanes) && (!p.ck && p.lanes >= n || teamsOn) {
			p.team = workers
			return p, nil
		}
	}
	blocks := (n + igBlock - 1) / igBlock
	if share := (blocks + workers - 1) / workers * igBlock; workers > 1 && share < min(maxLanes, n) {
		if p, err := r.plan(steps, n, budget, workers, share, extra); err == nil && !p.ck && p.workers > 1 {
			return p, nil
		}
	}
	// The whole trace holds too few lanes for every worker: every lane in
	// one batch of checkpoints on a team (its segments then as long as the
	// budget allows, widenSegments).
	// On two cores, checkpointed lanes that keep the boundaries go on a
	// team that pipes their segments (pipeline.go), however few: the
	// hand-over is one a segment, not one a step. Measured, IG 50 steps on
	// 2,000 tokens of a 2-layer BiLSTM, H 128, 2 cores, default budget,
	// two alternating rounds: 8 kept lanes piped 11.1 s, the split lanes
	// that recompute the layer below (the plan before) 23.8–24.8 s.
	var ck runPlan
	teamCk, pipeCk := false, false
	if team || workers == 2 {
		var err error
		ck, err = r.checkpointedPlan(steps, n, budget, 1, maxLanes, extra)
		teamCk = err == nil && team && r.teamable(ck.lanes)
		pipeCk = err == nil && workers == 2 && r.pipesPlan(ck)
	}
	if teamCk && ck.lanes >= n {
		ck.team = workers
		return ck, nil
	}
	teamCk = teamCk || pipeCk
	p, err := r.plan(steps, n, budget, workers, maxLanes, extra)
	if err == nil && p.workers < workers {
		// In order: split lanes that keep the layers' boundaries, fewer
		// lanes that keep them on every worker where each holds a block of
		// IG's steps, else one batch that keeps them on a team; then split
		// lanes that recompute the layers below, unless batches that keep
		// them can take turns on a team. Measured, 1,000 tokens of a 2-layer
		// BiLSTM, H 128, 2 cores, default budget: split and recomputing
		// 13.0–13.8 s, kept on both workers (8 lanes each) 9.2–10.6 s
		// (BENCHMARKS.md, "Checkpoints that keep the layers' boundaries");
		// then, with the kernels and tails of "A core's FMAs on long
		// inputs", kept on both workers 8.7 s, 18 kept lanes on a team of
		// two 6.0–7.1 s, one core 8.5 s. Batches of 8 lanes run the
		// products slower than 16, and 4 chunks of a block (the last of 2
		// lanes) split 32 : 18 between two workers.
		sp, ok := r.splitPlan(steps, n, budget, workers, maxLanes, extra)
		if ok && sp.keep {
			return sp, nil
		}
		if q, ok := r.keptOnEveryWorker(steps, n, budget, workers, maxLanes, extra); ok && (q.lanes >= igBlock || !(teamCk && ck.keep)) {
			return q, nil
		}
		if ok && !(teamCk && ck.keep) {
			return sp, nil
		}
		if teamCk { // the batches that fit take turns on the team, not on one core
			ck.team = workers
			return ck, nil
		}
	}
	if q, ok := r.narrowWhole(p, steps, n, budget, maxLanes, extra); err == nil && ok {
		return q, nil
	}
	return p, err
}

// narrowLanes is the lanes of the narrow whole-trace batches that IG's one
// worker prefers to checkpoints (narrowWhole): one AVX-512 vector, two
// AVX2 ones.
const narrowLanes = 8

// narrowWhole is the whole-trace plan of narrowLanes lanes a batch where
// checkpointed plan p runs on one worker and the budget holds it: on a
// model whose weights hold no ±0 (Model.nonzero), whose products of 8
// lanes run about as fast as those of 16 (kernel.MulAddRowsNonzero), so
// that the checkpoints' second forward pass costs more than the narrower
// batches. Measured, IG 50 steps, one core (Zen 4), the checkpointed plan
// the budget chose against 8 lanes of the whole trace: the long-input
// 2-layer BiLSTM (E 100, H 128; random weights at 1,000 tokens), 250
// tokens in 128 MiB 0.89 → 0.77 s, 1,000 in 300 MiB 3.68 → 3.03 s, 4,000
// in 1,100 MiB 14.5 → 11.9 s; a 1-layer LSTM (E 100, H 256), 1,000 tokens
// in 200 MiB, 2.36 → 1.52 s; 2 layers of H 64, 2,000 tokens in 300 MiB,
// 2.16 → 1.75 s; one of H 16, 4,000 tokens in 60 MiB, 0.152 → 0.114 s. A
// GRU's packed weights hold zeros, and the scan for them slows its narrow
// products: 2 layers of H 128, 1,000 tokens in 300 MiB, 3.35 s
// checkpointed against 4.44. (p comes from plan, which sets no team and
// no split.)
func (r *Runner) narrowWhole(p runPlan, steps, n int, budget int64, maxLanes int, extra func(runPlan) int64) (runPlan, bool) {
	s := r.s
	if !p.ck || p.workers != 1 || !s.nonzero || s.sparse() || maxLanes < narrowLanes || n <= narrowLanes {
		return p, false
	}
	q := newPlan(steps, n, 1, narrowLanes, false)
	if s.planCost(q, steps, extra) > budget || s.laneCost(q, steps) > fullTraceMax {
		return p, false
	}
	return q, true
}

// pipesPlan reports whether the lanes of checkpointed plan p, which keep
// the boundaries, pipe on a team of two (lanes.pipes).
func (st *runnerState) pipesPlan(p runPlan) bool {
	s := st.s
	return p.ck && p.keep && pipeOn && !s.sparse() && st.syms == nil && s.p.Head != HeadAttention && p.lanes > 1 &&
		min(runtime.GOMAXPROCS(0), teamCPUs) >= 2
}

// keptOnEveryWorker is a checkpointed plan that keeps the boundaries on
// every one of the workers, with the most lanes (at least half a block of
// IG's steps) that fit: the layers below recomputed once, on every core.
func (r *Runner) keptOnEveryWorker(steps, n int, budget int64, workers, maxLanes int, extra func(p runPlan) int64) (runPlan, bool) {
	s := r.s
	if !s.keeps() {
		return runPlan{}, false
	}
	fits := func(p runPlan) bool { return s.planCost(p, steps, extra) <= budget }
	return firstCheckpointed(steps, n, workers, min(maxLanes, (n+workers-1)/workers), igBlock/2, true, true, fits)
}

// firstCheckpointed returns the first checkpointed plan that fits, its
// lanes from most down to least (fewerLanes), for each IG's sums of dz by
// segment before the whole input's (longSums), keeping the boundaries or
// not (keep): with every, on all the workers; else on the fewest cut from
// them until it fits.
func firstCheckpointed(steps, items, workers, most, least int, keep, every bool, fits func(runPlan) bool) (runPlan, bool) {
	for l := most; l >= least; l = fewerLanes(l) {
		for _, long := range []bool{false, true} {
			p := newPlan(steps, items, workers, l, true)
			p.keep, p.longSums = keep, long
			for !every && p.workers > 1 && !fits(p) {
				p.workers--
			}
			if fits(p) && (!every || p.workers == workers) {
				return p, true
			}
		}
	}
	return runPlan{}, false
}

// keepLeast is the fewest lanes a batch of one worker keeps the layers'
// boundaries with, before it recomputes the layers below instead.
// Measured, IG 50 steps on 4,000 tokens of a 2-layer BiLSTM (E 100,
// H 128), default budget, one core, where the boundaries of 8 lanes do
// not fit: 4 kept lanes 48.8 s, 50 lanes that recompute 85.4 s.
const keepLeast = 4

// keeps reports whether checkpointed plans of s may keep the layers'
// boundaries (runPlan.keep): models of two layers or more. Measured, IG
// 50 steps on 1,000 tokens of a 2-layer bidirectional model (E 100,
// H 128), default budget, one core: 20–22 s recomputing the layers below,
// 11–15 s keeping the boundaries, 8.4–9.2 s on the whole trace
// (BENCHMARKS.md, "Checkpoints that keep the layers' boundaries").
func (s *Model) keeps() bool { return keepBoundaries && s.p.Layers > 1 }

// halfLanes is the next lanes per batch the whole-trace planner tries
// after l on a dense model: half, rounded up to whole blocks of IG's 16
// steps (IG's chunks hold whole blocks: 25 lanes would run batches of 16),
// none after 16. A sparse model's products, an axpy per weight into a row
// of lanes, gain more from many lanes than from the whole trace: it tries
// l lanes only, then checkpoints. Measured, IG 50 steps, 1 thread: 16
// lanes with the whole trace against 50 checkpointed lanes, dense-h64
// T = 4,096 417 ms and 530 ms, the H = 256 model on 1,000
// tokens 1.17 s and 1.29 s; sparse sp-fsa T = 4,096 138 ms and 99 ms.
func halfLanes(l int) int {
	if l <= igBlock {
		return 0
	}
	return max(igBlock, (l/2+igBlock-1)/igBlock*igBlock)
}

// fewerLanes is the next lanes per batch a checkpointed plan tries after
// l: the multiple of 16 below it, then halves down to 1 (0: none left).
func fewerLanes(l int) int {
	if l > igBlock {
		return (l - 1) / igBlock * igBlock
	}
	return l / 2
}

// workers returns p.workers workers, each with lanes for p and room for
// dz sums and products of the given sizes (float64s). Buffers grown by
// earlier, larger calls are kept for reuse (steady-state calls allocate
// nothing) unless they exceed this call's budget: then the spare workers'
// buffers are dropped and oversized ones made anew.
func (r *Runner) workers(p runPlan, steps, sums, parts, siblings int, budget int64) []*worker {
	for len(r.pool) < p.workers {
		r.pool = append(r.pool, &worker{idx: len(r.pool)})
	}
	s := r.s
	held := int64(0)
	for _, wk := range r.pool {
		held += wk.bytes()
	}
	tight := held > budget
	if tight {
		for _, wk := range r.pool[p.workers:] {
			wk.r, wk.sib, wk.dzSum, wk.part = nil, nil, nil, nil
		}
	}
	for _, wk := range r.pool[:p.workers] {
		if p.ck {
			if !wk.r.fitsCk(p.lanes, p.seg, p.nseg, p.keep) || (tight && s.laneCost(p, steps) < wk.laneBytes()) {
				wk.r, wk.sib = nil, nil // the old lanes go before the new ones come
				wk.r = newCkLanes(s, p.lanes, p.seg, p.nseg, p.keep)
			}
			if tight && len(wk.sib) > siblings {
				wk.sib = append([]*lanes(nil), wk.sib[:siblings]...)
			}
			for len(wk.sib) < siblings {
				wk.sib = append(wk.sib, newCkSibling(wk.r))
			}
		} else if !wk.r.fits(p.lanes, steps, false) || (tight && (wk.r.l > p.lanes || wk.r.steps > steps)) {
			wk.r, wk.sib = nil, nil
			wk.r = newWorkerLanes(s, p.lanes, steps)
		}
		if len(wk.dzSum) < sums || len(wk.part) < parts || (tight && len(wk.dzSum)+len(wk.part) > sums+parts) {
			wk.dzSum, wk.part = nil, nil
			wk.dzSum, wk.part = bigFloats(sums), bigFloats(parts)
		}
	}
	return r.pool[:p.workers]
}

// bytes is the memory of a worker's buffers.
func (wk *worker) bytes() int64 {
	return 8*int64(len(wk.dzSum)+len(wk.part)) + wk.laneBytes()
}

// laneBytes is the memory of a worker's lanes.
func (wk *worker) laneBytes() int64 {
	switch {
	case wk.r == nil:
		return 0
	case wk.r.ck != nil:
		keep := wk.r.ck.out != nil
		return wk.r.s.ckLaneBytes(wk.r.l, wk.r.steps, wk.r.ck.nsegCap, keep) + int64(len(wk.sib))*wk.r.s.siblingBytes(wk.r.l, wk.r.steps, wk.r.ck.nsegCap, keep)
	}
	return wk.r.s.laneBytesOf(wk.r.l, wk.r.steps, wk.r.keepZg, wk.r.hRing)
}

// tailPlan is p with room in its batch for the short last block of IG's n
// steps (fewer than igBlock), which then rides in the last batch of the
// chunk before it instead of a batch of its own, where fits admits the
// lanes: on one worker whose chunks of per blocks are one batch each,
// checkpointed or on the whole trace. A batch costs about as much for 2
// lanes as for 16 (the weights stream through the cache either way):
// measured, IG 50 steps on 1,000 tokens of a 2-layer BiLSTM, H 128, 16
// checkpointed lanes, one core, the batch of the last 2 steps' products
// ran at 6–8 GFLOP/s against 24–35 for the others and took 1.1–1.7 of
// 9.5 s; on the whole trace (BenchmarkStackedIG's 600 MiB case: 18 lanes)
// carrying it took 2.77 s down to 2.56.
func tailPlan(p runPlan, n, per, chunks, maxLanes int, fits func(runPlan) bool) (runPlan, bool) {
	last := n - (chunks-1)*per*igBlock
	if p.split || p.workers != 1 || chunks < 2 || last >= igBlock || per*igBlock > p.lanes {
		return p, false
	}
	q := p
	q.lanes, q.tail = max(p.lanes, per*igBlock+last), last
	if q.lanes > maxLanes || !fits(q) {
		return p, false
	}
	return q, true
}

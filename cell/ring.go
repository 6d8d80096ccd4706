package cell

// A ring trace. Occlusion needs each copy's logits and nothing of its
// trace but the state the head reads; in a model of one layer and one
// direction whose head reads the last state (hn, hn-bf, last), a pass of
// its lanes keeps two steps, step t in slot t&1, instead of T: the steps
// write to memory that stays in the cache. The same operations, the same bits.
//
// Measured, occlusion sp-counter T = 4096 through the engine
// (package bench, BenchmarkOcclusion), 1 thread: whole traces 123 ms,
// ring 60 ms (the retired Batcher engine: 59 ms).

// ringOK reports whether s's occlusion lanes can keep a ring trace.
func (s *Model) ringOK() bool {
	switch s.p.Head {
	case HeadHN, HeadHNBF, HeadLast:
		return len(s.cells) == 1
	}
	return false
}

// slot is where step t lies in r's trace.
func (r *lanes) slot(t int) int {
	if r.ring {
		return t & 1
	}
	return t
}

// stateSlot is where c and h of step t lie in r's trace: slot t&1 on a
// ring, and on IG's state ring (stateRing).
func (r *lanes) stateSlot(t int) int {
	if r.ring || r.ringC {
		return t & 1
	}
	return t
}

// hSlot is where h of step t lies in r's trace: slot t&1 on a ring, on
// IG's state ring and on lanes that keep h of two steps (hRing).
func (r *lanes) hSlot(t int) int {
	if r.hRing {
		return t & 1
	}
	return r.stateSlot(t)
}

// stateRing reports whether IG's whole-trace lanes of s on an input with
// the symbols syms may keep c and h of two steps only: one layer and one
// direction whose head reads the last state, on one-hot input with tables
// whose gradients need no c_{t−1} (no forget gate with weights). Backprop
// reads neither then; a pass of one lane (no tables) keeps them all.
func (s *Model) stateRing(syms []int) bool {
	return syms != nil && s.ringOK() && s.tabs != nil && !s.tabs.needF
}

// ringPlan is occlusion's plan on ring lanes for items copies of an input
// of T steps: as many lanes (at most maxLanes) and workers as the budget
// holds beside the input products; false if not even one ring lane fits.
func (s *Model) ringPlan(steps int, budget int64, workers, maxLanes int) (runPlan, bool) {
	p := runPlan{lanes: max(1, min(maxLanes, steps))}
	cost := func(p runPlan) int64 {
		return s.sharedBytes(p, steps) + int64(p.workers)*s.workerLaneBytes(p.lanes, 2)
	}
	for {
		p.workers = max(1, min(workers, (steps+p.lanes-1)/p.lanes))
		for p.workers > 1 && cost(p) > budget {
			p.workers--
		}
		if cost(p) <= budget {
			return p, true
		}
		if p.lanes == 1 {
			return runPlan{}, false
		}
		p.lanes /= 2
	}
}

// setRing sets whether the lanes of pool keep a ring trace.
func setRing(pool []*worker, ring bool) {
	for _, wk := range pool {
		wk.r.ring = ring
	}
}

// setRingIG sets whether the lanes of pool may keep IG's state ring.
func setRingIG(pool []*worker, on bool) {
	for _, wk := range pool {
		wk.r.ringIG = on
	}
}

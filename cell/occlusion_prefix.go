package cell

// Occlusion's shared prefix. In a model whose layers all run forward in
// time, an occluded copy agrees with the unoccluded input, bit for bit,
// at every step before its occluded row: the lanes of a batch whose rows
// are t0, t0+1, … start at step t0 from the states of one unoccluded pass,
// as the retired white-box engine's did, and run T − t0 steps
// instead of T (half the work of occlusion, on average). A bidirectional
// model's backward direction reads every row before its first output, so
// its copies run whole.

// prefixBytes is the memory of the unoccluded pass the prefix keeps.
func (s *Model) prefixBytes(steps int) int64 { return s.laneBytes(1, steps, false) }

// hasPrefix reports whether s's occluded copies can start from a prefix.
func (s *Model) hasPrefix() bool { return s.dirs == 1 }

// runPrefix runs x's unoccluded pass on r.prefix (one lane, the whole
// trace) from the input products in r.u.
// The pass ends soon after stop's context is done.
func (r *Runner) runPrefix(x Input, steps int, stop *stopper) {
	if !r.prefix.fits(1, steps, false) {
		r.prefix = nil
		r.prefix = newLanes(r.s, 1, steps, false)
	}
	p := r.prefix
	p.scale[0], p.occluded[0] = x.scale, -1
	p.stop = stop
	p.forward(r.u, steps, 1)
	p.stop = nil
}

// startFrom fills the trace of cell ci for l lanes with the prefix's
// states before step from: c and h at from−1, which the step from reads,
// and, in the top layer, h at every earlier step (the mean and max heads
// read them).
func (r *lanes) startFrom(ci, from, l int) {
	s := r.s
	h := s.h
	src, dst := &r.prefix.cells[ci], &r.cells[ci]
	first := from - 1
	if ci == len(s.cells)-1 && !r.ring {
		first = 0
	}
	for t := first; t < from; t++ {
		d := r.hSlot(t)
		broadcast(dst.hs[d*h*l:(d+1)*h*l], src.hs[t*h:(t+1)*h], l)
	}
	t := from - 1
	d := r.slot(t)
	broadcast(dst.c[d*h*l:(d+1)*h*l], src.c[t*h:(t+1)*h], l)
}

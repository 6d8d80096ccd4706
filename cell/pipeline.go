package cell

// Checkpointed lanes on a team of two, by segment instead of by step.
// Checkpointed backprop recomputes a segment's forward steps, then runs
// its backward steps. Attribution needs no weight gradients, so a
// backward step is the same products as a forward one (W_hhᵀ·dz and
// W_ihᵀ·dz against W_hh·h and W_ih·x): the two halves take about the same
// time, and they share nothing but the trace. Where a team of two is lent
// to a batch of checkpointed lanes (IG's one batch on one input, igPlan),
// one member recomputes the next segment into a spare trace while the
// other runs backprop over this one (pipeSweep), and the forward pass runs
// the two directions of a layer side by side (pipeDirs): one hand-over a
// segment, or a layer, instead of one to three a time step (team_steps.go).
//
// Each segment gets the operations of the serial pass in the same order,
// whichever goroutine runs it and whichever buffer holds it, and what one
// half writes the other does not read: the same bits. The recomputation
// must not reach into other cells' traces, so lanes pipe only where a
// segment is recomputed from the checkpoints and the kept boundaries alone
// (ck.out) and the head reads no trace in backprop (not attention). One
// layer would pipe as well, but its team by step did as well there
// (BenchmarkImportedIG, bench_h256 on 1,000 tokens, 2 cores, six
// alternating rounds: 1.99–2.45 s piped, 1.84–2.50 s by step).
//
// A larger team keeps its time steps (team_steps.go): the two halves would
// leave its other members idle.

// pipeline is what lanes need to pipe: a spare trace of one segment, made
// on first use (ckLaneBytes counts it), and the helper's view of the lanes.
// Batches of a chunk that share their traces (newCkSibling) share it too.
type pipeline struct {
	spare cellTrace
	made  bool
	cells []cellTrace // the helper's cells: the spare at the one it recomputes
	hp    lanes       // the helper's view: r's buffers, its own stopper, no team
	stop  stopper
	job   pipeJob
	sk    gradSink // the job's copy of the sweep's sink (a pointer kept here would move the caller's to the heap)
	// The helper's buffers of wide input products (wideInputs).
	wideZ, wideIn []float64
}

// pipeJob is one hand-over: part 0 runs on r, part 1 on the helper's view.
type pipeJob struct {
	r, hp            *lanes
	dirs             bool // pipeDirs: the forward pass of cells ci and ci+1; else pipeSweep
	ci, k, d, sg, nx int
	l                int
	sk               *gradSink
}

// pipeOn lets lanes pipe (tests turn it off to compare).
var pipeOn = true

// pipeSeen, when set (tests), is told of each hand-over: of the two
// directions' forward passes (dirs) or of a segment's backprop.
var pipeSeen func(dirs bool)

// pipes reports whether r's checkpointed lanes run l lanes in a pipeline.
func (r *lanes) pipes(l int) bool {
	s := r.s
	return pipeOn && r.pipe != nil && r.team != nil && r.team.n == 2 && r.ck != nil && r.ck.out != nil &&
		r.prefix == nil && !r.tablesOn(0, l) && s.p.Head != HeadAttention
}

// spareBytes is the memory of a spare trace of one segment of seg steps,
// which checkpointed lanes that keep the boundaries may pipe with.
func (s *Model) spareBytes(l, seg int) int64 {
	return 8 * int64(l) * s.cellWords(seg, false, s.ringOK())
}

// view readies the helper's view of r for one job: r's buffers (cells:
// the helper's own, else r's), the stopper of r's context, no team.
func (p *pipeline) view(r *lanes, ownCells bool) *lanes {
	p.hp = *r
	p.hp.team = nil
	p.hp.stop = nil
	if r.stop != nil {
		p.stop = stopper{ctx: r.stop.ctx}
		p.hp.stop = &p.stop
	}
	if len(p.wideZ) == 0 { // the helper's own (wideBytes counts them)
		p.wideZ, p.wideIn = newWideBuffers(r.s)
	}
	p.hp.wideZ, p.hp.wideIn = p.wideZ, p.wideIn
	if ownCells {
		if len(p.cells) != len(r.cells) {
			p.cells = make([]cellTrace, len(r.cells))
		}
		p.hp.cells = p.cells
	}
	return &p.hp
}

// run runs the job on r's team (without a team of their own, so that
// neither half hands its products to it) and passes a stop of the helper's
// on to r.
func (p *pipeline) run(r *lanes) {
	tm := r.team
	r.team = nil
	defer func() { r.team, p.job, p.hp, p.sk = tm, pipeJob{}, lanes{}, gradSink{} }()
	tm.run(&p.job, 2)
	if p.stop.done && r.stop != nil {
		r.stop.done = true
	}
	p.stop = stopper{}
}

func (j *pipeJob) part(i, n int) {
	r := j.r
	if i == 1 {
		r = j.hp
	}
	if j.dirs {
		r.forwardCell(j.ci+i, j.l)
		return
	}
	if i == 0 {
		r.sweepReady(j.k, j.d, j.sg, j.l, j.sk)
		return
	}
	if j.k == 0 {
		r.ensureInput(j.d, j.nx)
	}
	r.runSegment(j.ci, j.nx, j.l)
}

// pipeDirs runs the forward pass of the two directions of a layer, cells
// ci and ci+1, side by side.
func (r *lanes) pipeDirs(ci, l int) {
	p := r.pipe
	if pipeSeen != nil {
		pipeSeen(true)
	}
	p.job = pipeJob{r: r, hp: p.view(r, false), dirs: true, ci: ci, l: l}
	p.run(r)
}

// pipeSweep runs backprop of layer k, direction d, over segment sg (its
// trace in place) beside the recomputation of segment next into the spare
// trace, which then takes sg's place.
func (r *lanes) pipeSweep(k, d, sg, next, l int, sk *gradSink) {
	s, p := r.s, r.pipe
	ci := k*s.dirs + d
	if pipeSeen != nil {
		pipeSeen(false)
	}
	if !p.made {
		p.spare, p.made = newCellTrace(s, r.l, r.steps, false, r.hRing), true
	}
	hp := p.view(r, true)
	hp.cells[ci] = p.spare
	var psk *gradSink
	if sk != nil {
		p.sk, psk = *sk, &p.sk
	}
	p.job = pipeJob{r: r, hp: hp, ci: ci, k: k, d: d, sg: sg, nx: next, l: l, sk: psk}
	p.run(r)
	p.spare, r.cells[ci] = r.cells[ci], p.spare
	r.ck.tag[ci] = -1
	if !r.stop.stopped() { // else the spare is not the segment's
		r.ck.tag[ci] = next
	}
}

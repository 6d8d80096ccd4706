package cell

import (
	"runtime"
	"sync/atomic"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// A team runs one batch of lanes on several goroutines: each time step
// (team_steps.go), or one product, each goroutine on its own rows
// of the output: when an input's lanes are one batch (IG's 50 steps on one
// input) and cores are spare, one input still uses them all. An output
// row's value is one fused multiply-add per term in order of the terms
// whoever computes it, so the rows' split changes no bit. The helpers spin
// a little between jobs (a time step's come microseconds apart) and then
// sleep until woken.
//
// IG plans a team for the one batch of a dense model (igPlan): on the
// whole trace, or on checkpoints where the whole trace holds too few
// lanes, and occlusion for its one batch (a short input: 48 tokens of the
// H = 256 model, 2 cores, 20.5 → 15.1 ms). Measured on the 2-core
// machine, IG 50 steps on 200 tokens of the H = 256 model (the whole
// trace): one core 184 ms, a team of two 146 ms, lanes split across the
// workers 179 ms; on 1,000 tokens see igPlan.
//
// The products before and after the time steps go on the team too: a
// dense input's W_ih·x_t (inputProducts) and IG's W_ihᵀ·(sums of dz)
// (gradSink.addSums), one row a time step. On one core they were about
// 5 ms of dense-h256's IG (T = 256, 50 steps, 4 blocks of sums), work
// the second core waited out: 2 threads 135.2 → 132.1 ms (benchstat,
// n = 10, p = 0.015; BENCHMARKS.md, "A team's share of a call").

// teamsOn gives every one-worker job a team, whatever its plan (tests:
// occlusion's small steps, checkpointed IG).
var teamsOn = false

// teamMinWork is the least product, in multiply-adds, that a team splits:
// below it the hand-over costs more than it saves. Tests lower it. 1 << 20
// (was 1 << 22) lets a team share the steps of H = 128 from 16 lanes:
// measured, IG 50 steps on 1,000 tokens of a 2-layer BiLSTM, H 128, 2
// cores: with memory to spare, one batch of 50 lanes on a team 2.5–3.0 s
// against 32 + 18 lanes on two workers 3.0–4.2 s; at the default budget
// see igPlan.
var teamMinWork = 1 << 20

// teamChunkWork is the work of the chunks of steps that a team's input
// products and IG's sums take at a time where a stopper may end them: the
// 4 Mi multiply-adds of before teamMinWork was lowered (tests that lower
// teamMinWork get smaller chunks).
func teamChunkWork() int { return 4 * teamMinWork }

// teamSpin is how many times an idle helper looks for work before it
// sleeps.
const teamSpin = 1 << 14

// team is the caller (member 0) and n−1 helper goroutines (members 1 …
// n−1). A job is cut into parts; member m runs the parts i with
// i mod n = m, then claims whatever the others have not started: a helper
// that has not woken yet, or has lost its core to another process, leaves
// its parts to the others instead of holding them up, and otherwise each
// member keeps its rows (and the units of a team step) in its own cache
// from one job to the next.
type team struct {
	n       int
	parts   int // teamParts·n, the parts of a product
	prod    teamJob
	task    teamTask      // the current job
	gen     atomic.Uint64 // bumped for each job
	claims  atomic.Uint64 // the job's gen (24 bits) << 40 | its parts << 32 | the parts claimed, a bit each
	done    atomic.Int64  // parts finished
	panics  panicBox      // the first panic of the job's parts
	quit    atomic.Bool
	helpers []*teamHelper
}

// teamMaxParts bounds a job's parts (a bit each in team.claims).
const teamMaxParts = 32

// teamParts is the parts per goroutine of a team's job.
const teamParts = 4

type teamHelper struct {
	wake   chan struct{} // holds a token while the helper may be asleep
	asleep atomic.Bool
}

// teamTask is a job a team cuts into parts: part(i, n) runs the run i of
// n of its output (team.chunk). Parts write disjoint memory, so any
// goroutine may run any part.
type teamTask interface{ part(i, n int) }

// teamJob is one product of mulAddLanes, cut into parts by output rows.
type teamJob struct {
	dst, a, aT, src   []float64
	nz                bool // no element of a is ±0 (mulAddLanes)
	m, k, cols, c0, l int
}

func newTeam(n int) *team {
	n = min(n, teamMaxParts/teamParts)
	t := &team{n: n, parts: teamParts * n}
	for m := range n - 1 {
		h := &teamHelper{wake: make(chan struct{}, 1)}
		t.helpers = append(t.helpers, h)
		go t.loop(h, m+1)
	}
	return t
}

// stop ends the helpers.
func (t *team) stop() {
	if t == nil {
		return
	}
	t.quit.Store(true)
	t.gen.Add(1)
	for _, h := range t.helpers {
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
}

func (t *team) loop(h *teamHelper, m int) {
	var seen uint64 // the generation of newTeam: a job may come before the goroutine starts
	for {
		spins := 0
		for t.gen.Load() == seen {
			if spins++; spins < teamSpin {
				if spins%64 == 0 {
					runtime.Gosched()
				}
				continue
			}
			h.asleep.Store(true)
			if t.gen.Load() == seen {
				<-h.wake
			}
			h.asleep.Store(false)
			spins = 0
		}
		seen = t.gen.Load()
		if t.quit.Load() {
			return
		}
		t.work(m, seen)
	}
}

// work runs member m's parts of job gen, then any part still unclaimed. A
// claim names its job, so that a member late from an earlier job never
// runs a part of the next one; the job of a valid claim stays in place
// until its part is done.
func (t *team) work(m int, gen uint64) {
	v := t.claims.Load()
	if v>>40 != gen&(1<<24-1) {
		return
	}
	n := int(v >> 32 & 0xff)
	for i := m; i < n; i += t.n { // its own, first to last
		if !t.runPart(gen, i, n) {
			return
		}
	}
	for i := n - 1; i >= 0; i-- { // the others', from the last: their owners start at the first
		if i%t.n != m && !t.runPart(gen, i, n) {
			return
		}
	}
}

// runPart runs part i of n of job gen unless another member has claimed
// it; false once the job is over.
func (t *team) runPart(gen uint64, i, n int) bool {
	ok, gone := t.claim(gen, i)
	if ok {
		t.runCaught(i, n)
	}
	return !gone
}

// runCaught runs part i of n, counted done even if it panics: the panic
// is kept for run to raise on member 0's goroutine (panics.go).
func (t *team) runCaught(i, n int) {
	defer t.done.Add(1)
	defer t.panics.catch(nil)
	t.task.part(t.chunk(i, n), n)
}

// chunk is the run of a job's output that part i of n computes: member m's
// own parts (i ≡ m mod t.n) take side-by-side runs, so that each member
// writes one contiguous run of every array (two cores writing interleaved
// runs of one array ran slower than one core writing them all, see
// team_steps.go).
func (t *team) chunk(i, n int) int {
	if n%t.n != 0 {
		return i
	}
	return i%t.n*(n/t.n) + i/t.n
}

// claim claims part i of job gen: ok if this member now has it, gone if
// the job is over (every part was claimed and the next job may have
// begun).
func (t *team) claim(gen uint64, i int) (ok, gone bool) {
	for {
		v := t.claims.Load()
		if v>>40 != gen&(1<<24-1) {
			return false, true
		}
		if v&(1<<i) != 0 {
			return false, false
		}
		if t.claims.CompareAndSwap(v, v|1<<i) {
			return true, false
		}
	}
}

// mulAdd is mulAddLanes on the team.
func (t *team) mulAdd(dst, a, aT []float64, nz bool, m, k, cols, c0 int, src []float64, l int) {
	t.prod = teamJob{dst: dst, a: a, aT: aT, nz: nz, src: src, m: m, k: k, cols: cols, c0: c0, l: l}
	t.run(&t.prod, t.parts)
	t.prod = teamJob{}
}

// run runs task's parts (at most teamMaxParts) on the team and returns
// when all are done.
func (t *team) run(task teamTask, parts int) {
	t.task = task
	t.done.Store(0)
	gen := t.gen.Load() + 1
	t.claims.Store(gen&(1<<24-1)<<40 | uint64(parts)<<32)
	t.gen.Store(gen)
	for _, h := range t.helpers {
		if h.asleep.Load() {
			select {
			case h.wake <- struct{}{}:
			default:
			}
		}
	}
	t.work(0, gen)
	for spins := 0; t.done.Load() != int64(parts); spins++ {
		if spins%64 == 63 {
			runtime.Gosched()
		}
	}
	t.claims.Store(0)
	t.task = nil
	t.panics.rethrow()
}

// part computes part i of the product: the output rows [m·i/n, m·(i+1)/n)
// of n parts, rounded to multiples of 8.
func (j *teamJob) part(i, n int) {
	r0, r1 := j.m*i/n&^7, j.m*(i+1)/n&^7
	if i == n-1 {
		r1 = j.m
	}
	if r0 >= r1 {
		return
	}
	mulAddRowsOf(j.dst, j.a, j.aT, j.nz, j.m, j.k, j.cols, j.c0, j.src, j.l, r0, r1)
}

// mulAddRowsOf is mulAddLanes for the output rows [r0, r1) only, in one
// pass over src: kernel.MulAddRows keeps a tile of dst in registers over
// all k terms, so each output row is loaded and stored once. mulAddLanes'
// blocks of src in the L1 cache load and store dst once per block, which
// one core does at the same speed, but two cores writing halves of one dst
// did not: W_hhᵀ·dz (256 rows, 1,024 terms, 52 lanes) took 300 µs on one
// core, 208 µs split in two halves with blocks and 153 µs without. The
// bits are the same either way: every element takes its terms in order.
func mulAddRowsOf(dst, a, aT []float64, nz bool, m, k, cols, c0 int, src []float64, l, r0, r1 int) {
	if l == 1 {
		kernel.AxpyRows(dst[r0:r1], aT[c0*m+r0:], m, src[:k])
		return
	}
	mulAddRows(nz, dst[r0*l:r1*l], l, src[:k*l], l, a[r0*cols+c0:], cols, k)
}

// mulAdd is mulAddLanes, on r's team when it has one and the product is
// large enough, else over a's sparse terms sp (nil: a is dense) with two
// lanes or more (sparse.go; one lane's AxpyRows over aT stays).
func (r *lanes) mulAdd(dst, a, aT []float64, sp *sparseTerms, m, k, cols, c0 int, src []float64, l int) {
	nz := r.s.nonzero // a is one of the model's weights
	if t := r.team; t != nil && m*k*l >= teamMinWork {
		t.mulAdd(dst, a, aT, nz, m, k, cols, c0, src, l)
		return
	}
	if sp != nil && l > 1 {
		mulAddSparse(dst, sp, 0, m, k, c0, src, l)
		return
	}
	mulAddLanes(dst, a, aT, nz, m, k, cols, c0, src, l)
}

// teamable reports whether batches of l lanes of r's input run their steps
// on a team (team_steps.go): dense weights, no tables, and steps
// large enough to share.
func (st *runnerState) teamable(l int) bool {
	s := st.s
	return !s.sparse() && st.syms == nil && l > 1 && 4*s.h*s.h*l >= teamMinWork
}

// teamCPUs is the most goroutines a team has: the CPUs this process may
// run on (GOMAXPROCS may be set above them; tests raise it to run large
// teams on small machines).
var teamCPUs = runtime.NumCPU()

// lend gives worker 0 of pool a team of n goroutines (at most GOMAXPROCS
// and teamCPUs: a spinning helper without a core of its own would only
// slow the others; measured, IG 50 steps on the 2-core machine with
// GOMAXPROCS=4, a team of 4 against one of 2, four alternating rounds:
// bench_h256 on 200 tokens 133–138 → 121–124 ms, dense-h256 179–184 →
// 156–163 ms)
// when the job has one worker and n > 1, and takes it back with
// lend(pool, 0). With teamsOn (tests) every one-worker job gets one.
func (st *runnerState) lend(pool []*worker, n int) {
	var t *team
	n = min(n, runtime.GOMAXPROCS(0), teamCPUs, teamMaxParts/teamParts)
	if len(pool) == 1 && n > 1 {
		if st.team == nil || st.team.n != n {
			st.team.stop()
			st.team = newTeam(n)
		}
		t = st.team
	}
	wk := pool[0]
	wk.r.team = t
	for _, b := range wk.sib {
		b.team = t
	}
}

package cell

import (
	"runtime"
	"sync/atomic"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// A team runs the products of one batch of lanes on several goroutines,
// each on its own rows of the output: when an input's lanes are one batch
// (IG's 50 steps on one input) and cores are spare, one input still uses
// them all. An output row's value is one fused multiply-add per term in
// order of the terms whoever computes it, so the rows' split changes no
// bit. The helpers spin a little between products (a time step's products
// come microseconds apart) and then sleep until woken.

// teamsOn turns the teams on. They are off: measured on a 2-core machine
// shared with other processes (load 5), IG 50 steps on one 1,000-token
// input of a 1-layer H = 256 model took 1.5–2.5 s on one core and
// 1.8–2.8 s with a team of two (the serial gate steps, and a helper that
// loses its core holding the step up), 0.20 s and 0.25 s on 200 tokens.
// Turn them on where they measure faster; the bits are the same either
// way (the tests run with them on).
var teamsOn = false

// teamMinWork is the least product, in multiply-adds, that a team splits:
// below it the hand-over costs more than it saves.
const teamMinWork = 1 << 22

// teamSpin is how many times an idle helper looks for work before it
// sleeps.
const teamSpin = 1 << 14

// team is the caller and n−1 helper goroutines. A job is cut into
// teamParts·n parts by output rows, which whoever is free claims in turn
// (the caller too): a helper that has not woken yet, or has lost its core
// to another process, leaves its parts to the others instead of holding
// them up.
type team struct {
	n       int
	parts   int // teamParts·n, the parts of every job
	job     teamJob
	gen     atomic.Uint64 // bumped for each job
	next    atomic.Int64  // the next part to claim
	done    atomic.Int64  // parts finished
	quit    atomic.Bool
	helpers []*teamHelper
}

// teamParts is the parts per goroutine of a team's job.
const teamParts = 4

type teamHelper struct {
	wake   chan struct{} // holds a token while the helper may be asleep
	asleep atomic.Bool
}

// teamJob is one product of mulAddLanes, cut into parts by output rows.
type teamJob struct {
	dst, a, aT, src   []float64
	m, k, cols, c0, l int
	parts             int
}

func newTeam(n int) *team {
	t := &team{n: n, parts: teamParts * n}
	t.next.Store(1 << 62) // no job yet
	for range n - 1 {
		h := &teamHelper{wake: make(chan struct{}, 1)}
		t.helpers = append(t.helpers, h)
		go t.loop(h)
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

func (t *team) loop(h *teamHelper) {
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
		t.work()
	}
}

// work runs parts of the current job until none is left unclaimed. A part
// claimed is one of the current job: next only counts below the parts
// once the job is in place.
func (t *team) work() {
	for {
		i := int(t.next.Add(1) - 1)
		if i >= t.parts {
			return
		}
		t.job.run(i)
		t.done.Add(1)
	}
}

// mulAdd is mulAddLanes on the team.
func (t *team) mulAdd(dst, a, aT []float64, m, k, cols, c0 int, src []float64, l int) {
	parts := t.parts
	t.job = teamJob{dst: dst, a: a, aT: aT, src: src, m: m, k: k, cols: cols, c0: c0, l: l, parts: parts}
	t.done.Store(0)
	t.next.Store(0)
	t.gen.Add(1)
	for _, h := range t.helpers {
		if h.asleep.Load() {
			select {
			case h.wake <- struct{}{}:
			default:
			}
		}
	}
	t.work()
	for spins := 0; t.done.Load() != int64(parts); spins++ {
		if spins%64 == 63 {
			runtime.Gosched()
		}
	}
	t.next.Store(1 << 62)
	t.job = teamJob{}
}

// run computes part i of the job: the output rows [m·i/n, m·(i+1)/n) of
// n parts, rounded to multiples of 8.
func (j *teamJob) run(i int) {
	n := j.parts
	r0, r1 := j.m*i/n&^7, j.m*(i+1)/n&^7
	if i == n-1 {
		r1 = j.m
	}
	if r0 >= r1 {
		return
	}
	mulAddRowsOf(j.dst, j.a, j.aT, j.m, j.k, j.cols, j.c0, j.src, j.l, r0, r1)
}

// mulAddRowsOf is mulAddLanes for the output rows [r0, r1) only.
func mulAddRowsOf(dst, a, aT []float64, m, k, cols, c0 int, src []float64, l, r0, r1 int) {
	if l == 1 {
		kernel.AxpyRows(dst[r0:r1], aT[c0*m+r0:], m, src[:k])
		return
	}
	kb := max(8, l1Words/l)
	for j0 := 0; j0 < k; j0 += kb {
		j1 := min(j0+kb, k)
		kernel.MulAddRows(dst[r0*l:r1*l], l, src[j0*l:j1*l], l, a[r0*cols+c0+j0:], cols, j1-j0)
	}
}

// mulAdd is mulAddLanes, on r's team when it has one and the product is
// large enough, else over a's sparse terms sp (nil: a is dense) with two
// lanes or more (stacked_sparse.go; one lane's AxpyRows over aT stays).
func (r *lanes) mulAdd(dst, a, aT []float64, sp *sparseTerms, m, k, cols, c0 int, src []float64, l int) {
	if t := r.team; t != nil && m*k*l >= teamMinWork {
		t.mulAdd(dst, a, aT, m, k, cols, c0, src, l)
		return
	}
	if sp != nil && l > 1 {
		mulAddSparse(dst, sp, 0, m, k, c0, src, l)
		return
	}
	mulAddLanes(dst, a, aT, m, k, cols, c0, src, l)
}

// lend gives worker 0 of pool a team of maxWorkers goroutines (at most
// GOMAXPROCS: a spinning helper without a core of its own would only
// slow the others) when the job has one worker, and takes it back with
// lend(pool, 0).
func (st *runnerState) lend(pool []*worker, maxWorkers int) {
	var t *team
	maxWorkers = min(maxWorkers, runtime.GOMAXPROCS(0))
	if teamsOn && len(pool) == 1 && maxWorkers > 1 {
		if st.team == nil || st.team.n != maxWorkers {
			st.team.stop()
			st.team = newTeam(maxWorkers)
		}
		t = st.team
	}
	wk := pool[0]
	wk.r.team = t
	for _, b := range wk.sib {
		b.team = t
	}
}

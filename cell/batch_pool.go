package cell

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// pool is a Batcher's workers: worker 0 is the calling goroutine, workers
// 1, 2, … are goroutines that wait to be woken for each job. Each worker
// keeps its lane buffers (laneWorker) from job to job. The goroutines hold
// the pool, not the Batcher, so that the Batcher can be collected and the
// goroutines stopped.
type pool struct {
	workers []*laneWorker
	wake    []*waker       // one per goroutine (workers 1, 2, …)
	cur     *job           // the job being run; nil between jobs
	active  atomic.Int32   // goroutines still running the current job
	wg      sync.WaitGroup // the same, to block on once spinning is over
	exited  sync.WaitGroup // goroutines not yet ended
	shut    atomic.Bool    // shutdown has begun
}

// grow makes n workers (starting the goroutines of those beyond the first)
// and returns the first n.
func (p *pool) grow(n int) []*laneWorker {
	for len(p.workers) < n {
		w := &laneWorker{}
		p.workers = append(p.workers, w)
		if len(p.workers) > 1 {
			k := &waker{ch: make(chan struct{}, 1)}
			p.wake = append(p.wake, k)
			p.exited.Add(1)
			go p.serve(w, k)
		}
	}
	return p.workers[:n]
}

// run runs j on its first n workers, the calling goroutine leading
// (job.lead), and returns when all of them are done.
func (p *pool) run(j *job, n int) {
	p.cur = j
	p.active.Store(int32(n - 1))
	p.wg.Add(n - 1)
	for _, k := range p.wake[:n-1] {
		k.start()
	}
	j.lead(p.workers[0])
	if !spinUntil(func() bool { return p.active.Load() == 0 }) {
		p.wg.Wait()
	}
	p.cur = nil
}

// serve is a worker goroutine: one job per wake-up, until shutdown.
func (p *pool) serve(w *laneWorker, k *waker) {
	defer p.exited.Done()
	for k.wait() {
		p.cur.work(w)
		p.active.Add(-1)
		p.wg.Done()
	}
}

// shutdown tells the goroutines to end, once; it does not wait for them.
func (p *pool) shutdown() {
	if p.shut.Swap(true) {
		return
	}
	for _, k := range p.wake {
		close(k.ch)
	}
}

// close ends the goroutines and waits until they have.
func (p *pool) close() {
	p.shutdown()
	p.exited.Wait()
	p.workers, p.wake = nil, nil // their lane buffers go now, not when the Batcher is collected
}

// A waker starts a worker goroutine's jobs. Between jobs the goroutine spins
// for up to spinTime before it parks: on this machine (a virtual one) a
// parked goroutine took 110 µs to start after being woken, and the caller as
// long to resume after the last worker finished, 4% of an IG call of 3 ms on
// 2 threads (sp-counter, T = 256, 1000 steps). Jobs that follow each other,
// as in a loop over inputs, then start at once; the price is up to spinTime
// of a spinning core after the last one.
type waker struct {
	state atomic.Int32 // spinning, parked or ready
	ch    chan struct{}
}

const (
	spinning = iota
	parked
	ready
)

// spinTime is how long a goroutine spins for the next job or the end of
// the current one before it blocks.
const spinTime = 200 * time.Microsecond

// start gives the worker its next job; the one before must be over.
func (k *waker) start() {
	if k.state.Swap(ready) == parked {
		k.ch <- struct{}{}
	}
}

// wait returns when the worker has a job (true) or is shut down (false).
func (k *waker) wait() bool {
	if spinUntil(func() bool { return k.state.Load() == ready }) {
		k.state.Store(spinning)
		return true
	}
	if k.state.CompareAndSwap(spinning, parked) {
		if _, ok := <-k.ch; !ok {
			return false
		}
	}
	k.state.Store(spinning)
	return true
}

// spinUntil polls done for up to spinTime, yielding the processor between
// polls (so that with GOMAXPROCS=1 the other goroutines still run); it
// reports whether done became true in that time.
func spinUntil(done func() bool) bool {
	start := time.Now()
	for i := 0; !done(); i++ {
		if i%64 == 63 && time.Since(start) > spinTime {
			return false
		}
		runtime.Gosched()
	}
	return true
}

package cell

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// panicTask panics on worker on; the other workers wait for every worker
// to arrive (as IG's chunks wait for one another) until the job fails.
type panicTask struct {
	on      int
	mu      sync.Mutex
	cond    *sync.Cond
	arrived int
	err     error
	ran     atomic.Int32
}

func newPanicTask(on int) *panicTask {
	t := &panicTask{on: on}
	t.cond = sync.NewCond(&t.mu)
	return t
}

func (t *panicTask) run(wk *worker) {
	t.ran.Add(1)
	if wk.idx == t.on {
		panic("boom")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.arrived++
	t.cond.Broadcast()
	for t.arrived < 2 && t.err == nil {
		t.cond.Wait()
	}
}

func (t *panicTask) fail(err error) {
	t.mu.Lock()
	if t.err == nil {
		t.err = err
	}
	t.cond.Broadcast()
	t.mu.Unlock()
}

// mustPanicWith runs f and returns the *WorkerPanic it raised.
func mustPanicWith(t *testing.T, f func()) (wp *WorkerPanic) {
	t.Helper()
	defer func() {
		v := recover()
		var ok bool
		if wp, ok = v.(*WorkerPanic); !ok {
			t.Fatalf("recovered %v (%T), want a *WorkerPanic", v, v)
		}
	}()
	f()
	return nil
}

// TestWorkerPanic: a panic on a helper worker's goroutine (or the
// caller's) fails the job, so that the workers waiting for it return, and
// is raised on the caller's goroutine as a *WorkerPanic with the value
// and the helper's stack; the pool then runs the next job, and its
// goroutines end with it.
func TestWorkerPanic(t *testing.T) {
	before := runtime.NumGoroutine()
	st := &runnerState{}
	pool := []*worker{{idx: 0}, {idx: 1}}
	st.pool = pool // stop ends their goroutines
	for _, on := range []int{1, 0, 1} {
		job := newPanicTask(on)
		wp := mustPanicWith(t, func() { st.start(job, pool) })
		if wp.Value != "boom" || len(wp.Stack) == 0 || !errors.Is(job.err, errAborted) || job.ran.Load() != 2 {
			t.Fatalf("panic on worker %d: %+v, job error %v, ran %d", on, wp, job.err, job.ran.Load())
		}
		ok := newPanicTask(-1)
		st.start(ok, pool) // the same goroutines, no panic left over
		if ok.err != nil || ok.arrived != 2 {
			t.Fatalf("the next job: error %v, %d arrived", ok.err, ok.arrived)
		}
	}
	st.stop()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after stop, %d before", n, before)
	}
}

// panicParts panics in its parts with an odd index.
type panicParts struct{ done atomic.Int32 }

func (p *panicParts) part(i, n int) {
	p.done.Add(1)
	if i%2 == 1 {
		panic(i)
	}
}

// TestTeamPanic: a part that panics, on whichever member runs it, still
// counts as done (member 0 does not wait forever) and run raises it on
// member 0's goroutine; the team runs the next job.
func TestTeamPanic(t *testing.T) {
	tm := newTeam(2)
	defer tm.stop()
	for range 20 {
		job := &panicParts{}
		wp := mustPanicWith(t, func() { tm.run(job, tm.parts) })
		if _, ok := wp.Value.(int); !ok || int(job.done.Load()) != tm.parts {
			t.Fatalf("panic %v, %d of %d parts run", wp.Value, job.done.Load(), tm.parts)
		}
		var calm panicParts
		calmJob := &evenParts{&calm}
		tm.run(calmJob, tm.parts)
		if int(calm.done.Load()) != tm.parts {
			t.Fatalf("the next job ran %d of %d parts", calm.done.Load(), tm.parts)
		}
	}
}

// evenParts runs panicParts' count without panicking.
type evenParts struct{ p *panicParts }

func (e *evenParts) part(i, n int) { e.p.done.Add(1) }

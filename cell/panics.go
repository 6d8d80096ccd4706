package cell

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
)

// A panic on a helper goroutine of the batched methods (a worker's, a
// team member's) would end the process: nothing up that goroutine's stack
// can recover it. So the helpers recover it themselves, keep the first
// one, fail the job (so that no other goroutine waits for their part
// forever) and count their part as done; the caller, once every goroutine
// of the job is back, panics with a *WorkerPanic on its own goroutine,
// where its own recover — a server's, per request — sees it. The runner
// stays usable: the next call recomputes every buffer it reads.

// WorkerPanic is the panic value a call raises on the caller's goroutine
// when a goroutine of its job panicked.
type WorkerPanic struct {
	Value any    // what the goroutine panicked with
	Stack []byte // its stack when it did
}

func (p *WorkerPanic) Error() string {
	return fmt.Sprintf("cell: panic in a goroutine of the call: %v\n%s", p.Value, p.Stack)
}

// errAborted fails a job one of whose goroutines panicked.
var errAborted = errors.New("cell: a goroutine of the call panicked")

// panicBox keeps the first panic of a job's goroutines.
type panicBox struct{ p atomic.Pointer[WorkerPanic] }

// catch, deferred, recovers a panic, keeps it if it is the job's first
// and calls onPanic (when not nil).
func (b *panicBox) catch(onPanic func()) {
	v := recover()
	if v == nil {
		return
	}
	wp, ok := v.(*WorkerPanic) // a team's, carried up already
	if !ok {
		wp = &WorkerPanic{Value: v, Stack: debug.Stack()}
	}
	b.p.CompareAndSwap(nil, wp)
	if onPanic != nil {
		onPanic()
	}
}

// rethrow panics with the kept panic, if there is one, and clears it.
func (b *panicBox) rethrow() {
	if p := b.p.Swap(nil); p != nil {
		panic(p)
	}
}

// abort fails t, if it is a job that can fail (whose goroutines may wait
// for one another).
func abort(t task) {
	if f, ok := t.(interface{ fail(error) }); ok {
		f.fail(errAborted)
	}
}

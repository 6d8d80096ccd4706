// Package corpus is the loop that every command over many inputs shares
// (`whitebox attribute`, `whitebox evaluate`, the Beam pipeline's DoFn):
// read the inputs (EachLine bounds a line's length), score them on
// workers that each keep state of their own, write the results in input
// order with a bounded window of inputs in flight, show progress on a
// terminal (Progress) and stop when the context ends (Ctrl-C).
//
//	err := corpus.Run(ctx, corpus.Options{Workers: 4}, read,
//		func(int) (func(context.Context, string) result, error) { // one per worker
//			sc := scorer.Clone()
//			return func(ctx context.Context, s string) result { … }, nil
//		},
//		func(s string, r result) error { … }) // in input order
//
// The results, and so the bytes written, do not depend on the number of
// workers as long as each input's score depends only on the input.
//
// Workers that have nothing left to do lend their cores to the inputs
// still being scored (Lent): one input alone, or the last inputs of a
// corpus, run on every core.
package corpus

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Options say how Run works; the zero value runs GOMAXPROCS workers.
type Options struct {
	// Workers is the number of goroutines that score (0: GOMAXPROCS).
	Workers int
	// Window is the most inputs read and not yet written (0: twice
	// Workers): with the largest input, it bounds the memory whatever the
	// length of the corpus. Fewer than Workers leaves workers idle.
	Window int
	// Progress, if not nil, counts the inputs scored.
	Progress *Progress
}

// Run reads inputs with read, scores each with one of the workers'
// functions and calls write with each input and its result, in input
// order, on the calling goroutine.
//
// newWorker(i) makes worker i's scoring function (i from 0), before
// anything is read, so that each worker has state of its own (an
// Explainer, buffers); an error from it is Run's. A scoring function
// reports an input's failure in its result: the others are still scored.
// read runs on a goroutine of its own and calls yield with each input, in
// order, until yield returns false.
//
// Run returns ctx's error as soon as ctx ends (what was written stays
// written; nothing more is); else write's first error, which ends the
// run; else read's error, once everything read was written. On an error it
// returns once the workers, which get a context that ends with it, have
// returned, but without waiting for a read that is blocked (a terminal's
// standard input): yield then returns false.
func Run[In, Out any](ctx context.Context, o Options,
	read func(yield func(In) bool) error,
	newWorker func(i int) (func(context.Context, In) Out, error),
	write func(In, Out) error) error {
	workers, window := o.Workers, o.Window
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if window == 0 {
		window = 2 * workers
	}
	if workers < 0 || window < 0 {
		return fmt.Errorf("corpus: %d workers and a window of %d inputs (want ≥ 0)", o.Workers, o.Window)
	}
	score := make([]func(context.Context, In) Out, workers)
	for i := range score {
		f, err := newWorker(i)
		if err != nil {
			return err
		}
		score[i] = f
	}

	// inner ends the reader and the workers when Run returns.
	inner, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()

	slots := make(chan struct{}, window) // one per input in flight
	order := make(chan *slot[In, Out], window)
	todo := make(chan *slot[In, Out], window)
	readErr := make(chan error, 1)
	q := &queue[In, Out]{todo: todo, read: make(chan struct{}), workers: workers}
	go func() {
		defer close(order)
		defer close(todo)
		defer close(q.read)
		readErr <- read(func(in In) bool {
			if inner.Err() != nil {
				return false
			}
			select {
			case slots <- struct{}{}:
			case <-inner.Done():
				return false
			}
			s := &slot[In, Out]{in: in, done: make(chan struct{})}
			order <- s // neither blocks: each holds at most window slots
			q.put(s)
			return true
		})
	}()
	for _, f := range score {
		wg.Go(func() { work(inner, f, q, o.Progress) })
	}

	for {
		var s *slot[In, Out]
		var ok bool
		select {
		case s, ok = <-order:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !ok {
			break
		}
		select {
		case <-s.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := write(s.in, s.out); err != nil {
			return err
		}
		<-slots
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return <-readErr
}

// A slot is one input in flight: scored when done is closed.
type slot[In, Out any] struct {
	in   In
	out  Out
	done chan struct{}
}

// queue is the inputs waiting for a worker, and what decides the cores
// an input may use.
type queue[In, Out any] struct {
	todo    chan *slot[In, Out]
	read    chan struct{} // closed once read has returned: nothing more comes
	workers int

	mu     sync.Mutex
	sent   int // inputs put on todo
	scored int // inputs scored
	lent   int // workers lending their cores now
}

// put puts s on todo.
func (q *queue[In, Out]) put(s *slot[In, Out]) {
	q.mu.Lock()
	q.sent++
	q.mu.Unlock()
	q.todo <- s
}

// readWait is how long an input that finds nothing queued, with workers
// idle, waits to learn whether read is done: a file's last line is read a
// few microseconds before its end, and with the end seen the line gets the
// idle workers' cores; a terminal's line waits this long and runs on one.
const readWait = time.Millisecond

// lend returns how many workers lend their cores to the input a worker
// has just taken: those idle for good, read having returned with no input
// waiting, else none. No input that comes later finds the cores taken.
func (q *queue[In, Out]) lend() int {
	if q.workers == 1 || len(q.todo) > 0 {
		return 0
	}
	select {
	case <-q.read:
	default:
		q.mu.Lock()
		idle := q.idle()
		q.mu.Unlock()
		if idle <= 0 {
			return 0
		}
		t := time.NewTimer(readWait)
		defer t.Stop()
		select {
		case <-q.read:
		case <-t.C:
			return 0
		}
	}
	if len(q.todo) > 0 { // read is done: todo only empties now
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	n := max(0, q.idle())
	q.lent += n
	return n
}

// idle is the workers with no input and not lent (q.mu held): every input
// sent and not scored has its worker, once read is done and todo empty;
// before, an input on todo counts as a busy worker.
func (q *queue[In, Out]) idle() int { return q.workers - (q.sent - q.scored) - q.lent }

// done records an input scored with n workers' cores lent to it.
func (q *queue[In, Out]) done(n int) {
	q.mu.Lock()
	q.scored++
	q.lent -= n
	q.mu.Unlock()
}

type lentKey struct{}

// Lent returns how many of Run's workers, with nothing left to do, lend
// their cores to the input that a scoring function is given ctx for
// (0 outside Run): a scorer may run on the cores of 1 + Lent(ctx)
// workers. An input taken while others wait, or before read has returned
// (it waits readWait for that where workers idle), gets none; one alone,
// or one of the last of a corpus, gets the workers idle when it starts.
// Results must not depend on it.
func Lent(ctx context.Context) int {
	n, _ := ctx.Value(lentKey{}).(int)
	return n
}

// work scores the inputs of q with f until q.todo closes or ctx ends.
func work[In, Out any](ctx context.Context, f func(context.Context, In) Out, q *queue[In, Out], p *Progress) {
	for {
		select {
		case s, ok := <-q.todo:
			if !ok {
				return
			}
			if ctx.Err() != nil {
				return
			}
			sctx := ctx
			n := q.lend()
			if n > 0 {
				sctx = context.WithValue(ctx, lentKey{}, n)
			}
			s.out = f(sctx, s.in)
			q.done(n)
			p.ItemDone()
			close(s.done)
		case <-ctx.Done():
			return
		}
	}
}

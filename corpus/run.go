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
package corpus

import (
	"context"
	"fmt"
	"runtime"
	"sync"
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
	go func() {
		defer close(order)
		defer close(todo)
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
			todo <- s
			return true
		})
	}()
	for _, f := range score {
		wg.Go(func() { work(inner, f, todo, o.Progress) })
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

// work scores the inputs of todo with f until todo closes or ctx ends.
func work[In, Out any](ctx context.Context, f func(context.Context, In) Out, todo <-chan *slot[In, Out], p *Progress) {
	for {
		select {
		case s, ok := <-todo:
			if !ok {
				return
			}
			if ctx.Err() != nil {
				return
			}
			s.out = f(ctx, s.in)
			p.ItemDone()
			close(s.done)
		case <-ctx.Done():
			return
		}
	}
}

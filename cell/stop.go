package cell

import (
	"context"
	"fmt"
)

// Cancellation. A pass looks at its context every stopWork units of work
// (a multiply-add, or an element of a gate step), counted by each loop at
// the cost of the step it is about to run: a few hundred microseconds of
// one core between looks, whatever the input's length, the model's width,
// its layers or the lanes of a batch, so that a method returns soon after
// its context is done (issue 43: within 10 ms of the cancel). A look is
// ctx.Err(), an atomic load for the contexts of package context: no
// goroutine, timer or callback is registered, so a context with a
// deadline costs no allocation (ctx.Done(), which allocates a cancelable
// context's channel, is never called).
//
// A unit that is not cut is one step of one cell on the lanes of a batch
// (the 64 lanes of the H = 256 model: a few milliseconds on one core) or
// a chunk of a product over the sequence (chunkSteps).

// stopWork is the work between two looks at the context: 2¹⁸
// multiply-adds, about 0.1 ms of one core.
const stopWork = 1 << 18

// A stopper ends a long pass early once its context is done. A nil
// stopper never stops (the methods without a context). It belongs to one
// goroutine; a runner keeps its stoppers from call to call (start), so a
// call allocates none.
type stopper struct {
	ctx  context.Context
	left int // work until the next look
	done bool
}

// start readies s for ctx and returns it, or nil for a nil ctx (never
// done). Its first spend looks at the context.
func (s *stopper) start(ctx context.Context) *stopper {
	*s = stopper{ctx: ctx}
	if ctx == nil {
		return nil
	}
	return s
}

// end ends the pass start began: the stopper holds no context.
func (s *stopper) end() { *s = stopper{} }

// spend reports whether the pass should end before it does work units of
// work: it looks at the context once stopWork units have gone by since
// its last look, and keeps saying so once it has.
func (s *stopper) spend(work int) bool {
	if s == nil {
		return false
	}
	if s.done {
		return true
	}
	s.left -= work
	if s.left > 0 {
		return false
	}
	s.left = stopWork
	s.done = s.ctx.Err() != nil
	return s.done
}

// stopped reports whether s has ended its pass (without a look).
func (s *stopper) stopped() bool { return s != nil && s.done }

// err is the error of a stopped pass, or nil.
func (s *stopper) err() error {
	if s == nil || !s.done {
		return nil
	}
	return fmt.Errorf("cell: %w", s.ctx.Err())
}

// chunkSteps is the steps of a product over a sequence (W_ih·x_t of
// every step, IG's W_ihᵀ·sums) that run between two looks at a stopper,
// each step costing work: about 4·stopWork of work, in a multiple of
// block steps (the blocks the product runs in), at least one.
func chunkSteps(work, block int) int {
	n := 4 * stopWork / max(work, 1)
	return max(block, (n+block-1)/block*block)
}

// stepWork is the work of one time step of cell ci of s on l lanes,
// forward or backward: the products with the layer's input and with h
// (4H rows each), and the gate step.
func (s *Model) stepWork(ci, l int) int { return 4 * s.h * (s.cells[ci].in + s.h + 8) * l }

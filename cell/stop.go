package cell

import (
	"context"
	"fmt"
)

// stopEvery is how many time steps a single forward, backward or LRP pass
// runs between looks at its context: a few hundred steps take well under
// a millisecond on any model the engine is sized for.
const stopEvery = 256

// A stopper ends a long single pass early once its context is done. A nil
// stopper never stops (the methods without a context).
type stopper struct {
	ctx  context.Context
	done bool
}

// newStopper returns a stopper for ctx, or nil when ctx can never be done.
func newStopper(ctx context.Context) *stopper {
	if ctx == nil || ctx.Done() == nil {
		return nil
	}
	return &stopper{ctx: ctx}
}

// at reports whether the pass should end at its i-th step: it looks at the
// context every stopEvery steps, and keeps saying so once it has.
func (s *stopper) at(i int) bool {
	if s == nil {
		return false
	}
	if !s.done && i%stopEvery == stopEvery-1 {
		s.done = s.ctx.Err() != nil
	}
	return s.done
}

// err is the error of a stopped pass, or nil.
func (s *stopper) err() error {
	if s == nil || !s.done {
		return nil
	}
	return fmt.Errorf("cell: %w", s.ctx.Err())
}

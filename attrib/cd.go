package attrib

import (
	"context"
	"fmt"

	"github.com/whitebox-lstm/whitebox/cell"
)

// Contextual decomposition (Murdoch, Liu and Yu 2018) splits the LSTM's
// states into the part due to a span of tokens and the rest, step by step,
// exactly as the authors' released CD() does (cell/cd.go has the
// rules and conventions). A token's score R_t is the relevant part of the
// class logit for the one-token span [t, t], W_y[c]·β_T, without the
// decoder's bias; Options.Span also scores a longer span
// (Result.SpanScore). There are no per-feature scores: Result.Features is
// nil, as for Occlusion on dense input.
//
// It is defined for one-layer, one-direction LSTMs whose last state feeds
// one Linear layer: every Network (the white-box networks run as
// their one-hot rows made dense) and such
// models. A stacked or bidirectional model, a mean or max head or a
// classifier with a hidden layer is refused with an error naming which:
// the authors define no decomposition for them. CD takes no baseline
// (Options.Baseline is refused) and costs T(T+1)/2 LSTM steps for T
// tokens (the steps before a token are shared by the spans after it).

// Span is the token positions Start … Stop, both included, counted from 0
// (the authors' CD(start, stop)).
type Span struct {
	Start, Stop int
}

// String returns "start:stop", the form of `whitebox attribute -span`.
func (s Span) String() string { return fmt.Sprintf("%d:%d", s.Start, s.Stop) }

// cdEngine is an Explainer's contextual decomposition: the model in its
// form and the runner's buffers.
type cdEngine struct {
	s          *cell.Model
	r          *cell.CDRunner
	dense      []float64 // a one-hot input as dense rows
	rel, irrel []float64 // a span's parts, every class
}

// cdEngine returns e's engine, made on first use.
func (e *Explainer) cdEngine() (*cdEngine, error) {
	if e.cd != nil {
		return e.cd, nil
	}
	s := e.runner.Model()
	r, err := cell.NewCDRunner(s)
	if err != nil {
		return nil, &UnsupportedError{Model: fmt.Sprintf("%T", e.model), Method: ContextualDecomposition, Reason: err.Error(), Err: err}
	}
	c := s.Classes()
	e.cd = &cdEngine{s: s, r: r, rel: make([]float64, c), irrel: make([]float64, c)}
	return e.cd, nil
}

// cdBytes is the memory CD keeps for an input of steps steps: the
// runner's, and a one-hot input as dense rows (0 when the model is one
// CD refuses, which the call then reports).
func (e *Explainer) cdBytes(steps int, oneHot bool) int64 {
	cd, err := e.cdEngine()
	if err != nil {
		return 0
	}
	n := cd.s.CDBytes(steps)
	if oneHot {
		n += 8 * int64(max(steps, 0)) * int64(e.model.Input())
	}
	return n
}

// contextualDecomposition is contextual decomposition's scores of x (and
// of opt.Span).
func (e *Explainer) contextualDecomposition(ctx context.Context, x cell.Input, opt Options, res *Result) error {
	cd, err := e.cdEngine()
	if err != nil {
		return err
	}
	steps := x.Len()
	if sp := opt.Span; sp != nil && (sp.Start < 0 || sp.Stop < sp.Start || sp.Stop >= steps) {
		return optionError("Span", *sp, "span %v is not within the input's %d tokens (0 ≤ start ≤ stop ≤ %d)", *sp, steps, steps-1)
	}
	e.y = grow(e.y, e.model.Classes())
	if err := e.logits(x, e.y); err != nil {
		return fmt.Errorf("attrib: %w", err)
	}
	res.Scores = grow(res.Scores, steps)
	if err := e.begin(ContextualDecomposition, e.y, opt, res, nil); err != nil {
		return err
	}
	in := x
	if x.IsOneHot() {
		if cd.dense, err = x.AppendDense(cd.dense[:0], e.model.Input()); err != nil {
			return fmt.Errorf("attrib: %w", err)
		}
		in = cell.Dense(cd.dense, steps)
	}
	if err := cd.r.Tokens(ctx, in, res.Class.k, res.Scores); err != nil {
		return fmt.Errorf("attrib: %w", err)
	}
	if sp := opt.Span; sp != nil {
		if err := cd.r.Span(ctx, in, sp.Start, sp.Stop, cd.rel, cd.irrel); err != nil {
			return fmt.Errorf("attrib: %w", err)
		}
		res.SpanScore = cd.rel[res.Class.k]
	}
	return nil
}

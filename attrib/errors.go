package attrib

import (
	"errors"
	"fmt"
	"math"

	"github.com/whitebox-lstm/whitebox/cell"
)

// The errors of package attrib. Every error a call returns is one of
// these (or wraps one), so that a service tells a bad request from a
// refusal and from its own failure with errors.Is and errors.As:
//
//   - ErrEmptyInput: an input of no time steps (the same value as
//     cell.ErrEmptyInput and whitebox.ErrEmptyInput), wrapped in an
//     *InputError.
//   - *InputError: an input the model cannot read, with the position
//     (time step) and feature it names, or −1: a symbol out of range, a
//     value that is not finite, a length its data does not match.
//   - *OptionError: an Options field out of its range (Steps, Tolerance,
//     Epsilon, …), a relevance class the model does not have, a Span
//     outside the input, a Baseline row of the wrong width.
//   - *UnsupportedError (errors.Is(err, ErrUnsupported)): what this model
//     or method does not do: a Model type the engine does not run (nil
//     included), a Baseline with Saliency, G×I, LRP or contextual
//     decomposition, a Baseline on one-hot input, LRP's bias factor under
//     the rule cell.LRPHao, contextual decomposition on a model it is not defined for.
//   - *BudgetError (cell.BudgetError): a call that needs more memory than
//     Options.Budget, refused before it is allocated.
//   - *NonFiniteError: a result that is not finite (finite.go).
//   - context.Canceled, context.DeadlineExceeded: a call whose context
//     ended (errors.Is(err, context.Canceled)).
//
// Errors of the engine's own (package cell) are wrapped as they are.

// ErrEmptyInput is the error of an input with no time steps, the same
// value as cell.ErrEmptyInput and whitebox.ErrEmptyInput:
// errors.Is(err, attrib.ErrEmptyInput) holds for every empty input,
// whichever package refused it.
var ErrEmptyInput = cell.ErrEmptyInput

// ErrUnsupported is what every *UnsupportedError is (errors.Is).
var ErrUnsupported = errors.New("attrib: unsupported")

// BudgetError is the error of a call that needs more memory than
// Options.Budget allows (cell.BudgetError: Budget, Need, What). Every
// refusal for memory wraps one: errors.As(err, new(*attrib.BudgetError)).
type BudgetError = cell.BudgetError

// InputError is the error of an input the model cannot read. Err is the
// cause: ErrEmptyInput for an input of no time steps, else the engine's
// words (cell.Input.Check). Callers find it with errors.As.
type InputError struct {
	// Pos is the time step (token, from 0) the error is about, −1 if it
	// is about no one step (an empty input, a length its data does not
	// match, a scale that is not finite).
	Pos int
	// Feature is the input feature (column) the error is about, −1 if
	// none: a dense value that is not finite has one, a one-hot symbol
	// out of range has none (the symbol is the feature it names).
	Feature int
	Err     error
}

func (e *InputError) Error() string { return "attrib: " + e.Err.Error() }

// Unwrap returns Err: errors.Is(err, ErrEmptyInput) holds for an empty
// input.
func (e *InputError) Unwrap() error { return e.Err }

// OptionError is the error of an Options field out of its range, or of a
// value the call cannot take with this model or input (a class the model
// does not have, a Span outside the input, a Baseline row of the wrong
// width). Callers find it with errors.As.
type OptionError struct {
	// Field is the Options field: "Steps", "Tolerance", "MaxAutoSteps",
	// "Epsilon", "LRPBias", "Class", "Span", "Baseline", "Budget",
	// "Workers", or "Method" for a method that does not exist.
	Field string
	// Value is the field's value (the element that is wrong, for a
	// Baseline value that is not finite).
	Value any
	// Reason says what is wrong, in words.
	Reason string
}

func (e *OptionError) Error() string { return "attrib: " + e.Reason }

// UnsupportedError is the error of what this model or this method does
// not do: errors.Is(err, ErrUnsupported) holds for every one. Callers
// find it with errors.As for its fields.
type UnsupportedError struct {
	// Model is the model's type (%T: "*cell.Model", "*cell.Model",
	// "<nil>", …).
	Model string
	// Method is the method asked for, −1 when the model itself is refused
	// (NewExplainer).
	Method Method
	// Reason says what is not supported, in words.
	Reason string
	// Err, if not nil, is the engine's refusal (Reason is its text).
	Err error
}

func (e *UnsupportedError) Error() string { return "attrib: " + e.Reason }

// Is reports whether target is ErrUnsupported.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// Unwrap returns Err.
func (e *UnsupportedError) Unwrap() error { return e.Err }

func optionError(field string, value any, format string, args ...any) error {
	return &OptionError{Field: field, Value: value, Reason: fmt.Sprintf(format, args...)}
}

func unsupported(model any, m Method, format string, args ...any) error {
	return &UnsupportedError{Model: fmt.Sprintf("%T", model), Method: m, Reason: fmt.Sprintf(format, args...)}
}

// checkInput is x.Check(d) as an *InputError that names the position
// (and feature) of the first fault, found again only when there is one.
func checkInput(x cell.Input, d int) error {
	err := x.Check(d)
	if err == nil {
		return nil
	}
	pos, feature := -1, -1
	switch {
	case x.Len() < 1 || d < 1 || math.IsNaN(x.Scale()) || math.IsInf(x.Scale(), 0):
	case x.IsOneHot():
		if s := x.Symbols(); len(s) == x.Len() {
			for t, v := range s {
				if v < -1 || v >= d {
					pos = t
					break
				}
			}
		}
	default:
		if v := x.DenseValues(); len(v)%d == 0 && len(v)/d == x.Len() {
			for k, f := range v {
				if math.IsNaN(f) || math.IsInf(f, 0) {
					pos, feature = k/d, k%d
					break
				}
			}
		}
	}
	return &InputError{Pos: pos, Feature: feature, Err: err}
}

// emptyInput is the *InputError of an input of no time steps.
func emptyInput() error { return &InputError{Pos: -1, Feature: -1, Err: ErrEmptyInput} }

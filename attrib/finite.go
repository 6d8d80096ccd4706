package attrib

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/whitebox-lstm/whitebox/cell"
)

// Finite weights do not make finite results: weights of 1.7e308 overflow
// a logit to +Inf, and the scores, the span score and the delta that
// follow from it are ±Inf or NaN. A record of them says nothing (JSON
// writes NaN as null), so Attribute and AttributeAll end such a call with
// a *NonFiniteError instead, which names what is not finite and where.

// NonFiniteError is the error of an attribution whose result is not
// finite: a logit, a token score, the span score or the delta (IG's
// completeness gap, DeepLIFT's summation-to-delta residual) is ±Inf or
// NaN. The logits are checked first: a logit that is not finite is the
// cause of the rest. Callers find it with errors.As.
type NonFiniteError struct {
	Method Method
	// What is not finite: "logit", "score", "span score" or "delta".
	What string
	// Class is the logit's class, or the relevance class of the score,
	// span score or delta.
	Class int
	// ClassName, if not "", names the class in the message instead of its
	// index (package score sets the -classes name).
	ClassName string
	// Position is the token of a score (from 0); −1 for the others.
	Position int
	Value    float64 // the value: ±Inf or NaN
	// HeadFinite, for a logit, reports whether the classifier's input —
	// the LSTM's output after the head — was finite on this input: true
	// puts the overflow in the classifier, false in the LSTM or its input.
	HeadFinite bool
}

func (e *NonFiniteError) Error() string {
	class := "class " + strconv.Itoa(e.Class)
	if e.ClassName != "" {
		class = "class " + strconv.Quote(e.ClassName)
	}
	switch e.What {
	case "logit":
		if e.HeadFinite {
			return fmt.Sprintf("attrib: the logit of %s is %v: the classifier overflows float64 (its input, the LSTM's output after the head, is finite); no %v scores can be computed", class, e.Value, e.Method)
		}
		return fmt.Sprintf("attrib: the logit of %s is %v: the LSTM's output after the head, the classifier's input, is not finite already (the LSTM or its input overflows float64); no %v scores can be computed", class, e.Value, e.Method)
	case "score":
		return fmt.Sprintf("attrib: the scores of %v for %s are not finite: %v at position %d", e.Method, class, e.Value, e.Position)
	}
	return fmt.Sprintf("attrib: the %s of %v for %s is %v, not finite", e.What, e.Method, class, e.Value)
}

// checkFinite sets *err, if nil, to a *NonFiniteError for the first value
// of res (method m's result on x) that is not finite; x is run again
// through the LSTM only when a logit is not finite, to say where it
// overflowed. An error of LRP's, which refuses relevances that are not
// finite in words of its denominators, becomes a *NonFiniteError too when
// the logits overflowed first.
func (e *Explainer) checkFinite(err *error, m Method, x cell.Input, res *Result) {
	switch {
	case *err != nil:
		e.checkFiniteError(err, m, x)
	case res != nil:
		if nf := e.nonFiniteLogit(m, x, res.Logits); nf != nil {
			*err = nf
		} else if nf := nonFiniteResult(m, res); nf != nil {
			*err = nf
		}
	}
}

// checkFiniteAll is checkFinite for every class's result.
func (e *Explainer) checkFiniteAll(err *error, m Method, x cell.Input, res *MultiResult) {
	switch {
	case *err != nil:
		e.checkFiniteError(err, m, x)
	case res != nil && len(res.Results) > 0:
		if nf := e.nonFiniteLogit(m, x, res.Results[0].Logits); nf != nil { // the logits of every class
			*err = nf
			return
		}
		for k := range res.Results {
			if nf := nonFiniteResult(m, &res.Results[k]); nf != nil {
				*err = nf
				return
			}
		}
	}
}

// checkFiniteError replaces an error of a result that is not finite
// (cell.ErrNotFinite) by the logit's that caused it, if one did: the
// logits of x are computed again, on this error path only.
func (e *Explainer) checkFiniteError(err *error, m Method, x cell.Input) {
	if !errors.Is(*err, cell.ErrNotFinite) {
		return
	}
	y := make([]float64, e.model.Classes())
	if e.logits(x, y) != nil {
		return
	}
	if nf := e.nonFiniteLogit(m, x, y); nf != nil {
		*err = nf
	}
}

// nonFiniteLogit returns the error of the first of the logits y that is
// not finite, or nil.
func (e *Explainer) nonFiniteLogit(m Method, x cell.Input, y []float64) *NonFiniteError {
	for k, v := range y {
		if !isFinite(v) {
			return &NonFiniteError{Method: m, What: "logit", Class: k, Position: -1, Value: v, HeadFinite: e.headFinite(x)}
		}
	}
	return nil
}

// nonFiniteResult returns the error of res's first score, span score or
// delta that is not finite, or nil.
func nonFiniteResult(m Method, res *Result) *NonFiniteError {
	for t, s := range res.Scores {
		if !isFinite(s) {
			return &NonFiniteError{Method: m, What: "score", Class: res.Class.k, Position: t, Value: s}
		}
	}
	for _, v := range []struct {
		what string
		v    float64
	}{{"span score", res.SpanScore}, {"delta", res.Delta}} {
		if !isFinite(v.v) {
			return &NonFiniteError{Method: m, What: v.what, Class: res.Class.k, Position: -1, Value: v.v}
		}
	}
	return nil
}

// headFinite reports whether the classifier's input on x, the LSTM's
// output after the head, is finite. It runs x through the model with its
// classifier replaced by one logit, the sum of that input: the LSTM's
// outputs lie in [−1, 1] when finite, so the sum is finite exactly when
// they all are. (false too if the model cannot be run again.)
func (e *Explainer) headFinite(x cell.Input) bool {
	p := e.runner.Model().Params()
	n := p.Hidden
	if p.Bidirectional {
		n *= 2
	}
	p.Classes, p.Wy, p.By = 1, make([]float64, n), nil
	p.Act, p.Units, p.W1, p.B1 = cell.ActNone, 0, nil, nil
	for i := range p.Wy {
		p.Wy[i] = 1
	}
	s, err := cell.NewModel(p)
	if err != nil {
		return false
	}
	r, err := cell.NewRunner(s)
	if err != nil {
		return false
	}
	defer r.Close()
	var y [1]float64
	return r.Logits(x, y[:]) == nil && isFinite(y[0])
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

package onnx

import (
	"fmt"
	"math"

	"github.com/whitebox-lstm/whitebox/cell"
)

// CheckTolerance is the largest relative difference Check accepts between
// the graph's logits (this package's interpreter) and the engine's, both
// float64.
const CheckTolerance = 1e-9

// Check evaluates the graph on the probes (ProbeLengths, deterministic
// ids) and compares its logits with net's, the model built from r. It
// returns the largest relative difference seen; a difference above
// CheckTolerance is an error naming the first node whose output differs
// from the engine's: an LSTM node (its h_n against the engine's layers up
// to it), the head's node, or the classifier.
func (r *Recognized) Check(net *cell.Model) (float64, error) {
	run, err := cell.NewRunner(net)
	if err != nil {
		return 0, err
	}
	defer run.Close()
	worst := 0.0
	for k, t := range r.ProbeLengths() {
		ids, feats := r.probeInput(k+100, t)
		env, err := r.prog.Run(r.input(ids, feats), nil)
		if err != nil {
			return 0, err
		}
		x := cell.Dense(feats, t)
		y, err := run.Forward(x)
		if err != nil {
			return 0, err
		}
		d := relDiff(r.prog.Output(env).F, y)
		worst = max(worst, d)
		if d > CheckTolerance {
			return worst, fmt.Errorf("the graph and the model read from it differ on ids %v (features %.3g…; relative difference %.3g of the logits): %v", ids, feats[:min(3, len(feats))], d, r.diagnose(env, x, net))
		}
	}
	return worst, nil
}

// relDiff is the largest |a−b| relative to b's largest magnitude (or 1);
// infinite when the lengths differ.
func relDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	scale, d := 1.0, 0.0
	for _, v := range b {
		scale = max(scale, math.Abs(v))
	}
	for i := range a {
		if math.IsNaN(a[i]) || math.IsNaN(b[i]) {
			return math.Inf(1)
		}
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d / scale
}

// diagnose names the first node whose value differs from the engine's:
// each LSTM node's h_n against a model of the layers up to it with an
// identity classifier, then the head against the whole model's.
func (r *Recognized) diagnose(env *Env, x cell.Input, net *cell.Model) string {
	p := net.Params()
	h, dirs := p.Hidden, dirsOf(p.Bidirectional)
	eye := make([]float64, h*dirs*h*dirs)
	for i := range h * dirs {
		eye[i*h*dirs+i] = 1
	}
	sub := func(layers int, head cell.Head) ([]float64, error) {
		q := cell.Params{Input: p.Input, Hidden: h, Layers: layers, Bidirectional: p.Bidirectional, Classes: h * dirs,
			Cells: p.Cells[:layers*dirs], Wy: eye, Head: head, Kind: p.Kind}
		if head == cell.HeadAttention {
			q.Attention = p.Attention
		}
		s, err := cell.NewModel(q)
		if err != nil {
			return nil, err
		}
		run, err := cell.NewRunner(s)
		if err != nil {
			return nil, err
		}
		defer run.Close()
		return run.Forward(x)
	}
	for k, n := range r.lstms {
		if len(n.Outputs) < 2 || env.Values[n.Outputs[1]] == nil {
			continue
		}
		got, err := sub(k+1, cell.HeadHN)
		if err != nil {
			return err.Error()
		}
		yh := env.Values[n.Outputs[1]].F // [dirs, 1, H] or [1, dirs, H]: the same order
		if d := relDiff(yh, got); d > CheckTolerance {
			return fmt.Sprintf("the first node that differs is %s (layer %d: h_n differs by %.3g relative)", Describe(n), k, d)
		}
	}
	if v := env.Values[r.vName]; v != nil {
		got, err := sub(p.Layers, p.Head)
		if err == nil && relDiff(v.F, got) > CheckTolerance {
			return fmt.Sprintf("the first node that differs is node %q, the head (%v)", r.HeadNode, p.Head)
		}
	}
	return fmt.Sprintf("the first node that differs is the classifier %q", r.Linears)
}

// CheckInput evaluates the graph on one input at the input's own length —
// its token ids, or for a dense model its T×E feature rows x — and compares
// the graph's logits with logits, net's for the same input (net: the model
// built from r). It returns the relative difference.
//
// Recognize and Check see a few short probes only, so a graph whose
// behaviour depends on the length (a truncation x[:, :512], a pooled window
// o[:, :8], a state built from the length) would otherwise be attributed as
// another model in silence: checking every attributed input at its own
// length leaves no length out. A graph exported with a fixed sequence
// length is refused at any other (as onnxruntime refuses it).
//
// maxValues bounds the float64s the evaluation may allocate, its share of
// the caller's memory budget (ValuesPerToken estimates it); an input that
// needs more is refused, before the allocation, with an *EvalBudgetError.
func (r *Recognized) CheckInput(net *cell.Model, ids []int, x []float64, logits []float64, maxValues int64) (float64, error) {
	t := len(ids)
	if r.Dense {
		t = len(x) / max(1, r.Params.Input)
		if t*r.Params.Input != len(x) {
			return 0, fmt.Errorf("%d features are not rows of %d", len(x), r.Params.Input)
		}
	}
	if err := r.CheckLength(t); err != nil {
		return 0, err
	}
	if t == 0 {
		return 0, fmt.Errorf("an empty input")
	}
	env, err := r.runAt(r.input(ids, x), t, maxValues)
	if env != nil && env.elements > env.maxElements {
		return 0, &EvalBudgetError{Tokens: t, Values: env.elements, Limit: maxValues}
	}
	if err != nil {
		return 0, fmt.Errorf("evaluating the graph on this input (%d tokens): %w", t, err)
	}
	d := relDiff(r.prog.Output(env).F, logits)
	if d > CheckTolerance {
		if !r.Dense {
			x = make([]float64, 0, t*r.Params.Input)
			for _, id := range ids {
				x = append(x, r.Embedding[id*r.Params.Input:(id+1)*r.Params.Input]...)
			}
		}
		return d, &LengthError{Tokens: t, Difference: d, Probes: r.ProbeLengths(), Node: r.diagnose(env, cell.Dense(x, t), net)}
	}
	return d, nil
}

// CheckLength refuses a length other than the graph's fixed one.
func (r *Recognized) CheckLength(t int) error {
	if r.SeqLen > 0 && t != r.SeqLen {
		return fmt.Errorf("the graph's input has a fixed sequence length of %d; this input has %d tokens (export with dynamic_axes for other lengths)", r.SeqLen, t)
	}
	return nil
}

// runAt evaluates the graph on in, t tokens long, allocating at most
// maxValues float64s (and integers) and doing at most a fixed number of
// multiply-adds per weight and token: a bound that a real export meets
// (its LSTMs do one multiply-add per weight and token) and a hostile graph
// cannot stretch.
func (r *Recognized) runAt(in *Tensor, t int, maxValues int64) (*Env, error) {
	q := *r.prog
	weights := r.prog.maxElements - evalElements
	q.maxElements = maxValues
	q.maxMACs = evalMACs + evalMACsPerInit*weights*int64(t+1)
	return q.Run(in, nil)
}

// ValuesPerToken is how many values an evaluation of the graph allocates
// per token (measured once, between probes of 8 and 16 tokens, after
// Recognize), so that a caller can count CheckInput in its budget before
// reading an input: about ValuesPerToken·T + ValuesFixed values.
func (r *Recognized) ValuesPerToken() (perToken, fixed int64) {
	r.sizeOnce.Do(func() {
		at := func(t int) int64 {
			if r.SeqLen > 0 {
				t = r.SeqLen
			}
			ids, x := r.probeInput(200+t, t)
			env, err := r.runAt(r.input(ids, x), t, math.MaxInt64)
			if err != nil {
				return -1
			}
			return env.elements
		}
		a, b := at(8), at(16)
		switch {
		case a < 0 || b < 0:
			r.perToken, r.fixed = 0, 0
		case r.SeqLen > 0: // one length: all of it per token
			r.perToken, r.fixed = (a+int64(r.SeqLen)-1)/int64(r.SeqLen), 0
		default:
			r.perToken = max(0, (b-a+7)/8)
			r.fixed = max(0, a-8*r.perToken)
		}
	})
	return r.perToken, r.fixed
}

// LengthError is CheckInput's refusal of an input on which the graph and
// the model read from it differ: the graph computes something else at this
// length than at the lengths Recognize probed.
type LengthError struct {
	Tokens     int
	Difference float64 // relative, of the logits
	Probes     []int   // the lengths at which the two agreed
	Node       string  // which node differs first
}

func (e *LengthError) Error() string {
	return fmt.Sprintf("the ONNX graph and the model read from it differ on this input of %d tokens (relative difference %.3g of the logits), though they agree at lengths %v; %s: the graph computes something that depends on the length (a truncation such as x[:, :max_len], a pooled window such as o[:, :k], a state built from the length), which the engine cannot express; not supported", e.Tokens, e.Difference, e.Probes, e.Node)
}

// EvalBudgetError is CheckInput's refusal of an input whose evaluation
// would allocate more values than it may.
type EvalBudgetError struct {
	Tokens        int
	Values, Limit int64
}

func (e *EvalBudgetError) Error() string {
	return fmt.Sprintf("checking this input of %d tokens against the ONNX graph needs more than %d bytes of values, more than the %d bytes it may use", e.Tokens, 8*e.Values, 8*e.Limit)
}

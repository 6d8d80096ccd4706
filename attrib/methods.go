// Package attrib implements five attribution methods for any LSTM classifier
// of package cell — a model: the white-box networks (one layer),
// or several layers, two directions, the trained models package model
// imports — on one-hot or dense input: Occlusion, Saliency,
// Gradient×Input, Integrated Gradients and LRP (the ε-rule). Each gives a
// score R_{t,i} to every input feature for a relevance class c and token
// scores R_t = Σ_i R_{t,i}.
//
// A model's head (cell.Head: hn, hn-bf, last, mean, max) and
// classifier (one Linear layer, or two with ReLU or tanh between) are part
// of the model: every method runs through them. Gradients follow
// PyTorch's backward (max pooling's to the maximising step); LRP passes
// relevance by the ε-rule through every Linear layer and through mean
// pooling, gives a max-pooled unit's relevance to its maximising step and
// passes it unchanged through ReLU and tanh (cell.Runner.LRP has
// the rules). DeepLIFT (the paper's future work, with contextual
// decomposition) propagates multipliers against a reference input through
// the same heads and classifiers: Rescale at every nonlinearity, the
// symmetric split at every product of two varying quantities, max pooling
// split between the maximising steps of the input and the reference, so
// that the scores sum to ŷ_c(x) − ŷ_c(x₀) (deeplift.go,
// cell.Runner.DeepLIFT).
//
// Every model runs on one engine, cell.Runner, the white-box
// networks included. Saliency, G×I and LRP run one forward
// pass, the class chosen from its logits, and the backward pass.
// Integrated Gradients and Occlusion run their many forward (and backward)
// passes as batches on several goroutines within a memory budget
// (Options.Budget, Options.Workers), with the same bits for every setting;
// every call takes a context (cancellation), Options.Progress reports
// progress. Explainer.AttributeAll gives the scores of every class at once,
// the bits of one call per class, from one forward pass of the input
// (classes.go).
package attrib

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"

	"github.com/whitebox-lstm/whitebox/cell"
)

// Method is an attribution method.
type Method int

// The methods, in the paper's order.
const (
	Occlusion           Method = iota // R_t = ŷ_c(X) − ŷ_c(X with row t set to 0)
	Saliency                          // R_{t,i} = ∂ŷ_c/∂x_{t,i} (Captum's Saliency(abs=False))
	GradientXInput                    // R_{t,i} = x_{t,i}·∂ŷ_c/∂x_{t,i}
	IntegratedGradients               // R = X ⊙ ∫₀¹ ∇ŷ_c(αX) dα by a quadrature rule, zero baseline
	LRP                               // the ε-rule through the LSTM (Arras et al. 2017)
	// The paper's future work (its conclusion names them):
	DeepLIFT                // the Rescale rule against a reference input (Shrikumar et al. 2017); see deeplift.go
	ContextualDecomposition // contextual decomposition (Murdoch, Liu and Yu 2018); see cd.go
)

// Methods returns the methods the paper evaluates, in its order (a new
// slice each call).
func Methods() []Method {
	return []Method{Occlusion, Saliency, GradientXInput, IntegratedGradients, LRP}
}

// AllMethods returns every method: the paper's, then DeepLIFT and
// contextual decomposition (a new slice each call).
func AllMethods() []Method {
	return []Method{Occlusion, Saliency, GradientXInput, IntegratedGradients, LRP, DeepLIFT, ContextualDecomposition}
}

var methodNames = [...]string{"occlusion", "saliency", "gxi", "ig", "lrp", "deeplift", "cd"}

// String returns the method's short name: occlusion, saliency, gxi, ig,
// lrp, deeplift, cd.
func (m Method) String() string {
	if m < 0 || int(m) >= len(methodNames) {
		return fmt.Sprintf("Method(%d)", int(m))
	}
	return methodNames[m]
}

// methodAliases are other names of the methods, as Captum users and papers
// write them (compared in lower case, without '_', '-', ' ').
var methodAliases = map[string]Method{
	"integratedgradients": IntegratedGradients, "inputxgradient": GradientXInput,
	"gradientxinput": GradientXInput, "gradxinput": GradientXInput, "gradient×input": GradientXInput,
	"g×i": GradientXInput, "gradients": Saliency, "featureablation": Occlusion,
	"layerwiserelevancepropagation": LRP, "contextualdecomposition": ContextualDecomposition,
}

// ParseMethod returns the method called s: its short name (ig, gxi, …) or
// a Captum class name (IntegratedGradients, InputXGradient, Saliency,
// Occlusion, LRP, DeepLift), in any case and with or without '_' and '-'.
func ParseMethod(s string) (Method, error) {
	key := strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
	for k, name := range methodNames {
		if key == name {
			return Method(k), nil
		}
	}
	if m, ok := methodAliases[key]; ok {
		return m, nil
	}
	return 0, fmt.Errorf("unknown method %q (methods: %s, or Captum's names: IntegratedGradients, InputXGradient, Saliency, Occlusion, LRP, DeepLift)", s, strings.Join(methodNames[:], ", "))
}

// Model is a classifier the methods run on. The set is closed: the
// engine runs exactly two kinds, and NewExplainer refuses any other
// type (nil included) with an *UnsupportedError:
//
//   - *cell.Model: layers, directions, heads and classifiers of a
//     trained model, or a one-layer LSTM read on one-hot (or dense) input
//     such as the white-box networks (package whitebox, whose LRP rule is
//     cell.LRPHao);
//   - a Wrapper whose Stacked method returns a non-nil *cell.Model,
//     such as package model's *model.Model.
//
// The interface's two methods only describe the model's shape.
type Model interface {
	Input() int   // features per time step
	Classes() int // logits
}

// Class is a relevance class: the zero value (Predicted) is the class the
// model predicts, ClassIndex(k) is class k. Options.Class chooses one;
// Result.Class says which one was explained, always ClassIndex(k) (never
// Predicted): compare it with ClassIndex, read k with Int.
type Class struct {
	k   int
	set bool
}

// Predicted is the predicted class (Class's zero value).
var Predicted = Class{}

// ClassIndex is class k (logit k).
func ClassIndex(k int) Class { return Class{k: k, set: true} }

// Index returns k for ClassIndex(k), and ok = false for Predicted.
func (c Class) Index() (k int, ok bool) { return c.k, c.set }

// Int returns k for ClassIndex(k), and −1 for Predicted.
func (c Class) Int() int {
	if !c.set {
		return -1
	}
	return c.k
}

// String returns "predicted" or the index.
func (c Class) String() string {
	if !c.set {
		return "predicted"
	}
	return fmt.Sprint(c.k)
}

// Defaults.
const (
	DefaultSteps   = 50
	DefaultEpsilon = cell.DefaultEpsilon
	// MaxSteps bounds the IG step count (and so the work one call does).
	MaxSteps = 10_000_000
	// DefaultBudget bounds the scratch memory of every method: 256 MiB.
	DefaultBudget = cell.DefaultBudget
	// AutoSteps, as Options.Steps, asks IG for the smallest rule whose
	// completeness gap is within Options.Tolerance (see Options).
	AutoSteps = -1
	// DefaultTolerance is IG's completeness tolerance, relative to
	// |ŷ_c(x) − ŷ_c(0)|.
	DefaultTolerance = 1e-3
	// DefaultMaxAutoSteps caps the rules AutoSteps tries.
	DefaultMaxAutoSteps = 4096
	// firstAutoSteps is the first rule AutoSteps tries; each next one has
	// twice the nodes.
	firstAutoSteps = 8
)

// Options tune the methods. The zero value explains the predicted class
// with the defaults: 50 Gauss–Legendre steps for IG, ε = 0.001 for LRP, the
// default memory budget, every core. Field by field, the zero value and
// the valid values:
type Options struct {
	// Class is the relevance class (zero: the predicted class).
	Class Class
	// Steps is IG's number of quadrature nodes, 1 … MaxSteps (zero:
	// DefaultSteps). AutoSteps tries the rule with 8 nodes, then 16, 32, …
	// up to MaxAutoSteps, and keeps the first whose completeness gap
	// |Δ| is at most Tolerance·|ŷ_c(x) − ŷ_c(0)|; Result.IGSteps says
	// which.
	Steps int
	// Tolerance is IG's completeness tolerance relative to
	// |ŷ_c(x) − ŷ_c(0)|, in (0, 1] (zero: DefaultTolerance). A result
	// whose gap exceeds it has Result.GapExceeded set (and a Warning).
	Tolerance float64
	// MaxAutoSteps caps AutoSteps, 8 … MaxSteps (zero: DefaultMaxAutoSteps).
	MaxAutoSteps int
	Quadrature   Quadrature // IG: the rule (the zero value is Gauss–Legendre)
	// Float32Weights rounds IG's quadrature weights to float32, as Captum's
	// IntegratedGradients does (it multiplies the gradients by
	// torch.tensor(step_sizes).float(), even in float64), for Captum's
	// numbers to the last digit; false (the default, for every model)
	// keeps the float64 weights (relative differences of about 1e-8 from
	// Captum). `whitebox attribute` has its own default (-captum-weights:
	// true for an imported model) and sets it explicitly.
	Float32Weights bool
	// Epsilon is LRP's stabilizer ε, finite and ≥ 0: nil is
	// DefaultEpsilon; new(0.0) is ε = 0, with which a zero denominator is
	// an error. The call reads it once, at its start.
	Epsilon *float64
	// LRPBias is LRP's bias factor, Arras et al.'s bias_factor in [0, 1]:
	// 0 (the default, theirs too) lets the biases and the stabilizer
	// absorb their share of relevance, 1 redistributes it over the inputs
	// so that relevance is conserved. A model with the rule cell.LRPHao
	// (the white-box networks, the paper's rule) takes bias factor 0 only.
	LRPBias float64
	// Baseline is the reference input row of IG and DeepLIFT and the
	// replacement row of Occlusion, the same at every position: nil is the
	// zero row; otherwise Input() values (for example the embedding row of
	// a PAD or UNK token id, as Captum's LayerIntegratedGradients uses
	// token id 0 by default). IG and Occlusion take it on models
	// only; DeepLIFT on every model. Contextual decomposition refuses it.
	Baseline []float64
	// Span, for contextual decomposition only, also scores the tokens
	// Span.Start … Span.Stop (both included, from 0) as one span:
	// Result.SpanScore. nil: the token scores alone.
	Span *Span

	// The batched methods (IG, Occlusion) run many variants of the input
	// as batches, in chunks, on several goroutines. These settings change
	// time and memory, never a result: every setting gives the same bits.
	Budget int64 // scratch memory in bytes, ≥ 0 (0: DefaultBudget): IG's and occlusion's batches (cell.RunOptions), every method's trace; AttributeAll's results too, on their own (Explainer.AllBytes)
	// Spare is memory beyond Budget, ≥ 0, that IG and occlusion may use
	// to run faster (cell.RunOptions.Spare); Budget alone decides whether
	// an input is refused. A Pool sets it: a call alone is lent the memory
	// of the cores it borrows, as far as it is free (PoolOptions).
	Spare int64
	// Workers: goroutines, ≥ 0 (0: runtime.GOMAXPROCS(0)). One input's
	// batch of a large dense model shares each time step among them, and
	// they spin between steps: a caller that attributes several inputs at
	// once gives each its share of the cores (as `whitebox attribute` and
	// package score do). A call too small to gain from a second goroutine
	// runs on one.
	Workers int
	// Progress, if not nil, is called as IG steps or occluded positions
	// finish, with the number done and the total (from the worker
	// goroutines, one call at a time, done increasing).
	Progress func(done, total int)
	// Plan, if not nil, is told the schedule IG or occlusion chose for
	// an input (lanes, workers, checkpoints, memory; cell.Plan), before
	// the work starts, on the caller's goroutine; once a call, or once a
	// class where an every-class IG runs on checkpoints, or a try where IG's
	// auto steps try again. The other methods run one pass and tell none.
	Plan func(cell.Plan)

	eps float64 // Epsilon's value, set by resolve
}

// DefaultOptions: the predicted class, 50 Gauss–Legendre steps, ε = 0.001;
// the zero Options with every default written out.
func DefaultOptions() Options {
	return Options{Steps: DefaultSteps, Tolerance: DefaultTolerance, MaxAutoSteps: DefaultMaxAutoSteps,
		Quadrature: GaussLegendre, Epsilon: new(float64(DefaultEpsilon))}
}

// epsilon is opt.Epsilon's value: DefaultEpsilon for nil.
func (opt Options) epsilon() float64 {
	if opt.Epsilon == nil {
		return DefaultEpsilon
	}
	return *opt.Epsilon
}

// resolve checks opt and fills in the defaults of its zero fields: the one
// place where Options are read. Its errors are *OptionErrors.
func (opt Options) resolve(m Method) (Options, error) {
	if m < 0 || int(m) >= len(methodNames) {
		return opt, optionError("Method", m, "unknown method %d", int(m))
	}
	if opt.Steps == 0 {
		opt.Steps = DefaultSteps
	}
	if opt.Tolerance == 0 {
		opt.Tolerance = DefaultTolerance
	}
	if opt.MaxAutoSteps == 0 {
		opt.MaxAutoSteps = DefaultMaxAutoSteps
	}
	eps := opt.epsilon()
	opt.eps = eps // the value read once: the caller's may change after
	if k, ok := opt.Class.Index(); ok && k < 0 {
		return opt, optionError("Class", opt.Class, "class %d is negative", k)
	}
	if opt.Steps != AutoSteps && (opt.Steps < 1 || opt.Steps > MaxSteps) {
		return opt, optionError("Steps", opt.Steps, "IG steps %d must be in 1..%d, or AutoSteps", opt.Steps, MaxSteps)
	}
	if !(opt.Tolerance > 0 && opt.Tolerance <= 1) {
		return opt, optionError("Tolerance", opt.Tolerance, "IG tolerance %v must be in (0, 1]", opt.Tolerance)
	}
	if opt.MaxAutoSteps < firstAutoSteps || opt.MaxAutoSteps > MaxSteps {
		return opt, optionError("MaxAutoSteps", opt.MaxAutoSteps, "MaxAutoSteps %d must be in %d..%d", opt.MaxAutoSteps, firstAutoSteps, MaxSteps)
	}
	if !(eps >= 0 && eps <= cell.MaxEpsilon) {
		return opt, optionError("Epsilon", eps, "LRP epsilon %v must be in [0, %g]", eps, cell.MaxEpsilon)
	}
	if !(opt.LRPBias >= 0 && opt.LRPBias <= 1) {
		return opt, optionError("LRPBias", opt.LRPBias, "LRP bias factor %v must be in [0, 1]", opt.LRPBias)
	}
	if opt.Span != nil && m != ContextualDecomposition {
		return opt, optionError("Span", *opt.Span, "a Span is for contextual decomposition (cd), not %v", m)
	}
	if opt.Budget < 0 {
		return opt, optionError("Budget", opt.Budget, "Budget %d and Workers %d must not be negative (0: the defaults)", opt.Budget, opt.Workers)
	}
	if opt.Workers < 0 {
		return opt, optionError("Workers", opt.Workers, "Budget %d and Workers %d must not be negative (0: the defaults)", opt.Budget, opt.Workers)
	}
	if opt.Spare < 0 {
		return opt, optionError("Spare", opt.Spare, "Spare %d must not be negative (0: none)", opt.Spare)
	}
	return opt, nil
}

// Result is an attribution of one input.
type Result struct {
	Method     Method
	Class      Class     // the relevance class c: ClassIndex(c), never Predicted
	Prediction int       // the network's predicted class (argmax, first on ties)
	Logits     []float64 // ŷ(X)
	Len        int       // T, the number of time steps (tokens) of the input
	// Features are the scores R_{t,i} at [t*D+i]; for Occlusion, R_t on
	// the hot column of one-hot input, and nil for dense input (whether
	// the Result is fresh or reused); nil for contextual decomposition,
	// whose scores are per token.
	Features []float64
	Scores   []float64 // R_t, one score per token
	// Delta is IG's completeness gap Σ_t R_t − (ŷ_c(X) − ŷ_c(0)), and
	// DeepLIFT's summation-to-delta residual Σ_t R_t − (ŷ_c(X) − ŷ_c(X₀))
	// (rounding only); 0 for the other methods.
	Delta float64
	// Relevance is LRP's bookkeeping (zero for the other methods).
	Relevance cell.Relevance
	// IGSteps is the number of quadrature nodes IG used (Options.Steps, or
	// the rule AutoSteps chose); 0 for the other methods.
	IGSteps int
	// GapExceeded reports IG's completeness gap |Delta| above Tolerance
	// times |ŷ_c(x) − ŷ_c(0)|: the scores do not add up to the change of
	// the logit (Warning says so in words).
	GapExceeded bool
	Tolerance   float64 // IG: the tolerance GapExceeded was judged by
	// SpanScore is contextual decomposition's score of Options.Span for
	// class c (0 without a Span, and for the other methods).
	SpanScore  float64
	autoCapped bool // IG: AutoSteps stopped at its cap
}

// Explainer computes attributions on one network, reusing its buffers from
// call to call. It is not safe for concurrent use; make one per goroutine
// (IG and Occlusion use several goroutines inside one call; see Options).
// Between calls it holds its scratch, up to Options.Budget, and its
// worker goroutines; Release gives them all back.
type Explainer struct {
	inUse atomic.Bool
	model Model
	// The engine: the model's runner.
	runner   *cell.Runner
	cd       *cdEngine // contextual decomposition's, made on first use
	grad     []float64
	alphas   []float64
	weights  []float64
	rule     ruleKey   // the rule alphas and weights hold (computed once per key)
	occluded []float64 // ŷ_c of each occluded copy
	y, y0    []float64 // logits of x and of the zero input

	// The class choice of IG and of the single passes, called back by the
	// runner between the forward and the backward pass (made once: no
	// allocation per call), and its state for the current call.
	choose       func(y []float64) (int, error)
	choiceMethod Method
	choiceRes    *Result
	choiceOpt    Options
	choiceFeat   []float64
	classErr     error

	base *baseline // the shifted model of the last Options.Baseline

	// DeepLIFT's (deeplift.go): the dense input and reference rows, and
	// the class choice's state.
	dlX, dlRef []float64
	dlChoose   func(y []float64) (int, error)
	dlRes      *Result
	dlOpt      Options
	dlFeat     []float64
	// AttributeAll's: every class's output buffer (the Results' own
	// slices), LRP's bookkeeping, occlusion's logits (C×T), AutoSteps'
	// results of the rule being tried and the classes settled.
	all         [][]float64
	logitsAll   []float64 // the call's MultiResult's shared logits
	rels        []cell.Relevance
	occludedAll []float64
	tryAll      []Result
	doneAll     []bool
}

// ruleKey names a quadrature rule: its kind, number of nodes and whether
// its weights are rounded to float32.
type ruleKey struct {
	q   Quadrature
	n   int
	f32 bool
}

// quadrature sets e.alphas and e.weights to the rule (q, n), computing it
// only when the previous call asked for another (Gauss–Legendre with 1000
// nodes takes about 30 µs, 1% of an IG call on sp-counter at T = 256 with
// two threads; the rule's bits depend on (q, n) alone).
func (e *Explainer) quadrature(q Quadrature, n int, f32 bool) error {
	key := ruleKey{q, n, f32}
	if e.rule == key && len(e.alphas) == n {
		return nil
	}
	e.rule = ruleKey{}
	e.alphas, e.weights = grow(e.alphas, n), grow(e.weights, n)
	if err := Rule(q, n, e.alphas, e.weights); err != nil {
		return err
	}
	if f32 {
		for k, w := range e.weights {
			e.weights[k] = float64(float32(w))
		}
	}
	e.rule = key
	return nil
}

// A Wrapper is a model that holds a *cell.Model, such as package
// model's *model.Model: NewExplainer and Attribute take it as its engine.
type Wrapper interface {
	Model
	Stacked() *cell.Model
}

// NewExplainer returns an Explainer for m, one of the types Model lists:
// a *cell.Model, a *cell.Model or a Wrapper of one (a *model.Model).
// Anything else, a nil model included, is an *UnsupportedError
// (errors.Is(err, ErrUnsupported)); an engine that cannot be built is an
// error wrapping the engine's.
func NewExplainer(m Model) (*Explainer, error) {
	if w, ok := m.(Wrapper); ok {
		if isNilPointer(w) {
			return nil, unsupported(m, -1, "a nil %T", m)
		}
		s := w.Stacked()
		if s == nil {
			return nil, unsupported(m, -1, "a %T without a model (its Stacked method returns nil): load it first", m)
		}
		m = s
	}
	e := &Explainer{model: m}
	switch m := m.(type) {
	case *cell.Model:
		if m == nil {
			return nil, unsupported(m, -1, "a nil %T", m)
		}
		var err error
		if e.runner, err = cell.NewRunner(m); err != nil {
			return nil, fmt.Errorf("attrib: %w", err)
		}
	case nil:
		return nil, unsupported(m, -1, "a nil Model")
	default:
		return nil, unsupported(m, -1, "a Model of type %T: the engine runs a *cell.Model or a Wrapper of one (such as *model.Model)", m)
	}
	return e, nil
}

// isNilPointer reports whether w is a typed nil pointer (a nil
// *model.Model), whose Stacked method might not expect it.
func isNilPointer(w Wrapper) bool {
	v := reflect.ValueOf(w)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// Release gives back everything the Explainer keeps from call to call and
// ends its worker goroutines: the batch lanes of IG and Occlusion (up to
// Options.Budget, 256 MiB by default; a model's lanes keep the
// whole trace when it fits and checkpoints otherwise: IG 50 steps on
// 2,000 tokens of a 2-layer bidirectional H = 64 model keeps about 52
// MB, where the whole trace would be 1.6 GB), the trace of the single
// passes on its longest input (Saliency, G×I and LRP), DeepLIFT's
// reference rows, contextual decomposition's engine, AttributeAll's
// per-class scratch and the shifted model of the last Options.Baseline
// (a copy of the model with its own engine and scratch). Afterwards it
// holds a few kilobytes besides the model, which is shared and never
// copied, and no goroutine. The Explainer stays usable: its next call
// allocates its scratch again (and shifts the model again for a
// Baseline). A long-lived Explainer (a pool of them in a service) should
// be released after a long input, or given a smaller Options.Budget.
// Release returns an error while a call is running.
func (e *Explainer) Release() error {
	if e == nil {
		return nil
	}
	if !e.inUse.CompareAndSwap(false, true) {
		return fmt.Errorf("attrib: Release during a call")
	}
	defer e.inUse.Store(false)
	if e.runner != nil {
		if err := e.runner.Release(); err != nil {
			return fmt.Errorf("attrib: %w", err)
		}
	}
	if e.base != nil {
		if err := e.base.ex.Release(); err != nil {
			return err
		}
		e.base = nil // the shifted model and its engine go with it
	}
	if e.cd != nil {
		e.cd.r.Release()
		e.cd = nil
	}
	e.dlX, e.dlRef = nil, nil
	e.grad, e.alphas, e.weights, e.rule = nil, nil, nil, ruleKey{}
	e.occluded, e.y, e.y0 = nil, nil, nil
	e.all, e.logitsAll, e.rels, e.occludedAll, e.tryAll, e.doneAll = nil, nil, nil, nil, nil, nil
	e.choiceRes, e.choiceFeat, e.choiceOpt = nil, nil, Options{}
	e.dlRes, e.dlFeat, e.dlOpt, e.classErr = nil, nil, Options{}, nil
	return nil
}

// Attribute is NewExplainer(m) and its Attribute with a new Result, the
// Explainer released at the end. Each call builds the engine's scratch
// anew (a few MB for IG on a short input): for repeated calls keep an
// Explainer, which reuses it.
func Attribute(ctx context.Context, net Model, m Method, x cell.Input, opt Options) (*Result, error) {
	e, err := NewExplainer(net)
	if err != nil {
		return nil, err
	}
	defer e.Release() // its scratch and goroutines go now, not when collected
	res := new(Result)
	if err := e.Attribute(ctx, m, x, opt, res); err != nil {
		return nil, err
	}
	return res, nil
}

// Attribute computes method m's scores of x into res, reusing res's
// slices. When ctx is done, the call stops soon after and returns an
// error wrapping ctx.Err() (errors.Is(err, context.Canceled) or
// context.DeadlineExceeded; res then holds no valid result). A nil ctx is
// context.Background(). Its errors are those errors.go lists.
func (e *Explainer) Attribute(ctx context.Context, m Method, x cell.Input, opt Options, res *Result) (err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if e == nil || e.runner == nil {
		return unsupported(e.modelOrNil(), m, "no model (an Explainer not made by NewExplainer)")
	}
	if res == nil {
		return fmt.Errorf("attrib: nil Result")
	}
	if !e.inUse.CompareAndSwap(false, true) {
		return fmt.Errorf("attrib: Explainer used by two goroutines at once; make one per goroutine")
	}
	defer e.inUse.Store(false)
	// A result that is not finite is an error, never a record of NaN (finite.go).
	defer e.checkFinite(&err, m, x, res)
	if opt.Baseline != nil && m != DeepLIFT { // DeepLIFT's reference is the baseline row itself
		return e.withBaseline(ctx, m, x, opt, res)
	}
	opt, err = e.prepare(ctx, m, x, opt)
	if err != nil {
		return err
	}
	if m == IntegratedGradients {
		return e.integratedGradientsChecked(ctx, x, opt, res)
	}
	return e.attribute(ctx, m, x, opt, res)
}

// prepare resolves opt for method m on x and checks the call: the context,
// the LRP bias factor, the input's shape, the trace against the budget.
func (e *Explainer) prepare(ctx context.Context, m Method, x cell.Input, opt Options) (Options, error) {
	opt, err := opt.resolve(m)
	if err != nil {
		return opt, err
	}
	if err := ctx.Err(); err != nil {
		return opt, fmt.Errorf("attrib: %w", err)
	}
	if rule := e.runner.Model().LRPRule(); opt.LRPBias != 0 && m == LRP && rule == cell.LRPHao {
		return opt, unsupported(e.model, m, "LRP bias factor %v: the model's LRP rule (cell.LRPHao, the white-box networks') has bias factor 0 only", opt.LRPBias)
	}
	// Before anything is sized by x: a length its data does not match
	// (or whose T×D overflows) would size the buffers below.
	if err := checkInput(x, e.model.Input()); err != nil {
		return opt, err
	}
	budget := opt.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	if need := e.traceBytes(m, x.Len(), x.IsOneHot()); need > budget {
		return opt, fmt.Errorf("attrib: %w", &cell.BudgetError{Budget: budget, Need: need, What: fmt.Sprintf("the trace of %v on %d steps", m, x.Len())})
	}
	return opt, nil
}

// traceBytes is the memory of the forward trace method m keeps for an
// input of steps steps, 0 for none: the budget bounds it as it does the
// batches of IG and occlusion, refused before it is taken. The single
// passes of Saliency, G×I and LRP keep the whole one-lane trace (a
// model's too), DeepLIFT two (the input's and the reference's);
// contextual decomposition keeps its own buffers (cdBytes). IG and
// occlusion keep none of their own: their batches plan within the
// budget, a model's on checkpoints when the whole trace does not
// fit (memory O(H·√T) per lane, layer and direction), refusing only a
// budget below one checkpointed lane.
func (e *Explainer) traceBytes(m Method, steps int, oneHot bool) int64 {
	switch {
	case m == DeepLIFT:
		return e.deepLIFTBytes(steps)
	case m == ContextualDecomposition:
		return e.cdBytes(steps, oneHot)
	case m == IntegratedGradients || m == Occlusion:
		return 0
	}
	return e.runner.Model().TraceBytes(steps)
}

// attribute computes one method's scores with resolved options.
func (e *Explainer) attribute(ctx context.Context, m Method, x cell.Input, opt Options, res *Result) error {
	switch m {
	case IntegratedGradients:
		return e.integratedGradients(ctx, x, opt, res)
	case DeepLIFT:
		return e.deepLIFT(ctx, x, opt, res)
	case ContextualDecomposition:
		return e.contextualDecomposition(ctx, x, opt, res)
	case Occlusion:
		return e.occlusion(ctx, x, opt, res)
	}
	return e.singlePass(ctx, m, x, opt, res)
}

// occlusion: R_t = ŷ_c(X) − ŷ_c(X with row t set to 0), the occluded copies
// run as batches from their shared prefix, whose pass gives the logits of
// x and the class (OcclusionChosen).
func (e *Explainer) occlusion(ctx context.Context, x cell.Input, opt Options, res *Result) error {
	d, steps := e.model.Input(), x.Len()
	e.y = grow(e.y, e.model.Classes())
	res.Scores = grow(res.Scores, steps)
	e.occluded = grow(e.occluded, steps)
	occluded := e.occluded
	choose := e.startChoice(Occlusion, res, opt, res.Features)
	_, err := e.runner.OcclusionChosen(ctx, x, choose, e.y, occluded, batchOptions(opt))
	if err := e.endChoice(err); err != nil {
		return err
	}
	occludedScores(res, x, occluded, d)
	return nil
}

// occludedScores sets res's scores from the logits ŷ_c of the occluded
// copies: R_t = ŷ_c(X) − occluded[t], and on one-hot input the features.
func occludedScores(res *Result, x cell.Input, occluded []float64, d int) {
	yc := res.Logits[res.Class.k]
	for t, y := range occluded {
		res.Scores[t] = yc - y
	}
	if !x.IsOneHot() {
		res.Features = nil // no per-feature scores: nil, on a fresh Result as on a reused one
		return
	}
	res.Features = grow(res.Features, x.Len()*d)
	clear(res.Features)
	for t, s := range x.Symbols() {
		if s >= 0 {
			res.Features[t*d+s] = res.Scores[t]
		}
	}
}

func batchOptions(opt Options) cell.RunOptions {
	return cell.RunOptions{Budget: opt.Budget, Spare: opt.Spare, Workers: opt.Workers, Progress: opt.Progress, Plan: opt.Plan}
}

// integratedGradients is IG: R = X ⊙ Σ_k w_k ∇ŷ_c(α_k X) with the zero
// baseline, ŷ(X), ŷ(0) and the gradients from one call of the engine's
// IntegratedGradients, which checks x and runs X and its zero copy as
// spare lanes of the IG batch (the same bits as separate passes). The one
// IG path, for every model.
func (e *Explainer) integratedGradients(ctx context.Context, x cell.Input, opt Options, res *Result) (err error) {
	d, steps := e.model.Input(), max(0, x.Len())
	if err := e.quadrature(opt.Quadrature, opt.Steps, opt.Float32Weights); err != nil {
		return err
	}
	c := e.model.Classes()
	e.y, e.y0 = grow(e.y, c), grow(e.y0, c)
	features := grow(res.Features, steps*d)
	res.Scores = grow(res.Scores, steps)
	choose := e.startChoice(IntegratedGradients, res, opt, features)
	err = e.runner.IntegratedGradients(ctx, x, choose, e.alphas, e.weights, features, e.y, e.y0, batchOptions(opt))
	if err := e.endChoice(err); err != nil {
		return err
	}
	timesInput(res.Features, x, d)
	sumTokens(res.Scores, res.Features, d)
	res.Delta = sum(res.Scores) - (res.Logits[res.Class.k] - e.y0[res.Class.k])
	return nil
}

// singlePass is Saliency, G×I or LRP on a model: one forward
// pass, the class chosen from its logits (chooseClass), the backward pass.
func (e *Explainer) singlePass(ctx context.Context, m Method, x cell.Input, opt Options, res *Result) (err error) {
	d, steps := e.model.Input(), x.Len()
	res.Scores = grow(res.Scores, steps)
	f := grow(res.Features, steps*d)
	choose := e.startChoice(m, res, opt, f)
	var rel cell.Relevance
	if m == LRP {
		_, _, rel, err = e.runner.LRPChosenContext(ctx, x, choose, opt.eps, opt.LRPBias, f)
	} else {
		_, _, err = e.runner.GradientChosenContext(ctx, x, choose, f)
	}
	if err := e.endChoice(err); err != nil {
		return err
	}
	res.Relevance = rel
	if m == GradientXInput {
		timesInput(f, x, d)
	}
	sumTokens(res.Scores, f, d)
	return nil
}

// startChoice readies chooseClass for a call of method m into res and
// returns it.
func (e *Explainer) startChoice(m Method, res *Result, opt Options, features []float64) func(y []float64) (int, error) {
	if e.choose == nil {
		e.choose = e.chooseClass
	}
	e.choiceMethod, e.choiceRes, e.choiceOpt, e.choiceFeat, e.classErr = m, res, opt, features, nil
	return e.choose
}

// endChoice ends what startChoice began and returns the call's error err
// as Attribute reports it: the class choice's own as it is, the engine's
// wrapped.
func (e *Explainer) endChoice(err error) error {
	classErr := e.classErr
	e.choiceRes, e.choiceFeat, e.classErr = nil, nil, nil
	switch {
	case err == nil:
		return nil
	case classErr != nil && err == classErr:
		return err
	}
	return fmt.Errorf("attrib: %w", err)
}

// chooseClass sets up the result of the method e.choiceMethod (IG, or a single
// pass) from the logits y, as Attribute does for every method, and returns
// the relevance class.
func (e *Explainer) chooseClass(y []float64) (int, error) {
	res := e.choiceRes
	if err := e.begin(e.choiceMethod, y, e.choiceOpt, res, e.choiceFeat); err != nil {
		e.classErr = err
		return 0, err
	}
	return res.Class.k, nil
}

// begin starts res for method m from the logits y of the input (whose
// length is len(res.Scores)): the prediction and the relevance class,
// checked against the model. It keeps res's slices (features becomes
// res.Features).
func (e *Explainer) begin(m Method, y []float64, opt Options, res *Result, features []float64) error {
	*res = Result{Method: m, Len: len(res.Scores), Logits: append(res.Logits[:0], y...), Features: features, Scores: res.Scores}
	res.Prediction = cell.Predict(y)
	k := res.Prediction
	if opt.Class.set {
		k = opt.Class.k
	}
	res.Class = ClassIndex(k)
	if c := e.model.Classes(); k < 0 || k >= c {
		return optionError("Class", opt.Class, "class %d is out of range [0, %d)", k, c)
	}
	return nil
}

// timesInput multiplies f (T×D) by x elementwise.
func timesInput(f []float64, x cell.Input, d int) {
	for t := range x.Len() {
		for i := range d {
			f[t*d+i] *= x.At(t, i, d)
		}
	}
}

func sumTokens(tokens, f []float64, d int) {
	for t := range tokens {
		tokens[t] = sum(f[t*d : (t+1)*d])
	}
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

func grow(v []float64, n int) []float64 {
	if cap(v) < n {
		return make([]float64, n)
	}
	return v[:n]
}

// The engine underneath: the runner, for every model.

func (e *Explainer) modelOrNil() Model {
	if e == nil {
		return nil
	}
	return e.model
}

// logits writes the logits of x to y without keeping a trace.
func (e *Explainer) logits(x cell.Input, y []float64) error {
	return e.runner.Logits(x, y)
}

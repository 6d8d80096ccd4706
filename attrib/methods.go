// Package attrib implements five attribution methods for any LSTM classifier
// of package cell — a Network (the white-box networks, any one-layer LSTM)
// or a Stacked model (several layers, two directions: the models package
// model imports) — on one-hot or dense input: Occlusion, Saliency,
// Gradient×Input, Integrated Gradients and LRP (the ε-rule). Each gives a
// score R_{t,i} to every input feature for a relevance class c and token
// scores R_t = Σ_i R_{t,i}.
//
// Integrated Gradients and Occlusion run their many forward (and backward)
// passes as batches on several goroutines within a memory budget
// (Options.Budget, Options.Workers), with the same bits for every setting;
// Explainer.AttributeContext adds cancellation, Options.Progress progress
// reports.
package attrib

import (
	"context"
	"fmt"
	"strings"

	"github.com/whitebox-lstm/whitebox/cell"
)

// Method is an attribution method.
type Method int

const (
	Occlusion Method = iota
	Saliency
	GradientXInput
	IntegratedGradients
	LRP
)

// Methods lists every method in the paper's order.
var Methods = []Method{Occlusion, Saliency, GradientXInput, IntegratedGradients, LRP}

var methodNames = [...]string{"occlusion", "saliency", "gxi", "ig", "lrp"}

// String returns the method's short name: occlusion, saliency, gxi, ig, lrp.
func (m Method) String() string {
	if m < 0 || int(m) >= len(methodNames) {
		return fmt.Sprintf("Method(%d)", int(m))
	}
	return methodNames[m]
}

// ParseMethod returns the method called s (its short name).
func ParseMethod(s string) (Method, error) {
	for k, name := range methodNames {
		if s == name {
			return Method(k), nil
		}
	}
	return 0, fmt.Errorf("unknown method %q (methods: %s)", s, strings.Join(methodNames[:], ", "))
}

// Model is a classifier the methods run on: a *cell.Network or a
// *cell.Stacked. The methods are the same for both; only the engine
// underneath differs.
type Model interface {
	Input() int   // features per time step
	Classes() int // logits
}

// Predicted, as Options.Class, asks for the network's predicted class.
const Predicted = -1

// Defaults.
const (
	DefaultSteps   = 50
	DefaultEpsilon = cell.DefaultEpsilon
	// MaxSteps bounds the IG step count (and so the work one call does).
	MaxSteps = 10_000_000
	// DefaultBudget bounds the scratch memory of IG and Occlusion: 256 MiB.
	DefaultBudget = cell.DefaultBudget
)

// Options tune the methods. The zero value asks for the relevance of class
// 0; use DefaultOptions for the predicted class and the paper's settings.
type Options struct {
	Class      int        // the relevance class, or Predicted
	Steps      int        // IG: the number of quadrature nodes (0: DefaultSteps)
	Quadrature Quadrature // IG: the rule (the zero value is Gauss–Legendre)
	// Float32Weights rounds IG's quadrature weights to float32, as Captum's
	// IntegratedGradients does (it multiplies the gradients by
	// torch.tensor(step_sizes).float(), even in float64): set it to get
	// Captum's numbers to the last digits. The zero value keeps the
	// float64 weights (relative differences of about 1e-8 from Captum).
	Float32Weights bool
	Epsilon    float64    // LRP: the stabilizer ε (0: DefaultEpsilon)
	// LRPBias is LRP's bias factor, Arras et al.'s bias_factor in [0, 1]:
	// 0 (the default, theirs too) lets the biases and the stabilizer
	// absorb their share of relevance, 1 redistributes it over the inputs
	// so that relevance is conserved. Stacked models only: a Network's LRP
	// is the white-box paper's rule, bias factor 0.
	LRPBias float64

	// The batched methods (IG, Occlusion) run many variants of the input
	// as batches, in chunks, on several goroutines. These settings change
	// time and memory, never a result: every setting gives the same bits.
	Budget  int64 // scratch memory in bytes (0: DefaultBudget); see cell.BatchOptions
	Workers int   // goroutines (0: runtime.GOMAXPROCS(0))
	// Progress, if not nil, is called as IG steps or occluded positions
	// finish, with the number done and the total (from the worker
	// goroutines, one call at a time, done increasing).
	Progress func(done, total int)
}

// DefaultOptions: the predicted class, 50 Gauss–Legendre steps, ε = 0.001.
func DefaultOptions() Options {
	return Options{Class: Predicted, Steps: DefaultSteps, Quadrature: GaussLegendre, Epsilon: DefaultEpsilon}
}

// Result is an attribution of one input.
type Result struct {
	Method     Method
	Class      int       // the relevance class c
	Prediction int       // the network's predicted class (argmax, first on ties)
	Logits     []float64 // ŷ(X)
	Steps      int       // T
	Features   []float64 // R_{t,i} at [t*D+i]; for Occlusion, R_t on the hot column of one-hot input and nil for dense input
	Tokens     []float64 // R_t
	// Delta is IG's completeness gap Σ_t R_t − (ŷ_c(X) − ŷ_c(0)); 0 for the
	// other methods.
	Delta float64
	// Relevance is LRP's bookkeeping (zero for the other methods).
	Relevance cell.Relevance
}

// Explainer computes attributions on one network, reusing its buffers from
// call to call. It is not safe for concurrent use; make one per goroutine
// (IG and Occlusion use several goroutines inside one call; see Options).
type Explainer struct {
	model    Model
	net      *cell.Network // a Network's engine: net, ws and batch
	ws       *cell.Workspace
	batch    *cell.Batcher
	stacked  *cell.StackedRunner // a Stacked model's engine
	grad     []float64
	alphas   []float64
	weights  []float64
	rule     ruleKey   // the rule alphas and weights hold (computed once per key)
	occluded []float64 // ŷ_c of each occluded copy
	y, y0    []float64 // logits of x and of the zero input

	// IG's class choice, called back by Batcher.IntegratedGradients (made
	// once: no allocation per call), and its state for the current call.
	choose   func(y []float64) (int, error)
	igRes    *Result
	igOpt    Options
	igFeat   []float64
	classErr error
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

// NewExplainer returns an Explainer for m, a *cell.Network or a
// *cell.Stacked (anything else, nil too, makes every call fail with an
// error).
func NewExplainer(m Model) *Explainer {
	e := &Explainer{model: m}
	switch m := m.(type) {
	case *cell.Network:
		if m != nil {
			e.net, e.ws = m, cell.NewWorkspace(m)
		}
	case *cell.Stacked:
		if m != nil {
			e.stacked, _ = cell.NewStackedRunner(m)
		}
	}
	return e
}

// Attribute is NewExplainer(m).Attribute with a new Result.
func Attribute(net Model, m Method, x cell.Input, opt Options) (*Result, error) {
	res := new(Result)
	if err := NewExplainer(net).Attribute(m, x, opt, res); err != nil {
		return nil, err
	}
	return res, nil
}

// Attribute computes method m's scores of x into res, reusing res's slices.
func (e *Explainer) Attribute(m Method, x cell.Input, opt Options, res *Result) error {
	return e.AttributeContext(context.Background(), m, x, opt, res)
}

// AttributeContext is Attribute with cancellation: when ctx is done, the
// call stops soon after and returns an error wrapping ctx.Err() (res then
// holds no valid result).
func (e *Explainer) AttributeContext(ctx context.Context, m Method, x cell.Input, opt Options, res *Result) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("attrib: %w", err)
	}
	if opt.Steps == 0 {
		opt.Steps = DefaultSteps
	}
	if opt.Epsilon == 0 {
		opt.Epsilon = DefaultEpsilon
	}
	if m < 0 || int(m) >= len(methodNames) {
		return fmt.Errorf("attrib: unknown method %d", int(m))
	}
	if opt.Steps < 1 || opt.Steps > MaxSteps {
		return fmt.Errorf("attrib: IG steps %d must be in 1..%d", opt.Steps, MaxSteps)
	}
	if !(opt.Epsilon > 0) || opt.Epsilon > 1e300 {
		return fmt.Errorf("attrib: LRP epsilon %v must be positive and finite", opt.Epsilon)
	}
	if !(opt.LRPBias >= 0 && opt.LRPBias <= 1) {
		return fmt.Errorf("attrib: LRP bias factor %v must be in [0, 1]", opt.LRPBias)
	}
	if e == nil || (e.net == nil && e.stacked == nil) {
		return fmt.Errorf("attrib: no model (a nil or unsupported Model %T)", e.modelOrNil())
	}
	if opt.LRPBias != 0 && m == LRP && e.stacked == nil {
		return fmt.Errorf("attrib: LRP bias factor %v: a Network's LRP has bias factor 0 only", opt.LRPBias)
	}
	if m == IntegratedGradients {
		if done, err := e.integratedGradientsFused(ctx, x, opt, res); done {
			return err
		}
	}
	var logits []float64
	var err error
	if m == IntegratedGradients || m == Occlusion {
		// No trace needed: the batched methods keep within the budget.
		e.y = grow(e.y, e.model.Classes())
		logits, err = e.y, e.logits(x, e.y)
	} else {
		logits, err = e.forward(x)
	}
	if err != nil {
		return fmt.Errorf("attrib: %w", err)
	}
	d, steps := e.model.Input(), x.Len()
	*res = Result{Method: m, Steps: steps, Logits: res.Logits[:0], Features: res.Features, Tokens: grow(res.Tokens, steps)}
	res.Logits = append(res.Logits, logits...)
	res.Prediction = cell.Predict(logits)
	res.Class = opt.Class
	if res.Class == Predicted {
		res.Class = res.Prediction
	}
	if res.Class < 0 || res.Class >= e.model.Classes() {
		return fmt.Errorf("attrib: class %d is out of range [0, %d)", res.Class, e.model.Classes())
	}
	if m == Occlusion {
		return e.occlusion(ctx, x, opt, res)
	}
	res.Features = grow(res.Features, steps*d)
	f := res.Features
	var y0 float64 // IG: ŷ_c(0)
	switch m {
	case Saliency:
		err = e.gradient(x, res.Class, f)
	case GradientXInput:
		err = e.gradient(x, res.Class, f)
		timesInput(f, x, d)
	case IntegratedGradients:
		y0, err = e.integratedGradients(ctx, x, opt, res)
	case LRP:
		res.Relevance, err = e.lrp(x, res.Class, opt, f)
	}
	if err != nil {
		return fmt.Errorf("attrib: %w", err)
	}
	sumTokens(res.Tokens, f, d)
	if m == IntegratedGradients {
		res.Delta = sum(res.Tokens) - (res.Logits[res.Class] - y0)
	}
	return nil
}

// occlusion: R_t = ŷ_c(X) − ŷ_c(X with row t set to 0), the occluded copies
// run as batches from their shared prefix.
func (e *Explainer) occlusion(ctx context.Context, x cell.Input, opt Options, res *Result) error {
	d, steps := e.model.Input(), x.Len()
	e.occluded = grow(e.occluded, steps)
	occluded := e.occluded
	if err := e.occlude(ctx, x, res.Class, occluded, batchOptions(opt)); err != nil {
		return fmt.Errorf("attrib: %w", err)
	}
	yc := res.Logits[res.Class]
	for t, y := range occluded {
		res.Tokens[t] = yc - y
	}
	if !x.IsOneHot() {
		res.Features = res.Features[:0]
		return nil
	}
	res.Features = grow(res.Features, steps*d)
	clear(res.Features)
	for t, s := range x.Symbols() {
		if s >= 0 {
			res.Features[t*d+s] = res.Tokens[t]
		}
	}
	return nil
}

func (e *Explainer) batcher() *cell.Batcher {
	if e.batch == nil {
		e.batch = cell.NewBatcher(e.net)
	}
	return e.batch
}

func batchOptions(opt Options) cell.BatchOptions {
	return cell.BatchOptions{Budget: opt.Budget, Workers: opt.Workers, Progress: opt.Progress}
}

// integratedGradientsFused is Attribute for IG with ŷ(X), ŷ(0) and the
// gradients from one Batcher.IntegratedGradients call, which can run X and
// its zero copy as spare lanes of the IG batch: the same bits as the
// separate passes. It reports done = false, having changed nothing, when
// the quadrature rule fails or x's shape is wrong, so that the general path
// reports the errors in its order.
func (e *Explainer) integratedGradientsFused(ctx context.Context, x cell.Input, opt Options, res *Result) (done bool, err error) {
	d, steps := e.model.Input(), x.Len()
	if steps < 1 || (x.IsOneHot() && len(x.Symbols()) != steps) || (!x.IsOneHot() && len(x.DenseValues()) != steps*d) {
		return false, nil
	}
	n := opt.Steps
	if e.quadrature(opt.Quadrature, n, opt.Float32Weights) != nil {
		return false, nil
	}
	c := e.model.Classes()
	e.y, e.y0 = grow(e.y, c), grow(e.y0, c)
	features := grow(res.Features, steps*d)
	res.Tokens = grow(res.Tokens, steps)
	if e.choose == nil {
		e.choose = e.chooseClass
	}
	e.igRes, e.igOpt, e.igFeat, e.classErr = res, opt, features, nil
	if e.stacked != nil {
		err = e.stacked.IntegratedGradients(ctx, x, e.choose, e.alphas, e.weights, features, e.y, e.y0, batchOptions(opt))
	} else {
		err = e.batcher().IntegratedGradients(ctx, x, e.choose, e.alphas, e.weights, features, e.y, e.y0, batchOptions(opt))
	}
	classErr := e.classErr
	e.igRes, e.igFeat, e.classErr = nil, nil, nil
	if err != nil {
		if classErr != nil && err == classErr {
			return true, err
		}
		return true, fmt.Errorf("attrib: %w", err)
	}
	timesInput(res.Features, x, d)
	sumTokens(res.Tokens, res.Features, d)
	res.Delta = sum(res.Tokens) - (res.Logits[res.Class] - e.y0[res.Class])
	return true, nil
}

// chooseClass sets up IG's result from its logits y, as Attribute does for
// every method, and returns the relevance class.
func (e *Explainer) chooseClass(y []float64) (int, error) {
	res, opt, c := e.igRes, e.igOpt, e.model.Classes()
	*res = Result{Method: IntegratedGradients, Steps: len(res.Tokens), Logits: res.Logits[:0], Features: e.igFeat, Tokens: res.Tokens}
	res.Logits = append(res.Logits, y...)
	res.Prediction = cell.Predict(y)
	res.Class = opt.Class
	if res.Class == Predicted {
		res.Class = res.Prediction
	}
	if res.Class < 0 || res.Class >= c {
		e.classErr = fmt.Errorf("attrib: class %d is out of range [0, %d)", res.Class, c)
		return 0, e.classErr
	}
	return res.Class, nil
}

// integratedGradients: R = X ⊙ Σ_k w_k ∇ŷ_c(α_k X), with the zero baseline.
// It returns ŷ_c(0) for the completeness gap.
func (e *Explainer) integratedGradients(ctx context.Context, x cell.Input, opt Options, res *Result) (float64, error) {
	n := opt.Steps
	if err := e.quadrature(opt.Quadrature, n, opt.Float32Weights); err != nil {
		return 0, err
	}
	if e.stacked != nil {
		return 0, fmt.Errorf("attrib: IG on a Stacked model: the input does not fit the model")
	}
	e.y0 = grow(e.y0, e.net.Classes())
	if err := e.batcher().Logits(x.Scaled(0), e.y0); err != nil {
		return 0, err
	}
	y0 := e.y0[res.Class]
	if err := e.batcher().GradientSum(ctx, x, res.Class, e.alphas, e.weights, res.Features, batchOptions(opt)); err != nil {
		return 0, err
	}
	timesInput(res.Features, x, e.net.Input())
	return y0, nil
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

// The engine underneath: a Network's Workspace and Batcher, or a Stacked
// model's runner. Everything above them is one path for both.

func (e *Explainer) modelOrNil() Model {
	if e == nil {
		return nil
	}
	return e.model
}

// logits writes the logits of x to y without keeping a trace.
func (e *Explainer) logits(x cell.Input, y []float64) error {
	if e.stacked != nil {
		return e.stacked.Logits(x, y)
	}
	return e.batcher().Logits(x, y)
}

// forward returns the logits of x, keeping the trace for gradient and lrp.
func (e *Explainer) forward(x cell.Input) ([]float64, error) {
	if e.stacked != nil {
		return e.stacked.Forward(x)
	}
	return e.net.Forward(e.ws, x)
}

func (e *Explainer) gradient(x cell.Input, class int, f []float64) error {
	var err error
	if e.stacked != nil {
		_, err = e.stacked.Gradient(x, class, f)
	} else {
		_, err = e.net.Gradient(e.ws, x, class, f)
	}
	return err
}

func (e *Explainer) lrp(x cell.Input, class int, opt Options, f []float64) (cell.Relevance, error) {
	if e.stacked != nil {
		return e.stacked.LRP(x, class, opt.Epsilon, opt.LRPBias, f)
	}
	return e.net.LRP(e.ws, x, class, opt.Epsilon, f)
}

func (e *Explainer) occlude(ctx context.Context, x cell.Input, class int, out []float64, bo cell.BatchOptions) error {
	if e.stacked != nil {
		return e.stacked.Occlusion(ctx, x, class, out, bo)
	}
	return e.batcher().Occlusion(ctx, x, class, out, bo)
}

package attrib

import (
	"context"
	"fmt"
	"math"
	"unsafe"

	"github.com/whitebox-lstm/whitebox/cell"
)

// Every class at once.
//
// AttributeAll gives the scores of every class of the model, Results[c]
// the same bits as Attribute with Options.Class = ClassIndex(c), from one
// forward pass of the input: Saliency, Gradient×Input and LRP run one
// backward pass per class from one trace; IG runs each batch of α-scaled
// copies forward once and backward once per class, into per-class block
// sums added up in the single-class order; Occlusion reads every class's
// logit from the same occluded passes.
//
// DeepLIFT runs the traced passes of x and of the reference once and the
// multiplier passes of every class together, as C lanes (the Rescale
// multipliers and the products' splits depend on the two traces, not on
// the class, which enters only through the seed at the logits). Contextual decomposition
// has no shared path: it runs one single-class call per class (the same
// bits, not faster).

// MultiResult is an attribution of one input for every class: Results[c]
// is class c's, in class order. The zero value is ready to use; its
// Results and their slices are reused from call to call. The logits of
// x are the same for every class: the Results' Logits are one slice of C
// values, shared (not C copies, which would take C² values: 800 MB at
// 10,000 classes).
type MultiResult struct {
	Results []Result
	logits  []float64 // the Results' Logits
}

// AttributeAll is NewExplainer(net) and its AttributeAll with a new
// MultiResult, the Explainer released at the end.
func AttributeAll(ctx context.Context, net Model, m Method, x cell.Input, opt Options) (*MultiResult, error) {
	e, err := NewExplainer(net)
	if err != nil {
		return nil, err
	}
	defer e.Release()
	res := new(MultiResult)
	if err := e.AttributeAll(ctx, m, x, opt, res); err != nil {
		return nil, err
	}
	return res, nil
}

// AttributeAll computes method m's scores of x for every class into res:
// res.Results[c] has the bits of Attribute(m, x, opt with Class =
// ClassIndex(c)), its Prediction, Logits, Delta, Relevance, IGSteps and
// GapExceeded included (AutoSteps chooses each class's rule by its own
// gap). opt.Class must be left zero (Predicted): every class is computed.
// The results (AllBytes) are bounded by opt.Budget as the engine's
// scratch is, each on its own: an input whose C results need more is
// refused with a *BudgetError before they are allocated.
// When ctx is done the call stops soon after and returns an error wrapping
// ctx.Err(); res then holds no valid result. A nil ctx is
// context.Background().
func (e *Explainer) AttributeAll(ctx context.Context, m Method, x cell.Input, opt Options, res *MultiResult) (err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if e == nil || e.runner == nil {
		return unsupported(e.modelOrNil(), m, "no model (an Explainer not made by NewExplainer)")
	}
	if res == nil {
		return fmt.Errorf("attrib: nil MultiResult")
	}
	if opt.Class != Predicted {
		return optionError("Class", opt.Class, "AttributeAll computes every class; Options.Class %v must be left zero", opt.Class)
	}
	if !e.inUse.CompareAndSwap(false, true) {
		return fmt.Errorf("attrib: Explainer used by two goroutines at once; make one per goroutine")
	}
	defer e.inUse.Store(false)
	// A result that is not finite is an error, never a record of NaN (finite.go).
	defer e.checkFiniteAll(&err, m, x, res)
	// The options, the input and the results' memory first: nothing
	// below is allocated for a call that is refused.
	resolved, err := e.prepare(ctx, m, x, opt)
	if err != nil {
		return err
	}
	budget := resolved.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	c := e.model.Classes()
	if need := e.AllBytes(m, x.Len(), x.IsOneHot(), resolved); need > budget {
		return fmt.Errorf("attrib: %w", &cell.BudgetError{Budget: budget, Need: need,
			What: fmt.Sprintf("the results of %d classes (%v) on %d steps", c, m, x.Len())})
	}
	if cap(res.Results) < c {
		res.Results = append(res.Results[:cap(res.Results)], make([]Result, c-cap(res.Results))...)
	}
	res.Results = res.Results[:c]
	// Every class's Logits is the one shared slice; whatever writes a
	// class's logits writes it in place.
	res.logits = grow(res.logits, c)
	for k := range res.Results {
		res.Results[k].Logits = res.logits
	}
	e.logitsAll = res.logits
	defer func() { e.logitsAll = nil }()
	if opt.Baseline != nil && m != DeepLIFT { // DeepLIFT's reference is the baseline row itself
		return e.withBaselineAll(ctx, m, x, opt, res)
	}
	return e.attributeAll(ctx, m, x, opt, res.Results)
}

// AllBytes is the memory AttributeAll takes for its results of method m
// on an input of steps steps (one-hot or dense), which opt.Budget bounds:
// every class's Result and its T scores and T×D features (none for
// occlusion on dense input and for contextual decomposition), and the
// logits they share; occlusion's logits of the occluded copies (C×T),
// LRP's bookkeeping, and with IG's AutoSteps the results of the rule
// being tried. Each slice is counted with the allocator's rounding. The
// engine's scratch is apart, bounded on its own. A caller that writes the
// results out (package score) adds its output.
func (e *Explainer) AllBytes(m Method, steps int, oneHot bool, opt Options) int64 {
	if e == nil || e.model == nil {
		return 0
	}
	// In float64: C × T × D may pass int64 for a refused input.
	c, t := float64(e.model.Classes()), float64(max(steps, 0))
	td := t * float64(e.model.Input())
	per := float64(unsafe.Sizeof(Result{})) + 24 + sliceBytes(t) // the Result, its place in e.all, its scores
	switch m {
	case Occlusion:
		per += sliceBytes(t) // the occluded copies' logit of the class
		if oneHot {
			per += sliceBytes(td)
		}
	case ContextualDecomposition:
	case LRP:
		per += float64(unsafe.Sizeof(cell.Relevance{})) + sliceBytes(td)
	default:
		per += sliceBytes(td)
	}
	if m == IntegratedGradients && opt.Steps == AutoSteps {
		per += float64(unsafe.Sizeof(Result{})) + sliceBytes(t) + sliceBytes(td) + 1 // the rule being tried
	}
	if n := c*per + sliceBytes(c); n < math.MaxInt64/2 {
		return int64(n)
	}
	return math.MaxInt64 / 2
}

// sliceBytes bounds what a slice of n float64s takes from the allocator:
// its size rounded up to a size class (at most an eighth more) and a
// small slice's minimum.
func sliceBytes(n float64) float64 {
	if n == 0 {
		return 0
	}
	return 9*n + 16
}

// shareLogits gives every class's result the logits y, in the slice they
// share (one copy of C values, one prediction), and its prediction.
func (e *Explainer) shareLogits(all []Result, y []float64) {
	shared := append(e.logitsAll[:0], y...)
	pred := cell.Predict(y)
	for k := range all {
		all[k].Logits, all[k].Prediction = shared, pred
	}
}

// attributeAll is AttributeAll on the model itself (the baseline, if any,
// already shifted into it): Attribute's checks, then the method.
func (e *Explainer) attributeAll(ctx context.Context, m Method, x cell.Input, opt Options, all []Result) error {
	opt, err := e.prepare(ctx, m, x, opt)
	if err != nil {
		return err
	}
	switch m {
	case Saliency, GradientXInput, LRP:
		return e.tracedAll(ctx, m, x, opt, all)
	case Occlusion:
		return e.occlusionAll(ctx, x, opt, all)
	case IntegratedGradients:
		return e.integratedGradientsAllChecked(ctx, x, opt, all)
	case DeepLIFT:
		return e.deepLIFTAll(ctx, x, opt, all)
	}
	// No shared path (yet): one single-class call per class.
	for k := range all {
		one := opt
		one.Class = ClassIndex(k)
		if err := e.attribute(ctx, m, x, one, &all[k]); err != nil {
			return err
		}
	}
	return nil
}

// beginAll starts every class's result (begin with Class =
// ClassIndex(c)), each with T scores and its features slice grown to n
// values (kept nil when n < 0), and points e.all at them. The logits and
// the prediction come after, once for every class (shareLogits).
func (e *Explainer) beginAll(m Method, steps, n int, opt Options, all []Result) error {
	if cap(e.all) < len(all) {
		e.all = make([][]float64, len(all))
	}
	e.all = e.all[:len(all)]
	for k := range all {
		r := &all[k]
		r.Scores = grow(r.Scores, steps)
		f := r.Features
		if n >= 0 {
			f = grow(f, n)
		}
		one := opt
		one.Class = ClassIndex(k)
		if err := e.begin(m, nil, one, r, f); err != nil {
			return err
		}
		e.all[k] = r.Features
	}
	return nil
}

// tracedAll is Saliency, G×I and LRP for every class: one forward pass,
// then one backward pass per class from its trace.
func (e *Explainer) tracedAll(ctx context.Context, m Method, x cell.Input, opt Options, all []Result) error {
	d, steps := e.model.Input(), x.Len()
	if err := e.beginAll(m, steps, steps*d, opt, all); err != nil {
		return err
	}
	var logits []float64
	var err error
	if m == LRP {
		if cap(e.rels) < len(all) {
			e.rels = make([]cell.Relevance, len(all))
		}
		rels := e.rels[:len(all)]
		logits, err = e.runner.LRPAll(ctx, x, opt.eps, opt.LRPBias, e.all, rels)
		if err == nil {
			for k := range all {
				all[k].Relevance = rels[k]
			}
		}
	} else {
		logits, err = e.runner.GradientAll(ctx, x, e.all)
	}
	if err != nil {
		return fmt.Errorf("attrib: %w", err)
	}
	e.shareLogits(all, logits)
	for k := range all {
		r := &all[k]
		if m == GradientXInput {
			timesInput(r.Features, x, d)
		}
		sumTokens(r.Scores, r.Features, d)
	}
	return nil
}

// occlusionAll is Occlusion for every class, from the same occluded
// passes.
func (e *Explainer) occlusionAll(ctx context.Context, x cell.Input, opt Options, all []Result) error {
	d, steps := e.model.Input(), x.Len()
	c := e.model.Classes()
	e.y = grow(e.y, c)
	if err := e.logits(x, e.y); err != nil {
		return fmt.Errorf("attrib: %w", err)
	}
	if err := e.beginAll(Occlusion, steps, -1, opt, all); err != nil {
		return err
	}
	e.shareLogits(all, e.y)
	e.occludedAll = grow(e.occludedAll, c*steps)
	for k := range all {
		e.all[k] = e.occludedAll[k*steps : (k+1)*steps]
	}
	if err := e.runner.OcclusionAll(ctx, x, e.all, batchOptions(opt)); err != nil {
		return fmt.Errorf("attrib: %w", err)
	}
	for k := range all {
		occludedScores(&all[k], x, e.all[k], d)
	}
	return nil
}

// integratedGradientsAllChecked is integratedGradientsChecked for every
// class: with AutoSteps each class keeps the first rule whose gap is
// within the tolerance (or the cap's), as its single-class call would,
// and the rules are tried until every class has one.
func (e *Explainer) integratedGradientsAllChecked(ctx context.Context, x cell.Input, opt Options, all []Result) error {
	if opt.Steps != AutoSteps {
		if err := e.integratedGradientsAll(ctx, x, opt, all); err != nil {
			return err
		}
		for k := range all {
			all[k].IGSteps = opt.Steps
			e.checkGap(opt, &all[k], false)
		}
		return nil
	}
	if cap(e.tryAll) < len(all) {
		e.tryAll = append(e.tryAll[:cap(e.tryAll)], make([]Result, len(all)-cap(e.tryAll))...)
	}
	try, done := e.tryAll[:len(all)], e.doneAll[:0]
	for k := range try {
		try[k].Logits = e.logitsAll // the same logits, shared with all
	}
	for range all {
		done = append(done, false)
	}
	e.doneAll = done
	progress, before := opt.Progress, 0
	left := len(all)
	for n := firstAutoSteps; left > 0; n *= 2 {
		one := opt
		one.Steps = min(n, opt.MaxAutoSteps)
		if progress != nil {
			b := before // declared here: no allocation without Progress
			one.Progress = func(done, total int) { progress(b+done, b+total) }
		}
		if err := e.integratedGradientsAll(ctx, x, one, try); err != nil {
			return err
		}
		before += one.Steps
		for k := range try {
			r := &try[k]
			r.IGSteps = one.Steps
			if done[k] || !(gapWithin(opt.Tolerance, r) || one.Steps >= opt.MaxAutoSteps) {
				continue
			}
			e.checkGap(opt, r, true)
			copyResult(&all[k], r)
			done[k] = true
			left--
		}
	}
	return nil
}

// copyResult sets *dst to src, reusing dst's slices but for the logits,
// which every class's results share (src's slice).
func copyResult(dst, src *Result) {
	features := append(dst.Features[:0], src.Features...)
	scores := append(dst.Scores[:0], src.Scores...)
	*dst = *src
	dst.Features, dst.Scores = features, scores
}

// integratedGradientsAll is integratedGradients for every class: the
// engine's IntegratedGradientsAll, then each class's scores and gap.
func (e *Explainer) integratedGradientsAll(ctx context.Context, x cell.Input, opt Options, all []Result) error {
	d, steps := e.model.Input(), max(0, x.Len())
	if err := e.quadrature(opt.Quadrature, opt.Steps, opt.Float32Weights); err != nil {
		return err
	}
	c := e.model.Classes()
	e.y, e.y0 = grow(e.y, c), grow(e.y0, c)
	if err := e.beginAll(IntegratedGradients, steps, steps*d, opt, all); err != nil {
		return err
	}
	if err := e.runner.IntegratedGradientsAll(ctx, x, e.alphas, e.weights, e.all, e.y, e.y0, batchOptions(opt)); err != nil {
		return fmt.Errorf("attrib: %w", err)
	}
	e.shareLogits(all, e.y)
	for k := range all {
		r := &all[k]
		timesInput(r.Features, x, d)
		sumTokens(r.Scores, r.Features, d)
		r.Delta = sum(r.Scores) - (r.Logits[k] - e.y0[k])
	}
	return nil
}

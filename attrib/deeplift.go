package attrib

import (
	"context"
	"fmt"
	"math"

	"github.com/whitebox-lstm/whitebox/cell"
)

// DeepLIFT runs on the engine (cell.Runner.DeepLIFT has the
// rules: Rescale for every sigmoid, tanh and ReLU, the symmetric split of
// every product of two varying quantities, multipliers through Linear
// layers and the mean head as gradients, max pooling split between the
// maximising steps of the input and of the reference). The reference input
// x₀ is Options.Baseline at every position, the zero row by default.
// One-hot input runs as its rows made dense; its logits in the Result are
// those of the dense rows, equal to the one-hot passes' to rounding.
// Result.Delta is Σ_t R_t − (ŷ_c(x) − ŷ_c(x₀)):
// zero but for rounding (summation-to-delta). AttributeAll traces x and x₀
// once for all the classes and runs their multiplier passes together
// (deepLIFTAll).

// deepLIFTBytes is the memory of DeepLIFT's two traces on steps steps.
func (e *Explainer) deepLIFTBytes(steps int) int64 {
	return e.runner.Model().DeepLIFTBytes(steps)
}

// checkBaselineRow checks a reference row of d values.
func checkBaselineRow(row []float64, d int) error {
	if len(row) != d {
		return optionError("Baseline", len(row), "the Baseline has %d values; the model's input rows have %d", len(row), d)
	}
	for i, v := range row {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return optionError("Baseline", v, "Baseline[%d] = %v is not finite", i, v)
		}
	}
	return nil
}

// deepLIFT is DeepLIFT's scores of x against the reference Options.Baseline
// (the zero row if nil) at every position.
func (e *Explainer) deepLIFT(ctx context.Context, x cell.Input, opt Options, res *Result) error {
	r, in, ref, err := e.deepLIFTInputs(x, opt)
	if err != nil {
		return err
	}
	d, steps := e.model.Input(), x.Len()
	res.Scores = grow(res.Scores, steps)
	features := grow(res.Features, steps*d)
	if e.dlChoose == nil {
		e.dlChoose = e.chooseDeepLIFT
	}
	e.dlRes, e.dlOpt, e.dlFeat, e.classErr = res, opt, features, nil
	_, y0, err := r.DeepLIFTChoose(ctx, in, ref, e.dlChoose, 0, features)
	classErr := e.classErr
	e.dlRes, e.dlFeat, e.classErr = nil, nil, nil
	if err != nil {
		if classErr != nil && err == classErr {
			return err
		}
		return fmt.Errorf("attrib: %w", err)
	}
	deepLIFTDelta(res, d, y0)
	return nil
}

// deepLIFTAll is deepLIFT for every class: the traced passes of x and of
// the reference run once, the multiplier passes of all the classes
// together (cell.Runner.DeepLIFTAll); where their C lanes of
// multipliers (cell.Model.DeepLIFTAllBytes) would take the memory over
// opt.Budget, one single-class call per class instead.
func (e *Explainer) deepLIFTAll(ctx context.Context, x cell.Input, opt Options, all []Result) error {
	r, in, ref, err := e.deepLIFTInputs(x, opt)
	if err != nil {
		return err
	}
	d, steps := e.model.Input(), x.Len()
	budget := opt.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	if need := e.deepLIFTBytes(steps) + r.Model().DeepLIFTAllBytes(steps); need > budget {
		// The multipliers of every class at once do not fit: one
		// single-class call per class, the same bits.
		for k := range all {
			one := opt
			one.Class = ClassIndex(k)
			if err := e.deepLIFT(ctx, x, one, &all[k]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := e.beginAll(DeepLIFT, steps, steps*d, opt, all); err != nil {
		return err
	}
	y, y0, err := r.DeepLIFTAll(ctx, in, ref, e.all)
	if err != nil {
		return fmt.Errorf("attrib: %w", err)
	}
	e.shareLogits(all, y)
	for k := range all {
		deepLIFTDelta(&all[k], d, y0)
	}
	return nil
}

// deepLIFTInputs checks DeepLIFT's call on x and returns its runner, the
// input as that runner reads it (one-hot rows made dense) and
// the reference: Options.Baseline, or the zero row, at every position.
func (e *Explainer) deepLIFTInputs(x cell.Input, opt Options) (r *cell.Runner, in, ref cell.Input, err error) {
	r = e.runner
	d, steps := e.model.Input(), x.Len()
	if steps < 1 {
		return nil, in, ref, emptyInput()
	}
	if opt.Baseline != nil {
		if err := checkBaselineRow(opt.Baseline, d); err != nil {
			return nil, in, ref, err
		}
	}
	in = x
	if x.IsOneHot() {
		if e.dlX, err = x.AppendDense(e.dlX[:0], d); err != nil {
			return nil, in, ref, fmt.Errorf("attrib: %w", err)
		}
		in = cell.Dense(e.dlX, steps)
	}
	e.dlRef = grow(e.dlRef, steps*d)
	for t := range steps {
		row := e.dlRef[t*d : (t+1)*d]
		if opt.Baseline != nil {
			copy(row, opt.Baseline)
		} else {
			clear(row)
		}
	}
	return r, in, cell.Dense(e.dlRef, steps), nil
}

// deepLIFTDelta sums res's features (T×d) into its token scores and sets
// its summation-to-delta residual, y0 being the reference's logits.
func deepLIFTDelta(res *Result, d int, y0 []float64) {
	sumTokens(res.Scores, res.Features, d)
	res.Delta = sum(res.Scores) - (res.Logits[res.Class.k] - y0[res.Class.k])
}

// chooseDeepLIFT starts DeepLIFT's result from the logits of x and returns
// the relevance class.
func (e *Explainer) chooseDeepLIFT(y []float64) (int, error) {
	res := e.dlRes
	if err := e.begin(DeepLIFT, y, e.dlOpt, res, e.dlFeat); err != nil {
		e.classErr = err
		return 0, err
	}
	return res.Class.k, nil
}

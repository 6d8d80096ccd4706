package attrib

import (
	"context"
	"fmt"
	"math"

	"github.com/whitebox-lstm/whitebox/cell"
)

// integratedGradientsChecked runs IG with opt.Steps nodes, or with the
// doubling rules of AutoSteps, and sets res.GapExceeded when the
// completeness gap is above the tolerance: on long inputs a fixed rule can
// lose the integral altogether (every score 0, Δ = −ŷ_c(x) + ŷ_c(0)) and
// only the gap shows it.
func (e *Explainer) integratedGradientsChecked(ctx context.Context, x cell.Input, opt Options, res *Result) error {
	if opt.Steps != AutoSteps {
		if err := e.attribute(ctx, IntegratedGradients, x, opt, res); err != nil {
			return err
		}
		res.IGSteps = opt.Steps
		e.checkGap(opt, res, false)
		return nil
	}
	progress, before := opt.Progress, 0
	for n := firstAutoSteps; ; n *= 2 {
		try := opt
		try.Steps = min(n, opt.MaxAutoSteps)
		if progress != nil {
			// One count over every rule tried: done keeps increasing.
			try.Progress = func(done, total int) { progress(before+done, before+total) }
		}
		if err := e.attribute(ctx, IntegratedGradients, x, try, res); err != nil {
			return err
		}
		res.IGSteps = try.Steps
		before += try.Steps
		if gapWithin(opt.Tolerance, res) || try.Steps >= opt.MaxAutoSteps {
			e.checkGap(opt, res, true)
			return nil
		}
	}
}

// gapWithin reports whether IG's completeness gap |Δ| is at most tol times
// |ŷ_c(x) − ŷ_c(0)| (= Σ_t R_t − Δ), or within rounding of the logits.
func gapWithin(tol float64, res *Result) bool {
	total := sum(res.Scores)
	diff := total - res.Delta
	yc := res.Logits[res.Class.k]
	floor := 1e-12 * max(1, math.Abs(yc), math.Abs(yc-diff))
	return math.Abs(res.Delta) <= max(tol*math.Abs(diff), floor)
}

// checkGap records whether the gap is above the tolerance.
func (e *Explainer) checkGap(opt Options, res *Result, auto bool) {
	res.Tolerance = opt.Tolerance
	res.GapExceeded = !gapWithin(opt.Tolerance, res)
	res.autoCapped = auto && res.GapExceeded
}

// Warning says in words why the result may not mean what it should, or
// returns "": IG's completeness gap above the tolerance.
func (res *Result) Warning() string {
	if !res.GapExceeded {
		return ""
	}
	diff := sum(res.Scores) - res.Delta
	hint := "more steps, or Options.Steps = AutoSteps, reach the tolerance"
	if res.autoCapped {
		hint = "AutoSteps stopped at its cap, Options.MaxAutoSteps"
	}
	return fmt.Sprintf("IG's completeness gap %.3g is more than %g of |ŷ_c(x) − ŷ_c(0)| = %.3g with %d steps: the scores do not add up to the change of the logit; %s",
		res.Delta, res.Tolerance, math.Abs(diff), res.IGSteps, hint)
}

package attrib

import (
	"context"
	"slices"

	"github.com/whitebox-lstm/whitebox/cell"
)

// A baseline x0 (Options.Baseline, one row, the same at every position) is
// the zero row of a shifted model: M'(y) = M(y + x0), whose layer-0 biases
// are b + W_ih·x0 (PyTorch's W_ih·(x0 + α(x − x0)) + b, regrouped), read
// on the input x − x0. IG of M' from 0 to x − x0 is IG of M from x0 to x:
// the same path and gradients, scores (x − x0)·∫grad and the gap against
// f(x) − f(x0); Occlusion of M' zeroes a row of x − x0, which is row t of
// M's input replaced by x0. The engines run M' unchanged, so a nil
// baseline takes no part of this path and keeps its bits.

// baseline is an Explainer's shifted model for one baseline row.
type baseline struct {
	row []float64  // the baseline it was made for
	ex  *Explainer // of the shifted model
	x   []float64  // x − x0, reused
}

// withBaseline attributes x against opt.Baseline on the shifted model.
func (e *Explainer) withBaseline(ctx context.Context, m Method, x cell.Input, opt Options, res *Result) error {
	shifted, err := e.shifted(m, x, opt.Baseline)
	if err != nil {
		return err
	}
	opt.Baseline = nil
	return e.base.ex.Attribute(ctx, m, shifted, opt, res)
}

// withBaselineAll is withBaseline for AttributeAll.
func (e *Explainer) withBaselineAll(ctx context.Context, m Method, x cell.Input, opt Options, res *MultiResult) error {
	shifted, err := e.shifted(m, x, opt.Baseline)
	if err != nil {
		return err
	}
	opt.Baseline = nil
	return e.base.ex.AttributeAll(ctx, m, shifted, opt, res)
}

// shifted checks the baseline row for method m, makes the shifted model
// e.base for it (unless it is the last one's) and returns x − row.
func (e *Explainer) shifted(m Method, x cell.Input, row []float64) (cell.Input, error) {
	if m != IntegratedGradients && m != Occlusion {
		return cell.Input{}, unsupported(e.model, m, "a Baseline is for IG, Occlusion and DeepLIFT, not %v", m)
	}
	if x.IsOneHot() && x.Len() > 0 {
		return cell.Input{}, unsupported(e.model, m, "a Baseline is for dense input (one-hot symbols' baseline is the zero row)")
	}
	s, ok := e.model.(*cell.Model)
	if !ok || s == nil {
		return cell.Input{}, unsupported(e.model, m, "a Baseline needs a *cell.Model model")
	}
	d := s.Input()
	if err := checkBaselineRow(row, d); err != nil {
		return cell.Input{}, err
	}
	if e.base == nil || !slices.Equal(e.base.row, row) {
		shifted, err := shift(s, row)
		if err != nil {
			return cell.Input{}, err
		}
		ex, err := NewExplainer(shifted)
		if err != nil {
			return cell.Input{}, err
		}
		if e.base != nil {
			// The last baseline's engine goes now: its goroutines and
			// scratch, not when the collector finds them.
			if err := e.base.ex.Release(); err != nil {
				return cell.Input{}, err
			}
		}
		e.base = &baseline{row: slices.Clone(row), ex: ex}
	}
	if err := checkInput(x, d); err != nil { // before steps·d sizes x − row
		return cell.Input{}, err
	}
	steps := x.Len()
	e.base.x = grow(e.base.x, steps*d)
	for t := range steps {
		for i := range d {
			e.base.x[t*d+i] = x.At(t, i, d) - row[i]
		}
	}
	return cell.Dense(e.base.x, steps), nil
}

// shift returns the model M'(y) = M(y + row): layer 0's biases (each
// direction) plus W_ih·row; the other cells get zero biases where the
// model has none, as M' has some.
func shift(s *cell.Model, row []float64) (*cell.Model, error) {
	p := s.Params()
	for ci := range p.Cells {
		c := &p.Cells[ci]
		g := len(c.Whh) / max(1, s.Hidden())
		if c.B == nil {
			c.B = make([]float64, g)
		}
		if p.Kind == cell.LayerGRU && c.Bhh == nil { // a GRU's biases come in pairs
			c.Bhh = make([]float64, g)
		}
		if ci >= s.Directions() {
			continue
		}
		for q := range g {
			w := c.Wih[q*len(row) : (q+1)*len(row)]
			sum := 0.0
			for i, v := range row {
				sum += w[i] * v
			}
			c.B[q] += sum
		}
	}
	return cell.NewModel(p)
}

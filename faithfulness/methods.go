package faithfulness

import (
	"context"
	"slices"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
)

// Method is an attribution method under test: one row of the tables. A
// new method (DeepLIFT, contextual decomposition, …) plugs in as one more
// Method.
type Method struct {
	Name string
	// New returns an Explain for one goroutine (each worker calls it once).
	New func(net *cell.Model) Explain
}

// Explain returns the token scores of x for class (one per time step, in a
// slice the caller may keep).
type Explain func(ctx context.Context, x cell.Input, class int) ([]float64, error)

// AttribMethods returns the paper's five methods of package attrib
// (attrib.Methods(): occlusion, saliency, gxi, ig, lrp) with opt:
// AttribMethodsOf(opt, attrib.Methods()).
func AttribMethods(opt attrib.Options) []Method {
	return AttribMethodsOf(opt, attrib.Methods())
}

// AttribMethodsOf returns package attrib's methods ms (attrib.AllMethods()
// adds DeepLIFT and contextual decomposition) with opt, each call on one
// goroutine (opt.Workers = 1) for the class asked.
func AttribMethodsOf(opt attrib.Options, ms []attrib.Method) []Method {
	opt.Workers = 1
	out := make([]Method, 0, len(ms))
	for _, m := range ms {
		out = append(out, Method{Name: m.String(), New: func(net *cell.Model) Explain {
			ex, err := attrib.NewExplainer(net)
			var res attrib.Result
			return func(ctx context.Context, x cell.Input, class int) ([]float64, error) {
				if err != nil {
					return nil, err
				}
				o := opt
				o.Class = attrib.ClassIndex(class)
				if err := ex.Attribute(ctx, m, x, o, &res); err != nil {
					return nil, err
				}
				return slices.Clone(tokenScores(&res)), nil
			}
		}})
	}
	return out
}

// tokenScores is the one place that reads a Result's token scores R_t.
func tokenScores(res *attrib.Result) []float64 { return res.Scores }

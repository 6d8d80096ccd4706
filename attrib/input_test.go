package attrib

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// TestMalformedInput (issue 39, C): an input whose declared length does
// not match its data, or whose T×D overflows an int, is an error, never a
// panic nor an allocation it sizes, for every method, one class or all of
// them, with and without a Baseline, through Attribute and a reused
// Explainer, on a white-box network, a model and a Wrapper.
func TestMalformedInput(t *testing.T) {
	net := mustNet(t, "sp-counter", whitebox.Config{})
	s := randomStackedModel(t, rand.New(rand.NewPCG(39, 3)), 4, 6, 1, true, 3, cell.HeadHN, cell.ActNone)
	var inputs []cell.Input
	// 2⁶² and 2⁴⁰ where an int holds them (a shift by a variable: on a
	// 32-bit int they are 0, an empty length, refused too).
	var s62, s40 uint = 62, 40
	for _, steps := range []int{1 << s62, 1 << s40, math.MaxInt, math.MaxInt / 4, -1, math.MinInt} {
		inputs = append(inputs, cell.Dense([]float64{}, steps), cell.Dense(nil, steps), cell.Dense(make([]float64, 4), steps))
	}
	inputs = append(inputs, cell.Dense(make([]float64, 5), 2), cell.Dense(make([]float64, 7), 1), cell.Dense(make([]float64, 3), 4))
	for _, tc := range []struct {
		name  string
		model Model
	}{{"sp-counter", net.Model}, {"stacked", s}, {"wrapper", wrapped{s}}} {
		e := mustExplainer(t, tc.model)
		for _, m := range AllMethods() {
			for _, base := range []bool{false, true} {
				opt := DefaultOptions()
				if base {
					if m != IntegratedGradients && m != Occlusion && m != DeepLIFT {
						continue
					}
					opt.Baseline = make([]float64, tc.model.Input())
				}
				for i, x := range inputs {
					where := fmt.Sprintf("%s %v baseline=%v input %d (T=%d, %d values)", tc.name, m, base, i, x.Len(), len(x.DenseValues()))
					calls := map[string]func() error{
						"Attribute": func() error { _, err := Attribute(t.Context(), tc.model, m, x, opt); return err },
						"Explainer": func() error { return e.Attribute(context.Background(), m, x, opt, new(Result)) },
						"AttributeAll": func() error {
							_, err := AttributeAll(t.Context(), tc.model, m, x, opt)
							return err
						},
						"Explainer.AttributeAll": func() error {
							return e.AttributeAll(context.Background(), m, x, opt, new(MultiResult))
						},
					}
					for name, call := range calls {
						func() {
							defer func() {
								if r := recover(); r != nil {
									t.Errorf("%s, %s: panic %v", where, name, r)
								}
							}()
							if err := call(); err == nil {
								t.Errorf("%s, %s: no error", where, name)
							}
						}()
					}
				}
			}
		}
	}
}

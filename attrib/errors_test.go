package attrib

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// shapeOnly is a Model the engine does not run.
type shapeOnly struct{}

func (shapeOnly) Input() int   { return 4 }
func (shapeOnly) Classes() int { return 2 }

// nilPointerWrapper is a Wrapper whose Stacked would fail on a nil
// receiver.
type nilPointerWrapper struct{ s *cell.Model }

func (w *nilPointerWrapper) Input() int           { return w.s.Input() }
func (w *nilPointerWrapper) Classes() int         { return w.s.Classes() }
func (w *nilPointerWrapper) Stacked() *cell.Model { return w.s }

// Issue 43: NewExplainer refuses what the engine does not run, at once,
// with an *UnsupportedError naming the type; every type Model lists is
// taken.
func TestNewExplainerErrors(t *testing.T) {
	net := mustNet(t, "sp-counter", whitebox.Config{})
	s := randomStackedModel(t, rand.New(rand.NewPCG(43, 1)), 4, 6, 1, false, 3, cell.HeadHN, cell.ActNone)
	for _, c := range []struct {
		name string
		m    Model
		typ  string
	}{
		{"nil", nil, "<nil>"},
		{"nil Model", (*cell.Model)(nil), "*cell.Model"},
		{"nil Wrapper pointer", (*nilPointerWrapper)(nil), "*attrib.nilPointerWrapper"},
		{"Wrapper of nil", wrapped{}, "attrib.wrapped"},
		{"another type", shapeOnly{}, "attrib.shapeOnly"},
	} {
		e, err := NewExplainer(c.m)
		var ue *UnsupportedError
		if e != nil || !errors.Is(err, ErrUnsupported) || !errors.As(err, &ue) || ue.Model != c.typ || ue.Method != -1 {
			t.Errorf("%s: %v, %v (%#v)", c.name, e, err, ue)
		}
	}
	for _, m := range []Model{net.Model, s, wrapped{s}, &nilPointerWrapper{s}} {
		if e, err := NewExplainer(m); e == nil || err != nil {
			t.Errorf("%T: %v", m, err)
		}
	}
	// An Explainer not made by NewExplainer is refused by every call.
	var zero Explainer
	if err := zero.Attribute(t.Context(), Saliency, cell.OneHot([]int{0}), Options{}, new(Result)); !errors.Is(err, ErrUnsupported) {
		t.Errorf("the zero Explainer: %v", err)
	}
}

// Issue 43: every error path gives its type, found by errors.Is and
// errors.As, through Attribute and AttributeAll alike.
func TestErrorTypes(t *testing.T) {
	net := mustNet(t, "sp-counter", whitebox.Config{}) // 4 symbols, 2 classes
	s := randomStackedModel(t, rand.New(rand.NewPCG(43, 2)), 4, 6, 1, false, 3, cell.HeadHN, cell.ActNone)
	s2 := randomStackedModel(t, rand.New(rand.NewPCG(43, 3)), 4, 6, 2, true, 3, cell.HeadHN, cell.ActNone)
	nan := make([]float64, 3*4)
	nan[1*4+2] = math.NaN()
	oneHot := cell.OneHot([]int{0, 1, 2})
	dense := cell.Dense(make([]float64, 3*4), 3)
	type want struct {
		is    error  // errors.Is
		field string // *OptionError's Field
		pos   int    // *InputError's Pos and Feature
		feat  int
		input bool
	}
	for _, c := range []struct {
		name  string
		model Model
		m     Method
		x     cell.Input
		opt   Options
		want  want
	}{
		{"empty one-hot", net.Model, Saliency, cell.OneHot(nil), Options{}, want{is: ErrEmptyInput, input: true, pos: -1, feat: -1}},
		{"empty dense", s, IntegratedGradients, cell.Dense(nil, 0), Options{}, want{is: ErrEmptyInput, input: true, pos: -1, feat: -1}},
		{"empty deeplift", s, DeepLIFT, cell.Dense(nil, 0), Options{}, want{is: ErrEmptyInput, input: true, pos: -1, feat: -1}},
		{"empty cd", s, ContextualDecomposition, cell.Dense(nil, 0), Options{}, want{is: ErrEmptyInput, input: true, pos: -1, feat: -1}},
		{"empty baseline", s, Occlusion, cell.Dense(nil, 0), Options{Baseline: make([]float64, 4)}, want{is: ErrEmptyInput, input: true, pos: -1, feat: -1}},
		{"symbol out of range", net.Model, LRP, cell.OneHot([]int{0, 1, 9}), Options{}, want{input: true, pos: 2, feat: -1}},
		{"value not finite", s, GradientXInput, cell.Dense(nan, 3), Options{}, want{input: true, pos: 1, feat: 2}},
		{"value not finite, baseline", s, IntegratedGradients, cell.Dense(nan, 3), Options{Baseline: make([]float64, 4)}, want{input: true, pos: 1, feat: 2}},
		{"length mismatch", s, Saliency, cell.Dense(make([]float64, 5), 2), Options{}, want{input: true, pos: -1, feat: -1}},
		{"steps", net.Model, IntegratedGradients, oneHot, Options{Steps: -5}, want{field: "Steps"}},
		{"tolerance", net.Model, IntegratedGradients, oneHot, Options{Tolerance: 2}, want{field: "Tolerance"}},
		{"max auto steps", net.Model, IntegratedGradients, oneHot, Options{MaxAutoSteps: 3}, want{field: "MaxAutoSteps"}},
		{"epsilon", net.Model, LRP, oneHot, Options{Epsilon: new(-1.0)}, want{field: "Epsilon"}},
		{"epsilon NaN", s, LRP, dense, Options{Epsilon: new(math.NaN())}, want{field: "Epsilon"}},
		{"bias factor", s, LRP, dense, Options{LRPBias: 2}, want{field: "LRPBias"}},
		{"negative class", net.Model, Saliency, oneHot, Options{Class: ClassIndex(-1)}, want{field: "Class"}},
		{"class out of range", net.Model, Saliency, oneHot, Options{Class: ClassIndex(7)}, want{field: "Class"}},
		{"class out of range, ig", s, IntegratedGradients, dense, Options{Class: ClassIndex(7)}, want{field: "Class"}},
		{"class out of range, deeplift", s, DeepLIFT, dense, Options{Class: ClassIndex(7)}, want{field: "Class"}},
		{"span not cd", net.Model, Saliency, oneHot, Options{Span: &Span{0, 1}}, want{field: "Span"}},
		{"span outside", net.Model, ContextualDecomposition, oneHot, Options{Span: &Span{1, 5}}, want{field: "Span"}},
		{"baseline width", s, IntegratedGradients, dense, Options{Baseline: make([]float64, 3)}, want{field: "Baseline"}},
		{"baseline width, deeplift", s, DeepLIFT, dense, Options{Baseline: make([]float64, 3)}, want{field: "Baseline"}},
		{"baseline NaN", s, Occlusion, dense, Options{Baseline: []float64{0, math.NaN(), 0, 0}}, want{field: "Baseline"}},
		{"budget", net.Model, Saliency, oneHot, Options{Budget: -1}, want{field: "Budget"}},
		{"workers", net.Model, Saliency, oneHot, Options{Workers: -1}, want{field: "Workers"}},
		{"method", net.Model, Method(99), oneHot, Options{}, want{field: "Method"}},
		{"baseline saliency", s, Saliency, dense, Options{Baseline: make([]float64, 4)}, want{is: ErrUnsupported}},
		{"baseline cd", s, ContextualDecomposition, dense, Options{Baseline: make([]float64, 4)}, want{is: ErrUnsupported}},
		{"baseline one-hot", net.Model, IntegratedGradients, oneHot, Options{Baseline: make([]float64, 4)}, want{is: ErrUnsupported}},
		{"bias factor, rule hao", net.Model, LRP, oneHot, Options{LRPBias: 1}, want{is: ErrUnsupported}},
		{"cd two layers", s2, ContextualDecomposition, dense, Options{}, want{is: ErrUnsupported}},
	} {
		for _, all := range []bool{false, true} {
			if all && c.opt.Class != Predicted {
				continue // AttributeAll refuses a class (below)
			}
			var err error
			if all {
				_, err = AttributeAll(t.Context(), c.model, c.m, c.x, c.opt)
			} else {
				_, err = Attribute(t.Context(), c.model, c.m, c.x, c.opt)
			}
			where := c.name
			if all {
				where += " (all)"
			}
			if err == nil {
				t.Errorf("%s: no error", where)
				continue
			}
			if c.want.is != nil && !errors.Is(err, c.want.is) {
				t.Errorf("%s: %v is not %v", where, err, c.want.is)
			}
			var ie *InputError
			if errors.As(err, &ie) != c.want.input {
				t.Errorf("%s: %v (%T): an *InputError %v", where, err, err, c.want.input)
			} else if c.want.input && (ie.Pos != c.want.pos || ie.Feature != c.want.feat) {
				t.Errorf("%s: %v at %d, %d; want %d, %d", where, err, ie.Pos, ie.Feature, c.want.pos, c.want.feat)
			}
			var oe *OptionError
			if errors.As(err, &oe) != (c.want.field != "") {
				t.Errorf("%s: %v (%T): an *OptionError %v", where, err, err, c.want.field != "")
			} else if c.want.field != "" && oe.Field != c.want.field {
				t.Errorf("%s: %v: field %q, want %q", where, err, oe.Field, c.want.field)
			}
		}
	}
	// The empty input is one error value across the packages.
	_, err := Attribute(t.Context(), net.Model, Saliency, cell.OneHot(nil), Options{})
	if !errors.Is(err, cell.ErrEmptyInput) || !errors.Is(err, whitebox.ErrEmptyInput) {
		t.Errorf("an empty input: %v", err)
	}
	if _, err := net.Task.Encode(""); !errors.Is(err, ErrEmptyInput) {
		t.Errorf("whitebox's empty string: %v", err)
	}
	if _, err := AttributeAll(t.Context(), net.Model, Saliency, oneHot, Options{Class: ClassIndex(0)}); !isOptionError(err, "Class") {
		t.Errorf("AttributeAll with a class: %v", err)
	}
}

func isOptionError(err error, field string) bool {
	var oe *OptionError
	return errors.As(err, &oe) && oe.Field == field
}

// Issue 43: every refusal for memory is a *BudgetError (errors.As), the
// trace's, the batches' and AttributeAll's results'.
func TestBudgetErrorType(t *testing.T) {
	net := mustNet(t, "sp-counter", whitebox.Config{})
	x := cell.OneHot([]int{0, 1, 2, 3, 0, 1, 2, 3})
	for _, m := range AllMethods() {
		for _, all := range []bool{false, true} {
			var err error
			opt := Options{Budget: 8}
			if all {
				_, err = AttributeAll(t.Context(), net.Model, m, x, opt)
			} else {
				_, err = Attribute(t.Context(), net.Model, m, x, opt)
			}
			var be *BudgetError
			if !errors.As(err, &be) || be.Budget != 8 || be.Need <= 8 {
				t.Errorf("%v all=%v: %v (%T)", m, all, err, err)
			}
		}
	}
}

// Issue 43: a cancelled call's error is the context's, for every method,
// one class or all, with and without a Baseline.
func TestCancelErrorType(t *testing.T) {
	net := mustNet(t, "sp-counter", whitebox.Config{})
	s := randomStackedModel(t, rand.New(rand.NewPCG(43, 4)), 4, 6, 1, false, 3, cell.HeadHN, cell.ActNone)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, c := range []struct {
		model Model
		x     cell.Input
		base  []float64
	}{
		{net.Model, cell.OneHot([]int{0, 1, 2, 3}), nil},
		{s, cell.Dense(make([]float64, 4*4), 4), nil},
		{s, cell.Dense(make([]float64, 4*4), 4), []float64{0.1, 0, 0, 0}},
	} {
		for _, m := range AllMethods() {
			if c.base != nil && m != IntegratedGradients && m != Occlusion && m != DeepLIFT {
				continue
			}
			for _, ctx := range []struct {
				ctx  context.Context
				want error
			}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
				opt := Options{Baseline: c.base}
				_, err := Attribute(ctx.ctx, c.model, m, c.x, opt)
				_, errAll := AttributeAll(ctx.ctx, c.model, m, c.x, opt)
				if !errors.Is(err, ctx.want) || !errors.Is(errAll, ctx.want) {
					t.Errorf("%T %v baseline=%v: %v and %v, want %v", c.model, m, c.base != nil, err, errAll, ctx.want)
				}
			}
		}
	}
}

package attrib

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// singleIG is Integrated Gradients on the single-input path: on one-hot
// input, one gradient at a time (Runner.Gradient), weighted and
// summed in blocks of 16 steps with one fused multiply-add per term, as
// the batches sum each lane's input gradient; on dense input, whose
// batches sum dz first, the engine's IG on one lane and one worker.
func singleIG(t *testing.T, net *cell.Model, x cell.Input, class int, q Quadrature, steps int) []float64 {
	t.Helper()
	alphas, weights := make([]float64, steps), make([]float64, steps)
	if err := Rule(q, steps, alphas, weights); err != nil {
		t.Fatal(err)
	}
	r := mustRunner(t, net)
	n := x.Len() * net.Input()
	f := make([]float64, n)
	if !x.IsOneHot() {
		choose := func([]float64) (int, error) { return class, nil }
		y, y0 := make([]float64, net.Classes()), make([]float64, net.Classes())
		if err := r.IntegratedGradients(t.Context(), x, choose, alphas, weights, f, y, y0, cell.RunOptions{Workers: 1, Lanes: 1}); err != nil {
			t.Fatal(err)
		}
		timesInput(f, x, net.Input())
		return f
	}
	const block = 16
	part, g := make([]float64, n), make([]float64, n)
	for b0 := 0; b0 < steps; b0 += block {
		clear(part)
		for k := b0; k < min(b0+block, steps); k++ {
			if _, err := r.Gradient(x.Scaled(alphas[k]), class, g); err != nil {
				t.Fatal(err)
			}
			for i := range g {
				part[i] = math.FMA(weights[k], g[i], part[i])
			}
		}
		for i := range part {
			f[i] += part[i]
		}
	}
	timesInput(f, x, net.Input())
	return f
}

// singleOcclusion is Occlusion by one Forward per occluded copy.
func singleOcclusion(t *testing.T, net *cell.Model, x cell.Input, class int) []float64 {
	t.Helper()
	ws := mustRunner(t, net)
	y, _ := ws.Forward(x)
	yc := y[class]
	d, steps := net.Input(), x.Len()
	out := make([]float64, steps)
	for p := range steps {
		var occ cell.Input
		if x.IsOneHot() {
			sym := append([]int(nil), x.Symbols()...)
			sym[p] = -1
			occ = cell.ScaledOneHot(sym, x.Scale())
		} else {
			v := append([]float64(nil), x.DenseValues()...)
			clear(v[p*d : (p+1)*d])
			occ = cell.Dense(v, steps).Scaled(x.Scale())
		}
		yo, err := ws.Forward(occ)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = yc - yo[class]
	}
	return out
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestBatchedMethodsBits: IG and Occlusion, batched and parallel, give the
// single path's bits for GOMAXPROCS 1 and 2, budgets 16 MiB, 1 GiB and a
// budget so small that backprop checkpoints with one lane, on white-box and
// dense networks.
func TestBatchedMethodsBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	type tcase struct {
		name  string
		net   *cell.Model
		x     cell.Input
		class int
	}
	var cases []tcase
	for _, name := range whitebox.Names() {
		net := mustNet(t, name, whitebox.Config{})
		s := "aabcdbca"
		if name == "bracket" {
			s = "(([[]]([])"
		} else if name == "counting" {
			s = "aababbaab"
		}
		sym, err := net.Task.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tcase{name, net.Model, cell.OneHot(sym), 0})
	}
	// A long input, whose counters saturate the gates' tanh and sigmoid
	// (whole vectors of lanes take the kernels' shortcuts).
	long := mustNet(t, "sp-counter", whitebox.Config{})
	str, err := long.Task.Generate(rng, 300, 300)
	if err != nil {
		t.Fatal(err)
	}
	sym, err := long.Task.Encode(str)
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, tcase{"sp-counter/T=300", long.Model, cell.OneHot(sym), 1})
	dn := randomNetwork(t, rng, 40, 5, 3)
	dx := make([]float64, 23*5)
	for i := range dx {
		dx[i] = rng.NormFloat64()
	}
	cases = append(cases, tcase{"dense/H=40", dn, cell.Dense(dx, 23), 2})

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range cases {
		for _, steps := range []int{1, 17, 50, 133} {
			want := singleIG(t, tc.net, tc.x, tc.class, GaussLegendre, steps)
			wantOcc := singleOcclusion(t, tc.net, tc.x, tc.class)
			for _, procs := range []int{1, 2} {
				runtime.GOMAXPROCS(procs)
				for _, budget := range []int64{16 << 20, 1 << 30, 1} {
					e := mustExplainer(t, tc.net)
					var res Result
					opt := Options{Class: ClassIndex(tc.class), Steps: steps, Budget: budget}
					if budget == 1 { // the smallest power of two that fits: tight plans, checkpoints
						opt.Budget = smallestBudget(t, e, tc.x, opt)
					}
					where := fmt.Sprintf("%s steps=%d GOMAXPROCS=%d budget=%d", tc.name, steps, procs, opt.Budget)
					if err := e.Attribute(t.Context(), IntegratedGradients, tc.x, opt, &res); err != nil {
						t.Fatal(err)
					}
					if !sameBits(res.Features, want) {
						t.Errorf("%s: IG features differ from the single path", where)
					}
					if err := e.Attribute(t.Context(), Occlusion, tc.x, opt, &res); err != nil {
						t.Fatal(err)
					}
					if !sameBits(res.Scores, wantOcc) {
						t.Errorf("%s: occlusion differs from the single path", where)
					}
				}
			}
		}
	}
}

func TestAttributeCancel(t *testing.T) {
	net := mustNet(t, "sp-counter", whitebox.Config{})
	sym, _ := net.Task.Encode("abcdabcdabcdabcdabcdabcdabcdabcd")
	e := mustExplainer(t, net.Model)
	var res Result
	ctx, cancel := context.WithCancel(context.Background())
	opt := DefaultOptions()
	opt.Steps = 500
	calls := 0
	opt.Progress = func(done, total int) {
		calls++
		if total != 500 {
			t.Errorf("progress total %d, want 500", total)
		}
		cancel()
	}
	for _, m := range []Method{IntegratedGradients, Occlusion} {
		err := e.Attribute(ctx, m, cell.OneHot(sym), opt, &res)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%v: error %v, want context.Canceled", m, err)
		}
	}
	if calls == 0 {
		t.Error("no progress reported")
	}
	// The Explainer works afterwards.
	opt.Progress = nil
	if err := e.Attribute(t.Context(), IntegratedGradients, cell.OneHot(sym), opt, &res); err != nil || math.Abs(res.Delta) > 1e-3 {
		t.Errorf("after cancellation: %v, delta %v", err, res.Delta)
	}
}

// smallestBudget returns the smallest power of two that IG and occlusion
// accept as a budget for x: smaller ones are refused with an error.
func smallestBudget(t *testing.T, e *Explainer, x cell.Input, opt Options) int64 {
	t.Helper()
	var res Result
	for b := int64(1); b < 1<<40; b *= 2 {
		opt.Budget = b
		errIG := e.Attribute(t.Context(), IntegratedGradients, x, opt, &res)
		errOcc := e.Attribute(t.Context(), Occlusion, x, opt, &res)
		if errIG == nil && errOcc == nil {
			return b
		}
		for _, err := range []error{errIG, errOcc} {
			if err != nil && !strings.Contains(err.Error(), "too small") {
				t.Fatal(err)
			}
		}
	}
	t.Fatal("no budget fits")
	return 0
}

package cell

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Model.nonzero lets the weights' products skip the kernel's scan for ±0
// coefficients (kernel.MulAddRowsNonzero): it holds only where no weight
// of the cells, W1 or Wy is ±0, and it changes no bit of IG or occlusion,
// on the whole trace, on checkpoints and on a team.
func TestNonzeroWeights(t *testing.T) {
	defer func(on bool, w int) { teamsOn, teamMinWork = on, w }(teamsOn, teamMinWork)
	rng := rand.New(rand.NewPCG(41, 42))
	for _, c := range []headCase{{2, true, HeadMean, ActReLU}, {1, false, HeadHN, ActNone}} {
		s := randomHeadStacked(t, rng, 8, 32, 3, c)
		if !s.nonzero {
			t.Fatalf("%v: random weights, but nonzero is false", c)
		}
		for i, zero := range []func(p *Params){
			func(p *Params) { p.Cells[len(p.Cells)-1].Whh = withZero(p.Cells[len(p.Cells)-1].Whh, 7) },
			func(p *Params) { p.Cells[0].Wih = withZero(p.Cells[0].Wih, 3) },
			func(p *Params) { p.Wy = withZero(p.Wy, 1) },
		} {
			p := s.Params()
			zero(&p)
			z, err := NewModel(p)
			if err != nil {
				t.Fatal(err)
			}
			if z.nonzero {
				t.Errorf("%v, weight set %d with a ±0: nonzero is true", c, i)
			}
		}
		steps, n := 23, 37
		x := randomStackedInput(rng, steps, 8)
		alphas, weights := midpointRule(n)
		choose := func([]float64) (int, error) { return 0, nil }
		run := func(opt RunOptions) []float64 {
			r, _ := NewRunner(s)
			defer r.Close()
			out := make([]float64, steps*8+6+steps)
			if err := r.IntegratedGradients(context.Background(), x, choose, alphas, weights, out[:steps*8], out[steps*8:steps*8+3], out[steps*8+3:steps*8+6], opt); err != nil {
				t.Fatal(err)
			}
			if err := r.Occlusion(context.Background(), x, 1, out[steps*8+6:], RunOptions{Workers: opt.Workers}); err != nil {
				t.Fatal(err)
			}
			return out
		}
		for _, ck := range []bool{false, true} {
			restore := func() {}
			if ck {
				restore = forceCheckpoints()
			}
			for _, team := range []bool{false, true} {
				teamsOn, teamMinWork = team, 0
				if !team {
					teamMinWork = 1 << 22
				}
				s.nonzero = false
				want := run(RunOptions{Workers: 2})
				s.nonzero = true
				got := run(RunOptions{Workers: 2})
				assertSameBits(t, fmt.Sprintf("%v, checkpoints %v, team %v", c, ck, team), got, want)
			}
			restore()
		}
	}
}

// withZero returns a copy of v with v[i] = −0.
func withZero(v []float64, i int) []float64 {
	w := append([]float64(nil), v...)
	w[i] = math.Copysign(0, -1)
	return w
}

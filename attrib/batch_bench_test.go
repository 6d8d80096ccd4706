package attrib

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

func randomString(rng *rand.Rand, alphabet []string, n int) string {
	s := make([]byte, n)
	for i := range s {
		s[i] = alphabet[rng.IntN(len(alphabet))][0]
	}
	return string(s)
}

func benchInput(b *testing.B, net *whitebox.Net, steps int) cell.Input {
	rng := rand.New(rand.NewPCG(uint64(steps), 4))
	sym, err := net.Task.Encode(randomString(rng, net.Task.Alphabet, steps))
	if err != nil {
		b.Fatal(err)
	}
	return cell.OneHot(sym)
}

// BenchmarkIGWhitebox: IG on the white-box networks (the workloads:
// sp-counter, T = 256 with 1000 steps on 1 and 2 threads, T = 4096 with
// 10 000 steps).
func BenchmarkIGWhitebox(b *testing.B) {
	for _, tc := range []struct {
		net            string
		steps, igSteps int
		threads        []int
	}{
		{"sp-counter", 256, 50, []int{1}},
		{"sp-counter", 256, 1000, []int{1, 2}},
		{"sp-fsa", 256, 1000, []int{1, 2}},
		{"sp-counter", 4096, 1000, []int{2}},
		{"sp-counter", 4096, 10000, []int{2}},
	} {
		net := mustNet(b, tc.net, whitebox.Config{})
		x := benchInput(b, net, tc.steps)
		for _, th := range tc.threads {
			b.Run(fmt.Sprintf("net=%s/t=%d/steps=%d/threads=%d", tc.net, tc.steps, tc.igSteps, th), func(b *testing.B) {
				e := mustExplainer(b, net.Model)
				var res Result
				opt := DefaultOptions()
				opt.Steps, opt.Workers = tc.igSteps, th
				e.Attribute(b.Context(), IntegratedGradients, x, opt, &res) // grow the buffers
				b.ReportAllocs()
				for b.Loop() {
					if err := e.Attribute(b.Context(), IntegratedGradients, x, opt, &res); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkOcclusionWhitebox: occlusion with prefix reuse, T = 4096.
func BenchmarkOcclusionWhitebox(b *testing.B) {
	for _, name := range []string{"sp-counter", "sp-fsa"} {
		net := mustNet(b, name, whitebox.Config{})
		x := benchInput(b, net, 4096)
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("net=%s/t=4096/threads=%d", name, th), func(b *testing.B) {
				e := mustExplainer(b, net.Model)
				var res Result
				opt := DefaultOptions()
				opt.Workers = th
				e.Attribute(b.Context(), Occlusion, x, opt, &res) // grow the buffers
				b.ReportAllocs()
				for b.Loop() {
					if err := e.Attribute(b.Context(), Occlusion, x, opt, &res); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkIGDense: IG with 50 steps on a dense random LSTM, H = 256,
// D = 128, T = 256 (dense input), 1 thread. Two rates, 2 flops per
// multiply-add:
//   - GFLOP/s: the workload's products as an α-scaled batch computes them
//     in PyTorch or Captum (forward 4H×(D+H) per α step and time step,
//     backward the same again), per second;
//   - run-GFLOP/s: the products the engine runs, which shares the input
//     products among the α steps (see cell.Model.GradientSum): W_h and
//     W_hᵀ per α step, W_x·x_t once per time step, W_xᵀ once per block of 16
//     α steps and time step (padding lanes not counted).
func BenchmarkIGDense(b *testing.B) {
	const h, d, steps, igSteps = 256, 128, 256, 50
	rng := rand.New(rand.NewPCG(5, 6))
	net := randomNetwork(b, rng, h, d, 2)
	x := make([]float64, steps*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for _, bc := range []struct {
		th     int
		budget int64
	}{{1, 0}, {1, 1 << 30}, {2, 0}} {
		th := bc.th
		b.Run(fmt.Sprintf("h=%d/d=%d/t=%d/steps=%d/threads=%d/budget=%dMiB", h, d, steps, igSteps, th, max(bc.budget, DefaultBudget)>>20), func(b *testing.B) {
			e := mustExplainer(b, net)
			var res Result
			opt := DefaultOptions()
			opt.Steps, opt.Workers, opt.Budget = igSteps, th, bc.budget
			e.Attribute(b.Context(), IntegratedGradients, cell.Dense(x, steps), opt, &res) // grow the buffers
			b.ReportAllocs()
			for b.Loop() {
				if err := e.Attribute(b.Context(), IntegratedGradients, cell.Dense(x, steps), opt, &res); err != nil {
					b.Fatal(err)
				}
			}
			flops := 2 * 2 * 4 * float64(h*(h+d)) * float64(steps*igSteps) // overflows a 32-bit int
			run := 2 * 4 * (float64(h*h)*float64(igSteps*(2*steps-1)) + float64(h*d*steps*(1+(igSteps+15)/16)))
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(flops/sec/1e9, "GFLOP/s")
			b.ReportMetric(run/sec/1e9, "run-GFLOP/s")
		})
	}
}

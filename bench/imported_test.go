package bench

import (
	"fmt"
	"sync"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
)

// ImportedModels are the imported-model cases: files of model/testdata
// (random weights, made by its gen.py) of the two shapes the model-import
// work is judged on, and bench_gru_h256, bench_h256's shape with a GRU
// layer (made by model/testdata/gru/gen_gru.py).
var ImportedModels = []string{"bench_h256", "bench_bi2_h64", "bench_gru_h256"}

// StackedForwardFLOPs counts one forward pass of an imported model over t
// tokens: 2·gH·(in+H) per step, direction and layer, g the layer's gates
// (4 for an LSTM, 3 for a GRU: r, z, n), plus the decoder.
func StackedForwardFLOPs(m *model.Model, t int) float64 {
	n := m.Net
	h, dirs := float64(n.Hidden()), float64(n.Directions())
	gates := 4.0
	if n.Kind() == cell.LayerGRU {
		gates = 3
	}
	f := 0.0
	for k := range n.Layers() {
		in := float64(n.Input())
		if k > 0 {
			in = h * dirs
		}
		f += dirs * 2 * gates * h * (in + h)
	}
	return f*float64(t) + 2*float64(n.Classes())*h*dirs
}

// importedCases are the input lengths of BenchmarkImportedIG per model:
// the 1,000-token input is the one-input-on-two-cores case of issue 21.
var importedCases = map[string][]int{"bench_h256": {200, 1000}, "bench_bi2_h64": {200}, "bench_gru_h256": {200, 1000}}

// BenchmarkImportedIG measures IG with 50 Gauss–Legendre steps (Captum's
// float32 step sizes) on the TokenIDs input of an imported model, the
// computation bench/torch/bench_ig.py times in PyTorch; GFLOP/s counts the
// workload as PyTorch runs it: a forward and a backward pass per step, and
// the two forward passes of the completeness gap. Run it with -cpu 1,2
// -benchtime 2x for one input on one and two cores (threadsNote); -short
// skips T > 200.
func BenchmarkImportedIG(b *testing.B) {
	for _, name := range ImportedModels {
		for _, t := range importedCases[name] {
			c := struct{ t, steps int }{t, 50}
			b.Run(fmt.Sprintf("model=%s/T=%d/steps=%d", name, c.t, c.steps), func(b *testing.B) {
				if testing.Short() && c.t > 200 {
					b.Skip("-short: T > 200")
				}
				m, err := model.Load("../model/testdata/"+name+".safetensors", model.Options{})
				if err != nil {
					b.Fatal(err)
				}
				x, err := m.Embed(TokenIDs(c.t, m.Vocab))
				if err != nil {
					b.Fatal(err)
				}
				e := mustExplainer(b, m.Net)
				opt := attrib.Options{Class: attrib.Predicted, Steps: c.steps, Float32Weights: true}
				var res attrib.Result
				if err := e.Attribute(b.Context(), attrib.IntegratedGradients, x, opt, &res); err != nil { // sizes the buffers
					b.Fatal(err)
				}
				b.ReportAllocs()
				n := 0
				b.ResetTimer()
				for range b.N { // not b.Loop (threadsNote)
					if err := e.Attribute(b.Context(), attrib.IntegratedGradients, x, opt, &res); err != nil {
						b.Fatal(err)
					}
					n++
				}
				sec := b.Elapsed().Seconds()
				f := float64(2*c.steps+2) * StackedForwardFLOPs(m, c.t)
				b.ReportMetric(float64(c.t*c.steps*n)/sec, "token-steps/s")
				b.ReportMetric(f*float64(n)/sec/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkImportedIGConcurrent measures two IG calls at once (50 steps,
// the 200-token bench_h256 input, an Explainer each), each with one worker
// or with every core (Workers 0): what a batch whose time steps are
// shared among cores (cell/team.go) costs when the calls
// oversubscribe the cores. Run it with -cpu 2.
func BenchmarkImportedIGConcurrent(b *testing.B) {
	m, err := model.Load("../model/testdata/bench_h256.safetensors", model.Options{})
	if err != nil {
		b.Fatal(err)
	}
	x, err := m.Embed(TokenIDs(200, m.Vocab))
	if err != nil {
		b.Fatal(err)
	}
	for _, workers := range []int{1, 0} {
		b.Run(fmt.Sprintf("calls=2/workers=%d", workers), func(b *testing.B) {
			es := []*attrib.Explainer{mustExplainer(b, m.Net), mustExplainer(b, m.Net)}
			opt := attrib.Options{Class: attrib.Predicted, Steps: 50, Float32Weights: true, Workers: workers}
			var res [2]attrib.Result
			call := func(i int) error { return es[i].Attribute(b.Context(), attrib.IntegratedGradients, x, opt, &res[i]) }
			for i := range es { // sizes the buffers
				if err := call(i); err != nil {
					b.Fatal(err)
				}
			}
			var errs [2]error
			b.ResetTimer()
			for range b.N { // not b.Loop (threadsNote)
				var wg sync.WaitGroup
				for i := range es {
					wg.Go(func() { errs[i] = call(i) })
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkImportedDeepLIFT measures DeepLIFT (the zero reference) on a
// length-200 input of an imported model; GFLOP/s counts two forward passes
// and one backward pass.
func BenchmarkImportedDeepLIFT(b *testing.B) {
	benchImported(b, attrib.DeepLIFT, func(*model.Model, int) float64 { return 3 }, 200)
}

// BenchmarkImportedOcclusion measures occlusion (the zero embedding) on
// inputs of length 200 and 48 of an imported model, in tokens (occluded
// copies) per second: a one-direction model's copies start from the
// unoccluded prefix (cell/occlusion_prefix.go), a bidirectional one's run
// whole; 48 copies are one batch, whose time steps a dense model shares
// among the cores (cell/team.go; run with -cpu 1 and 2).
func BenchmarkImportedOcclusion(b *testing.B) {
	benchImported(b, attrib.Occlusion, nil, 200, 48)
}

// benchImported measures method on the TokenIDs inputs of the given
// lengths of each imported model, with the default options; passes(m, t)
// is the number of forward passes GFLOP/s counts (nil: no GFLOP/s).
func benchImported(b *testing.B, method attrib.Method, passes func(m *model.Model, t int) float64, lengths ...int) {
	for _, name := range ImportedModels {
		for _, t := range lengths {
			b.Run(fmt.Sprintf("model=%s/T=%d", name, t), func(b *testing.B) {
				m, err := model.Load("../model/testdata/"+name+".safetensors", model.Options{})
				if err != nil {
					b.Fatal(err)
				}
				x, err := m.Embed(TokenIDs(t, m.Vocab))
				if err != nil {
					b.Fatal(err)
				}
				e := mustExplainer(b, m.Net)
				var res attrib.Result
				if err := e.Attribute(b.Context(), method, x, attrib.Options{}, &res); err != nil { // sizes the buffers
					b.Fatal(err)
				}
				b.ReportAllocs()
				n := 0
				b.ResetTimer()
				for range b.N { // not b.Loop (threadsNote)
					if err := e.Attribute(b.Context(), method, x, attrib.Options{}, &res); err != nil {
						b.Fatal(err)
					}
					n++
				}
				sec := b.Elapsed().Seconds()
				b.ReportMetric(float64(t*n)/sec, "tokens/s")
				if passes != nil {
					b.ReportMetric(passes(m, t)*StackedForwardFLOPs(m, t)*float64(n)/sec/1e9, "GFLOP/s")
				}
			})
		}
	}
}

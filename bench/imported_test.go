package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/model"
)

// ImportedModels are the imported-model cases: files of model/testdata
// (random weights, made by its gen.py) of the two shapes the model-import
// work is judged on.
var ImportedModels = []string{"bench_h256", "bench_bi2_h64"}

// importedInput is a fixed-seed input of t token ids below v.
func importedInput(t, v int) []int {
	rng := rand.New(rand.NewPCG(inputSeed, 0))
	ids := make([]int, t)
	for i := range ids {
		ids[i] = rng.IntN(v)
	}
	return ids
}

// StackedForwardFLOPs counts one forward pass of an imported model over t
// tokens: 2·4H·(in+H) per step, direction and layer, plus the decoder.
func StackedForwardFLOPs(m *model.Model, t int) float64 {
	n := m.Net
	h, dirs := float64(n.Hidden()), float64(n.Directions())
	f := 0.0
	for k := range n.Layers() {
		in := float64(n.Input())
		if k > 0 {
			in = h * dirs
		}
		f += dirs * 8 * h * (in + h)
	}
	return f*float64(t) + 2*float64(n.Classes())*h*dirs
}

// BenchmarkImportedIG measures IG with 50 Gauss–Legendre steps (Captum's
// float32 step sizes) on a length-200 input of an imported model; GFLOP/s
// counts the workload as PyTorch runs it: a forward and a backward pass per
// step, and the two forward passes of the completeness gap.
func BenchmarkImportedIG(b *testing.B) {
	for _, name := range ImportedModels {
		for _, c := range []struct{ t, steps int }{{200, 50}} {
			b.Run(fmt.Sprintf("model=%s/T=%d/steps=%d", name, c.t, c.steps), func(b *testing.B) {
				m, err := model.Load("../model/testdata/"+name+".safetensors", model.Options{})
				if err != nil {
					b.Fatal(err)
				}
				x, err := m.Embed(importedInput(c.t, m.Vocab))
				if err != nil {
					b.Fatal(err)
				}
				e := attrib.NewExplainer(m.Net)
				opt := attrib.Options{Class: attrib.Predicted, Steps: c.steps, Float32Weights: true}
				var res attrib.Result
				if err := e.Attribute(attrib.IntegratedGradients, x, opt, &res); err != nil { // sizes the buffers
					b.Fatal(err)
				}
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					if err := e.Attribute(attrib.IntegratedGradients, x, opt, &res); err != nil {
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

// BenchmarkImportedDeepLIFT measures DeepLIFT (the zero reference) on a
// length-200 input of an imported model; GFLOP/s counts two forward passes
// and one backward pass.
func BenchmarkImportedDeepLIFT(b *testing.B) {
	for _, name := range ImportedModels {
		const t = 200
		b.Run(fmt.Sprintf("model=%s/T=%d", name, t), func(b *testing.B) {
			m, err := model.Load("../model/testdata/"+name+".safetensors", model.Options{})
			if err != nil {
				b.Fatal(err)
			}
			x, err := m.Embed(importedInput(t, m.Vocab))
			if err != nil {
				b.Fatal(err)
			}
			e := attrib.NewExplainer(m.Net)
			var res attrib.Result
			if err := e.Attribute(attrib.DeepLIFT, x, attrib.Options{}, &res); err != nil { // sizes the buffers
				b.Fatal(err)
			}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if err := e.Attribute(attrib.DeepLIFT, x, attrib.Options{}, &res); err != nil {
					b.Fatal(err)
				}
				n++
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(t*n)/sec, "tokens/s")
			b.ReportMetric(3*StackedForwardFLOPs(m, t)*float64(n)/sec/1e9, "GFLOP/s")
		})
	}
}

package attrib

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// BenchmarkAllClasses: every class of one input by AttributeAll (mode=all)
// against C single-class calls (mode=separate), for saliency, LRP, IG
// (50 steps) and DeepLIFT, on sp-counter (C = 2, one-hot, T = 256) and a dense random
// one-layer model (H = 64, D = 32, C = 8, T = 128).
func BenchmarkAllClasses(b *testing.B) {
	rng := rand.New(rand.NewPCG(91, 92))
	sp := mustNet(b, "sp-counter", whitebox.Config{})
	v := make([]float64, 128*32)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	for _, tc := range []struct {
		name  string
		model Model
		x     cell.Input
	}{
		{"sp-counter/T=256", sp.Model, benchInput(b, sp, 256)},
		{"dense-H64-C8/T=128", randomNetwork(b, rng, 64, 32, 8), cell.Dense(v, 128)},
	} {
		for _, m := range []Method{Saliency, LRP, IntegratedGradients, DeepLIFT} {
			benchAllClasses(b, tc.name, tc.model, m, tc.x, Options{Steps: 50})
		}
	}
}

// benchAllClasses runs the two modes of one case.
func benchAllClasses(b *testing.B, name string, model Model, m Method, x cell.Input, opt Options) {
	for _, mode := range []string{"all", "separate"} {
		b.Run(fmt.Sprintf("model=%s/method=%v/classes=%d/mode=%s", name, m, model.Classes(), mode), func(b *testing.B) {
			e := mustExplainer(b, model)
			defer e.Release()
			var multi MultiResult
			var res Result
			run := func() {
				if mode == "all" {
					if err := e.AttributeAll(context.Background(), m, x, opt, &multi); err != nil {
						b.Fatal(err)
					}
					return
				}
				for k := range model.Classes() {
					one := opt
					one.Class = ClassIndex(k)
					if err := e.Attribute(b.Context(), m, x, one, &res); err != nil {
						b.Fatal(err)
					}
				}
			}
			run() // grow the buffers
			b.ReportAllocs()
			for b.Loop() {
				run()
			}
		})
	}
}

package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/model"
)

// BenchmarkImportedAllClasses: every class (C = 5) of a length-200 input of
// the imported models by AttributeAll (mode=all) against C single-class
// calls (mode=separate), for saliency, LRP, IG with 50 steps and DeepLIFT
// (T = 20 with -short: CI's smoke test).
func BenchmarkImportedAllClasses(b *testing.B) {
	steps := 200
	if testing.Short() {
		steps = 20
	}
	for _, name := range ImportedModels {
		m, err := model.Load("../model/testdata/"+name+".safetensors", model.Options{})
		if err != nil {
			b.Fatal(err)
		}
		x, err := m.Embed(TokenIDs(steps, m.Vocab))
		if err != nil {
			b.Fatal(err)
		}
		c := m.Net.Classes()
		for _, method := range []attrib.Method{attrib.Saliency, attrib.LRP, attrib.IntegratedGradients, attrib.DeepLIFT} {
			for _, mode := range []string{"all", "separate"} {
				b.Run(fmt.Sprintf("model=%s/T=%d/method=%v/classes=%d/mode=%s", name, steps, method, c, mode), func(b *testing.B) {
					e := mustExplainer(b, m.Net)
					defer e.Release()
					opt := attrib.Options{Steps: 50}
					var multi attrib.MultiResult
					var res attrib.Result
					run := func() {
						if mode == "all" {
							if err := e.AttributeAll(context.Background(), method, x, opt, &multi); err != nil {
								b.Fatal(err)
							}
							return
						}
						for k := range c {
							one := opt
							one.Class = attrib.ClassIndex(k)
							if err := e.Attribute(b.Context(), method, x, one, &res); err != nil {
								b.Fatal(err)
							}
						}
					}
					run() // grow the buffers
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N { // not b.Loop (threadsNote)
						run()
					}
				})
			}
		}
	}
}

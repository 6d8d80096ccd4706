package cell_test

// An external test package: it builds the benchmark suite's networks
// (package bench imports cell, which package cell's own tests cannot).

import (
	"context"
	"fmt"
	"testing"

	"github.com/whitebox-lstm/whitebox/bench"
	"github.com/whitebox-lstm/whitebox/cell"
)

// BenchmarkEngines runs the same network through both engines: the
// Network engine (Workspace for the single passes, Batcher for IG) and
// the Stacked engine (StackedRunner on the network's AsStacked form), both
// on the suite's input (one-hot, a fast path of the Stacked engine's first
// layer, or dense). Compare the engines with benchstat -col /engine.
func BenchmarkEngines(b *testing.B) {
	for _, net := range []string{"sp-fsa", "bracket", "dense-h64"} {
		for _, t := range []int{16, 256} {
			w, err := bench.NewWorkload(net, t)
			if err != nil {
				b.Fatal(err)
			}
			for _, method := range []string{"gradient", "lrp", "ig50"} {
				for _, engine := range []string{"network", "stacked"} {
					name := fmt.Sprintf("net=%s/T=%d/method=%s/engine=%s", net, t, method, engine)
					b.Run(name, func(b *testing.B) { benchEngine(b, w, method, engine) })
				}
			}
		}
	}
}

func benchEngine(b *testing.B, w *bench.Workload, method, engine string) {
	n, x := w.Network, w.Input
	out := make([]float64, x.Len()*n.Input())
	y, y0 := make([]float64, n.Classes()), make([]float64, n.Classes())
	const steps = 50
	alphas, weights := make([]float64, steps), make([]float64, steps)
	for k := range alphas {
		alphas[k] = (float64(k) + 0.5) / steps
		weights[k] = 1.0 / steps
	}
	choose := func([]float64) (int, error) { return 0, nil }
	var call func() error
	if engine == "network" {
		ws := cell.NewWorkspace(n)
		bt := cell.NewBatcher(n)
		defer bt.Close()
		switch method {
		case "gradient":
			call = func() error { _, err := n.Gradient(ws, x, 0, out); return err }
		case "lrp":
			call = func() error { _, err := n.LRP(ws, x, 0, 0.001, out); return err }
		default:
			call = func() error {
				return bt.IntegratedGradients(context.Background(), x, choose, alphas, weights, out, y, y0, cell.BatchOptions{})
			}
		}
	} else {
		s, err := n.AsStacked()
		if err != nil {
			b.Fatal(err)
		}
		xd := x // one-hot input is a fast path of the Stacked engine's first layer
		r, err := cell.NewStackedRunner(s)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		switch method {
		case "gradient":
			call = func() error { _, err := r.Gradient(xd, 0, out); return err }
		case "lrp":
			call = func() error { _, err := r.LRP(xd, 0, 0.001, 0, out); return err }
		default:
			call = func() error {
				return r.IntegratedGradients(context.Background(), xd, choose, alphas, weights, out, y, y0, cell.BatchOptions{})
			}
		}
	}
	if err := call(); err != nil { // the buffers grow once
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
}

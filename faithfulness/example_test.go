package faithfulness_test

import (
	"context"
	"fmt"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/faithfulness"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// Comprehensiveness and the ground truth rank the five methods on the
// counter-based SP network.
func ExampleRun() {
	net, err := whitebox.New("sp-counter", whitebox.Config{})
	if err != nil {
		panic(err)
	}
	rng := whitebox.NewRand(1)
	var inputs []string
	for range 50 {
		s, err := net.Task.Generate(rng, 1, 20)
		if err != nil {
			panic(err)
		}
		inputs = append(inputs, s)
	}
	t, err := faithfulness.Run(context.Background(), net, inputs, faithfulness.AttribMethods(attrib.DefaultOptions()), faithfulness.Config{Seed: 1})
	if err != nil {
		panic(err)
	}
	for m, name := range t.Methods {
		fmt.Printf("%-9s truth %5.1f%%  comp-del %.3f\n", name, t.Truth[m], t.Means[0][m])
	}
	fmt.Printf("τ-b %+.2f over %d inputs with a ground truth\n", t.Tau[0], t.Applicable)
	// Output:
	// occlusion truth  67.1%  comp-del 0.148
	// saliency  truth  50.7%  comp-del 0.039
	// gxi       truth  63.6%  comp-del 0.146
	// ig        truth  90.0%  comp-del 0.152
	// lrp       truth  56.4%  comp-del 0.127
	// τ-b +1.00 over 35 inputs with a ground truth
}

package model_test

import (
	"context"
	"fmt"
	"log"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/model"
)

// From a PyTorch state_dict to token scores: load once, then attribute
// with an Explainer per goroutine (the model is shared, read-only).
func Example() {
	m, err := model.Load("testdata/uni1.pt", model.Options{}) // or a .safetensors file
	if err != nil {
		log.Fatal(err)
	}
	x, err := m.Embed([]int{3, 14, 15, 9, 2}) // token ids → the embedded rows that are scored
	if err != nil {
		log.Fatal(err)
	}
	ex, err := attrib.NewExplainer(m) // the model's engine, m.Net
	if err != nil {
		log.Fatal(err)
	}
	defer ex.Release()
	var res attrib.Result
	opt := attrib.Options{Class: attrib.Predicted, Float32Weights: true} // Captum's float32 IG weights: its numbers to the last digit
	if err := ex.Attribute(context.Background(), attrib.IntegratedGradients, x, opt, &res); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("class %d, %d layer(s): %.4f (gap %.0e)\n", res.Class.Int(), m.Net.Layers(), res.Scores, res.Delta)
	// Output:
	// class 0, 1 layer(s): [0.0795 -0.1600 -0.1411 -0.4219 0.1398] (gap 4e-10)
}

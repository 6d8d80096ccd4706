package model_test

import (
	"fmt"
	"log"

	"github.com/whitebox-lstm/whitebox/model"
)

// What Load read from a PyTorch state_dict: the parts it found by their
// names and shapes, the head (none given, none in the file: h_n, assumed)
// and every tensor's role, as whitebox inspect prints them.
func ExampleLoad() {
	m, err := model.Load("testdata/uni1.pt", model.Options{})
	if err != nil {
		log.Fatal(err)
	}
	n := m.Net
	fmt.Printf("%s %s: embedding %q (%d tokens × %d), LSTM %q (%d layer, H = %d), decoder %q (%d classes)\n",
		m.Format, m.DType, m.Names.Embedding, m.Vocab, n.Input(), m.Names.LSTM, n.Layers(), n.Hidden(), m.Names.Decoder, n.Classes())
	fmt.Printf("head %s (%s): %s\n", m.Head, m.HeadSource, model.HeadExpression(m.Head, n.Directions()))
	for _, t := range m.Tensors {
		fmt.Printf("%-18s %v %s\n", t.Name, t.Shape, t.Role)
	}
	// Output:
	// pytorch F64: embedding "embedding" (50 tokens × 16), LSTM "lstm" (1 layer, H = 8), decoder "fc" (3 classes)
	// head hn (default): h_n[-1]
	// embedding.weight   [50 16] embedding
	// fc.bias            [3] decoder bias
	// fc.weight          [3 8] decoder weight
	// lstm.bias_hh_l0    [32] layer 0 bias_hh
	// lstm.bias_ih_l0    [32] layer 0 bias_ih
	// lstm.weight_hh_l0  [32 8] layer 0 weight_hh
	// lstm.weight_ih_l0  [32 16] layer 0 weight_ih
}

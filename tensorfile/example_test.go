package tensorfile_test

import (
	"errors"
	"fmt"

	"github.com/whitebox-lstm/whitebox/tensorfile"
)

func ExampleOpen() {
	f, err := tensorfile.Open("testdata/lstm_f32.pt")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.Format)
	for _, t := range f.Tensors {
		fmt.Println(t.Name, t.DType, t.Shape, len(t.Data))
	}
	w := f.Get("lstm.weight_ih_l0")
	fmt.Println("hidden size", w.Shape[0]/4, "input size", w.Shape[1])

	_, err = tensorfile.Open("testdata/model.pt")
	fmt.Println(errors.Is(err, tensorfile.ErrUnsupported))
	// Output:
	// pytorch
	// embedding.weight F32 [5 3] 15
	// linear.bias F32 [2] 2
	// linear.weight F32 [2 4] 8
	// lstm.bias_hh_l0 F32 [16] 16
	// lstm.bias_ih_l0 F32 [16] 16
	// lstm.weight_hh_l0 F32 [16 4] 64
	// lstm.weight_ih_l0 F32 [16 3] 48
	// hidden size 4 input size 3
	// true
}

package attrib_test

import (
	"context"
	"fmt"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// The FSA network's LRP heatmap of aacb: all relevance on the last symbol.
func ExampleAttribute() {
	net, err := whitebox.New("sp-fsa", whitebox.Config{})
	if err != nil {
		panic(err)
	}
	sym, err := net.Task.Encode("aacb")
	if err != nil {
		panic(err)
	}
	res, err := attrib.Attribute(context.Background(), net.Model, attrib.LRP, cell.OneHot(sym), attrib.DefaultOptions())
	if err != nil {
		panic(err)
	}
	fmt.Printf("class %s: %.3f\n", net.Task.Classes[res.Class.Int()], res.Scores)
	// Output: class True: [0.000 0.000 0.000 0.640]
}

package attrib_test

import (
	"context"
	"fmt"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// Contextual decomposition of the counter-based SP network on abcd: no
// single token explains the subsequence ab (each token's score is about
// 1e-22), the span ab (positions 0 to 1) does.
func ExampleSpan() {
	net, err := whitebox.New("sp-counter", whitebox.Config{})
	if err != nil {
		panic(err)
	}
	sym, err := net.Task.Encode("abcd")
	if err != nil {
		panic(err)
	}
	opt := attrib.Options{Span: &attrib.Span{Start: 0, Stop: 1}}
	res, err := attrib.Attribute(context.Background(), net.Model, attrib.ContextualDecomposition, cell.OneHot(sym), opt)
	if err != nil {
		panic(err)
	}
	fmt.Printf("class %s: tokens %.3f, span %v: %.3f\n", net.Task.Classes[res.Class.Int()], res.Scores, *opt.Span, res.SpanScore)
	// Output: class True: tokens [0.000 0.000 0.000 0.000], span 0:1: 0.533
}

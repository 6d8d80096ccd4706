package attrib_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// Every method on the counter-based SP network's accb (class True: it
// contains ab). Saliency scores every token, LRP misses the a (which does not
// move the counters, as the paper explains), and contextual decomposition
// scores each token alone, which is not ab (ExampleSpan scores the span).
func ExampleMethod() {
	net, err := whitebox.New("sp-counter", whitebox.Config{})
	if err != nil {
		panic(err)
	}
	sym, err := net.Task.Encode("accb")
	if err != nil {
		panic(err)
	}
	ex, err := attrib.NewExplainer(net.Model)
	if err != nil {
		panic(err)
	}
	defer ex.Release()
	var res attrib.Result
	for _, m := range attrib.AllMethods() {
		if err := ex.Attribute(context.Background(), m, cell.OneHot(sym), attrib.Options{}, &res); err != nil {
			panic(err)
		}
		fmt.Printf("%-9v %.4f\n", m, res.Scores)
	}
	// Output:
	// occlusion [0.5325 0.0000 0.0000 0.5325]
	// saliency  [0.2372 0.8663 1.5539 1.0127]
	// gxi       [0.2372 0.0000 0.0000 0.3127]
	// ig        [0.4876 0.0000 0.0000 0.0449]
	// lrp       [0.0000 0.0000 0.0000 0.5299]
	// deeplift  [0.2663 0.0000 0.0000 0.2663]
	// cd        [0.0000 0.0000 0.0000 0.0000]
}

// The scores of every class at once, from one forward pass: a trained
// model of three classes (model/testdata/uni1.pt) on five tokens.
func ExampleAttributeAll() {
	m, err := model.Load("../model/testdata/uni1.pt", model.Options{})
	if err != nil {
		panic(err)
	}
	x, err := m.Embed([]int{3, 14, 15, 9, 2})
	if err != nil {
		panic(err)
	}
	all, err := attrib.AttributeAll(context.Background(), m, attrib.GradientXInput, x, attrib.Options{})
	if err != nil {
		panic(err)
	}
	for c, res := range all.Results {
		fmt.Printf("class %d: %.4f\n", c, res.Scores)
	}
	// Output:
	// class 0: [-0.0048 -0.0092 0.0220 -0.1568 -0.1410]
	// class 1: [0.0008 -0.0053 -0.0788 0.1094 -0.0607]
	// class 2: [0.0122 -0.0030 0.0566 0.0027 -0.1721]
}

// A call whose context is already cancelled returns at once with an error
// that wraps context.Canceled; the Explainer stays usable.
func ExampleExplainer_Attribute() {
	net, err := whitebox.New("sp-fsa", whitebox.Config{})
	if err != nil {
		panic(err)
	}
	sym, err := net.Task.Encode("aacb")
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ex, err := attrib.NewExplainer(net.Model)
	if err != nil {
		panic(err)
	}
	var res attrib.Result
	err = ex.Attribute(ctx, attrib.IntegratedGradients, cell.OneHot(sym), attrib.Options{}, &res)
	fmt.Println("cancelled:", errors.Is(err, context.Canceled))
	if err := ex.Attribute(context.Background(), attrib.IntegratedGradients, cell.OneHot(sym), attrib.Options{}, &res); err != nil {
		panic(err)
	}
	fmt.Printf("then: %.4f\n", res.Scores)
	// Output:
	// cancelled: true
	// then: [0.0000 0.5554 0.2003 0.1158]
}

// Release gives back the scratch an Explainer keeps between calls (up to
// Options.Budget): for a long-lived Explainer after a long input. It stays
// usable, and gives the same bits.
func ExampleExplainer_Release() {
	net, err := whitebox.New("counting", whitebox.Config{})
	if err != nil {
		panic(err)
	}
	sym, err := net.Task.Encode("aabab")
	if err != nil {
		panic(err)
	}
	ex, err := attrib.NewExplainer(net.Model)
	if err != nil {
		panic(err)
	}
	var before, after attrib.Result
	if err := ex.Attribute(context.Background(), attrib.IntegratedGradients, cell.OneHot(sym), attrib.Options{}, &before); err != nil {
		panic(err)
	}
	if err := ex.Release(); err != nil {
		panic(err)
	}
	if err := ex.Attribute(context.Background(), attrib.IntegratedGradients, cell.OneHot(sym), attrib.Options{}, &after); err != nil {
		panic(err)
	}
	fmt.Printf("%s: %.4f\nsame bits after Release: %v\n", net.Task.Classes[after.Class.Int()], after.Scores, fmt.Sprint(before.Scores) == fmt.Sprint(after.Scores))
	// Output:
	// True: [0.4318 0.4318 -0.4318 0.4318 -0.4318]
	// same bits after Release: true
}

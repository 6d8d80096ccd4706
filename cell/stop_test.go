package cell_test

import (
	"context"
	"errors"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// The *Context passes end with the context's error once it is done, and
// give Gradient's and LRP's bits while it is not.
func TestPassContext(t *testing.T) {
	net, err := whitebox.New("sp-counter", whitebox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sym := make([]int, 600) // more than the 256 steps between looks
	for i := range sym {
		sym[i] = i % 4
	}
	x := cell.OneHot(sym)
	n, err := cell.NewRunner(net.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	want, got := make([]float64, 600*4), make([]float64, 600*4)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := n.GradientContext(done, x, 1, got); !errors.Is(err, context.Canceled) {
		t.Errorf("GradientContext, canceled: %v", err)
	}
	if _, err := n.LRPContext(done, x, 1, 0.001, 0, got); !errors.Is(err, context.Canceled) {
		t.Errorf("LRPContext, canceled: %v", err)
	}
	if _, err := n.ForwardContext(done, x); !errors.Is(err, context.Canceled) {
		t.Errorf("ForwardContext, canceled: %v", err)
	}
	live, stop := context.WithCancel(context.Background())
	defer stop()
	n.Gradient(x, 1, want)
	if _, err := n.GradientContext(live, x, 1, got); err != nil || !equal(got, want) {
		t.Errorf("GradientContext: %v, or other bits", err)
	}
	n.LRP(x, 1, 0.001, 0, want)
	if _, err := n.LRPContext(live, x, 1, 0.001, 0, got); err != nil || !equal(got, want) {
		t.Errorf("LRPContext: %v, or other bits", err)
	}

	m, err := model.Load("../model/testdata/bi2.safetensors", model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, 600)
	xm, err := m.Embed(ids)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cell.NewRunner(m.Net)
	if err != nil {
		t.Fatal(err)
	}
	e := m.Input()
	want, got = make([]float64, 600*e), make([]float64, 600*e)
	if _, err := r.GradientContext(done, xm, 1, got); !errors.Is(err, context.Canceled) {
		t.Errorf("Stacked GradientContext, canceled: %v", err)
	}
	if _, err := r.LRPContext(done, xm, 1, 0.001, 0, got); !errors.Is(err, context.Canceled) {
		t.Errorf("Stacked LRPContext, canceled: %v", err)
	}
	if _, err := r.ForwardContext(done, xm); !errors.Is(err, context.Canceled) {
		t.Errorf("Stacked ForwardContext, canceled: %v", err)
	}
	r.Gradient(xm, 1, want)
	if _, err := r.GradientContext(live, xm, 1, got); err != nil || !equal(got, want) {
		t.Errorf("Stacked GradientContext: %v, or other bits", err)
	}
	r.LRP(xm, 1, 0.001, 0, want)
	if _, err := r.LRPContext(live, xm, 1, 0.001, 0, got); err != nil || !equal(got, want) {
		t.Errorf("Stacked LRPContext: %v, or other bits", err)
	}
}

func equal(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

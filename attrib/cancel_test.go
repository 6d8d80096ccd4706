package attrib_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// Issue 24: every method honours cancellation within a bounded time, the
// single-pass ones (Saliency, G×I, LRP) too: a deadline far shorter than
// the call ends it with the context's error, on both engines.
func TestCancelSinglePass(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000-token inputs")
	}
	m, err := model.Load("../model/testdata/bi2.safetensors", model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, 20000)
	for i := range ids {
		ids[i] = i * 7 % 40
	}
	x, err := m.Embed(ids)
	if err != nil {
		t.Fatal(err)
	}
	net, err := whitebox.New("bracket", whitebox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sym := make([]int, 20000)
	for i := range sym {
		sym[i] = i % 2 // ( [ ( [ …: deeper than k, but the engine does not care
	}
	for _, c := range []struct {
		m attrib.Model
		x cell.Input
	}{{m, x}, {net.Model, cell.OneHot(sym)}} {
		e := mustExplainer(t, c.m)
		for _, method := range []attrib.Method{attrib.Saliency, attrib.GradientXInput, attrib.LRP} {
			var res attrib.Result
			start := time.Now()
			if err := e.Attribute(t.Context(), method, c.x, attrib.Options{}, &res); err != nil {
				t.Fatal(err)
			}
			full := time.Since(start)
			if full < 20*time.Millisecond {
				t.Skipf("%T %v takes only %v: too fast to cancel midway", c.m, method, full)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			start = time.Now()
			err := e.Attribute(ctx, method, c.x, attrib.Options{}, &res)
			took := time.Since(start)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%T %v: a 1 ms deadline on a %v call gave %v", c.m, method, full, err)
			}
			t.Logf("%T %v: %v in full, %v with a 1 ms deadline", c.m, method, full, took)
			// The Explainer still works after a cut pass.
			if err := e.Attribute(t.Context(), method, c.x, attrib.Options{}, &res); err != nil {
				t.Fatal(err)
			}
		}
	}
}

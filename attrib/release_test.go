package attrib_test

import (
	"runtime"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// heapAfter runs f and returns the heap bytes still reachable after it.
func heapAfter(f func()) uint64 {
	f()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// longIG runs IG on a 2,000-token input of a 2-layer bidirectional model
// with the default budget, and returns the heap the Explainer holds
// afterwards, before and after Release.
func longIG(tb testing.TB) (before, after uint64) {
	m, err := model.Load("../model/testdata/bi2.safetensors", model.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	ids := make([]int, 2000)
	for i := range ids {
		ids[i] = (i * 7) % 40
	}
	x, err := m.Embed(ids)
	if err != nil {
		tb.Fatal(err)
	}
	return retained(tb, m, x)
}

// retained runs IG on x and returns the heap the Explainer holds
// afterwards, before and after Release.
func retained(tb testing.TB, m attrib.Model, x cell.Input) (before, after uint64) {
	base := heapAfter(func() {})
	e := mustExplainer(tb, m)
	var res attrib.Result
	held := heapAfter(func() {
		if err := e.Attribute(tb.Context(), attrib.IntegratedGradients, x, attrib.Options{}, &res); err != nil {
			tb.Fatal(err)
		}
	})
	released := heapAfter(func() {
		if err := e.Release(); err != nil {
			tb.Fatal(err)
		}
	})
	// Still usable after Release.
	if err := e.Attribute(tb.Context(), attrib.Saliency, x, attrib.Options{}, &res); err != nil {
		tb.Fatal(err)
	}
	// Release again: an Explainer dropped with its scratch would keep it
	// until the runtime's cleanup stops its worker goroutines, which may
	// come after the next call's first measurement (base) and make the
	// scratch that call holds look smaller by this one's.
	if err := e.Release(); err != nil {
		tb.Fatal(err)
	}
	return held - min(held, base), released - min(released, base)
}

// Issue 24: a long-lived Explainer gives its scratch back: after a
// 2,000-token IG and Release it holds at most a few MB (the Result's
// scores and features included).
func TestReleaseScratch(t *testing.T) {
	if testing.Short() {
		t.Skip("a 2,000-token IG")
	}
	net, err := whitebox.New("sp-counter", whitebox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sym := make([]int, 20000)
	for i := range sym {
		sym[i] = i % 4
	}
	before, after := retained(t, net.Model, cell.OneHot(sym))
	t.Logf("sp-counter, 20,000 symbols: held after IG: %.1f MB; after Release: %.2f MB", float64(before)/1e6, float64(after)/1e6)
	if after > 4<<20 || before < after+(8<<20) {
		t.Errorf("a white-box network's Explainer holds %d bytes before Release, %d after", before, after)
	}
	before, after = longIG(t)
	t.Logf("held after IG: %.1f MB; after Release: %.2f MB", float64(before)/1e6, float64(after)/1e6)
	if after > 4<<20 {
		t.Errorf("after Release the Explainer holds %d bytes", after)
	}
	if before < after+(8<<20) {
		t.Errorf("IG's scratch (%d bytes held before Release, %d after) is too small to tell", before, after)
	}
}

// BenchmarkRetainedAfterRelease reports the heap a long-lived Explainer
// holds after a 2,000-token IG, before and after Release.
func BenchmarkRetainedAfterRelease(b *testing.B) {
	var before, after uint64
	for range b.N {
		before, after = longIG(b)
	}
	b.ReportMetric(float64(before)/1e6, "MB-held")
	b.ReportMetric(float64(after)/1e6, "MB-after-Release")
}

// After Release an Explainer gives the same bits as before, for both
// engines and with helper goroutines.
func TestReleaseSameBits(t *testing.T) {
	m, err := model.Load("../model/testdata/bi2.safetensors", model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := m.Embed([]int{3, 1, 4, 1, 5, 9, 2, 6})
	if err != nil {
		t.Fatal(err)
	}
	net, err := whitebox.New("sp-counter", whitebox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m attrib.Model
		x cell.Input
	}{{m, x}, {net.Model, cell.OneHot([]int{0, 2, 2, 1, 3, 0, 1})}} {
		e := mustExplainer(t, c.m)
		for _, method := range attrib.Methods() {
			var a, b attrib.Result
			opt := attrib.Options{Workers: 2, Budget: 1 << 20}
			if err := e.Attribute(t.Context(), method, c.x, opt, &a); err != nil {
				t.Fatal(err)
			}
			if err := e.Release(); err != nil {
				t.Fatal(err)
			}
			if err := e.Attribute(t.Context(), method, c.x, opt, &b); err != nil {
				t.Fatal(err)
			}
			for i := range a.Scores {
				if a.Scores[i] != b.Scores[i] {
					t.Fatalf("%T %v: score %d: %v before Release, %v after", c.m, method, i, a.Scores[i], b.Scores[i])
				}
			}
		}
	}
}

package attrib_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/model"
)

// releaseCase is one call whose Explainer is released afterwards.
type releaseCase struct {
	name string
	m    attrib.Method
	opt  attrib.Options
	all  bool // AttributeAll
	uni  bool // on uni1 (contextual decomposition's model), else bi2
}

func releaseCases() []releaseCase {
	row := make([]float64, 12) // bi2's embedding width
	for i := range row {
		row[i] = 0.1 * float64(i%5)
	}
	var cs []releaseCase
	for _, m := range []attrib.Method{attrib.Occlusion, attrib.Saliency, attrib.GradientXInput, attrib.IntegratedGradients, attrib.LRP, attrib.DeepLIFT} {
		cs = append(cs, releaseCase{name: m.String(), m: m})
		cs = append(cs, releaseCase{name: m.String() + "/all", m: m, all: true})
	}
	for _, m := range []attrib.Method{attrib.Occlusion, attrib.IntegratedGradients, attrib.DeepLIFT} {
		cs = append(cs, releaseCase{name: m.String() + "/baseline", m: m, opt: attrib.Options{Baseline: row}})
		cs = append(cs, releaseCase{name: m.String() + "/baseline/all", m: m, opt: attrib.Options{Baseline: row}, all: true})
	}
	cs = append(cs,
		releaseCase{name: "ig/auto", m: attrib.IntegratedGradients, opt: attrib.Options{Steps: attrib.AutoSteps, MaxAutoSteps: 64}},
		releaseCase{name: "ig/auto/all", m: attrib.IntegratedGradients, opt: attrib.Options{Steps: attrib.AutoSteps, MaxAutoSteps: 64}, all: true},
		releaseCase{name: "cd", m: attrib.ContextualDecomposition, uni: true},
		releaseCase{name: "cd/span", m: attrib.ContextualDecomposition, opt: attrib.Options{Span: &attrib.Span{Start: 3, Stop: 40}}, uni: true},
		releaseCase{name: "cd/all", m: attrib.ContextualDecomposition, all: true, uni: true},
	)
	return cs
}

// heapNow is the heap still reachable after two collections.
func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// goroutinesBackTo waits (boundedly) for the goroutine count to fall to n
// and returns the last count.
func goroutinesBackTo(n int) int {
	g := runtime.NumGoroutine()
	for deadline := time.Now().Add(2 * time.Second); g > n && time.Now().Before(deadline); g = runtime.NumGoroutine() {
		time.Sleep(5 * time.Millisecond)
	}
	return g
}

// Issue 43: Release gives back everything an Explainer keeps, for every
// method and option: the baseline's shifted model and its engine,
// contextual decomposition's engine, AttributeAll's and DeepLIFT's
// scratch. After Release the heap is within 2 MiB of what it was before
// the Explainer existed, and its goroutines have ended.
func TestReleaseEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("long inputs")
	}
	bi2, err := model.Load("../model/testdata/bi2.safetensors", model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	uni1, err := model.Load("../model/testdata/uni1.safetensors", model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, 1500)
	for i := range ids {
		ids[i] = (i * 7) % 40
	}
	xBi, err := bi2.Embed(ids)
	if err != nil {
		t.Fatal(err)
	}
	xUni, err := uni1.Embed(ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range releaseCases() {
		t.Run(c.name, func(t *testing.T) {
			c.opt.Budget = 32 << 20 // tens of MiB of scratch, occlusion's lanes too
			m, x := bi2, xBi
			if c.uni {
				m, x = uni1, xUni
			}
			g0 := runtime.NumGoroutine()
			base := heapNow()
			e := mustExplainer(t, m)
			func() {
				var err error
				if c.all {
					var res attrib.MultiResult
					err = e.AttributeAll(t.Context(), c.m, x, c.opt, &res)
				} else {
					var res attrib.Result
					err = e.Attribute(t.Context(), c.m, x, c.opt, &res)
				}
				if err != nil {
					t.Fatal(err)
				}
			}()
			held := heapNow()
			if err := e.Release(); err != nil {
				t.Fatal(err)
			}
			after := heapNow()
			runtime.KeepAlive(e)
			runtime.KeepAlive(m)
			runtime.KeepAlive(x)
			mib := func(n uint64) float64 { return float64(n) / (1 << 20) }
			held, after = held-min(held, base), after-min(after, base)
			t.Logf("%-20s held %8.2f MiB, after Release %6.3f MiB", c.name, mib(held), mib(after))
			if after > 2<<20 {
				t.Errorf("after Release the Explainer holds %.2f MiB (%.2f MiB before Release)", mib(after), mib(held))
			}
			if g := goroutinesBackTo(g0); g > g0 {
				t.Errorf("%d goroutines after Release, %d before the Explainer", g, g0)
			}
		})
	}
}

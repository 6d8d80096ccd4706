package attrib

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// heapBytes is the live heap after a collection.
func heapBytes() (live, total uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.TotalAlloc
}

// TestAttributeAllMemory (issue 39, A): every class's results count
// against the budget. With 10,000 classes and one token, each class
// keeping its own copy of the C logits took C² = 10⁸ float64s (800 MB);
// now they share one. A budget below AllBytes is a *cell.BudgetError
// before the results are allocated; within a budget, the results
// (measured after the Explainer's Release) stay within AllBytes, and the
// call's whole allocation (results and the engine's scratch, each bounded
// by the budget) within twice the budget.
func TestAttributeAllMemory(t *testing.T) {
	const classes = 10000
	s := randomStackedModel(t, rand.New(rand.NewPCG(39, 1)), 2, 2, 1, false, classes, cell.HeadHN, cell.ActNone)
	x := cell.Dense([]float64{0.5, -1}, 1)
	for _, m := range AllMethods() {
		for _, steps := range []int{0, AutoSteps} {
			if steps == AutoSteps && m != IntegratedGradients {
				continue
			}
			opt := Options{Steps: steps}
			e := mustExplainer(t, s)
			need := e.AllBytes(m, x.Len(), false, opt)
			if need < classes*8 || need > 64<<20 {
				t.Fatalf("%v: AllBytes %d for %d classes", m, need, classes)
			}

			// (a) Refused before anything is sized by the classes.
			opt.Budget = need - 1
			var res MultiResult
			_, before := heapBytes()
			err := e.AttributeAll(context.Background(), m, x, opt, &res)
			_, after := heapBytes()
			var be *cell.BudgetError
			if !errors.As(err, &be) || be.Budget != need-1 || !strings.Contains(err.Error(), "classes") {
				t.Errorf("%v steps=%d: budget %d below AllBytes %d: error %v, want a budget error naming the classes", m, steps, need-1, need, err)
			}
			if got := int64(after - before); got > need/4 {
				t.Errorf("%v steps=%d: a refused call allocated %d bytes (its results would need %d)", m, steps, got, need)
			}

			// (b) A budget that fits: 16 MiB, where IG's engine shares
			// its batches among the classes (below about 4 MiB it runs
			// them one class after another: seconds).
			const budget = 16 << 20
			opt.Budget = budget
			if err := e.Release(); err != nil {
				t.Fatal(err)
			}
			res = MultiResult{}
			live0, total0 := heapBytes()
			if err := e.AttributeAll(context.Background(), m, x, opt, &res); err != nil {
				t.Fatalf("%v steps=%d: %v", m, steps, err)
			}
			_, total := heapBytes()
			if err := e.Release(); err != nil {
				t.Fatal(err)
			}
			live, _ := heapBytes()
			results, all := int64(live-live0), int64(total-total0)
			t.Logf("%v steps=%d: budget %d KiB, AllBytes %d KiB: results %d KiB, allocated %d KiB", m, steps, budget>>10, need>>10, results>>10, all>>10)
			if results > need {
				t.Errorf("%v steps=%d: the results of %d classes take %d bytes, more than AllBytes %d (budget %d)", m, steps, classes, results, need, budget)
			}
			if all > 2*budget {
				t.Errorf("%v steps=%d: the call allocated %d bytes, more than twice the budget %d", m, steps, all, budget)
			}
			if len(res.Results) != classes || &res.Results[0].Logits[0] != &res.Results[classes-1].Logits[0] {
				t.Errorf("%v steps=%d: the classes' logits are not one shared slice", m, steps)
			}
		}
	}
}

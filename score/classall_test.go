package score

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/internal/testmodel"
)

// manyClasses writes a model of c classes (testmodel.ManyClasses).
func manyClasses(t testing.TB, c int) string {
	t.Helper()
	path, err := testmodel.ManyClasses(t.TempDir(), c)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// allocated is the bytes allocated by f, and the live heap it leaves,
// after collections.
func allocated(f func()) (total, live int64) {
	var a, b, c runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	runtime.GC()
	runtime.ReadMemStats(&c)
	return int64(b.TotalAlloc - a.TotalAlloc), int64(c.HeapAlloc) - int64(a.HeapAlloc)
}

// TestClassAllBudget (issue 39, A): -class all counts every class's
// results and output against the input's share of -budget. With 20,000
// classes and one token, each class kept its own copy of the logits
// (3.2 GB) after an estimate of 2.2 MB: a share too small (4 MiB) is now
// refused before the results are allocated, and the line, its results,
// the engine and the JSON, takes less than -budget (about 13 MB).
func TestClassAllBudget(t *testing.T) {
	model := manyClasses(t, 20000)
	for _, method := range []string{"saliency", "occlusion", "ig", "lrp", "deeplift"} {
		cfg := DefaultConfig()
		cfg.Model, cfg.Method, cfg.Class, cfg.Workers = model, method, AllClasses, 1
		cfg.Budget = "8MiB" // an input's share: 4 MiB
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		total, _ := allocated(func() { err = s.Line(context.Background(), "1", &out) })
		if err == nil || !strings.Contains(err.Error(), "raise -budget") || !strings.Contains(err.Error(), "20000 classes") {
			t.Errorf("%s, -budget %s: error %v, want a refusal naming the classes and -budget", method, cfg.Budget, err)
		}
		if total > 1<<20 {
			t.Errorf("%s, -budget %s: the refused line allocated %d bytes", method, cfg.Budget, total)
		}

		cfg.Budget = "64MiB"
		budget, _ := ParseSize(cfg.Budget)
		if s, err = New(cfg); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		total, live := allocated(func() { err = s.Line(context.Background(), "1", &out) })
		runtime.KeepAlive(s) // its results are part of live
		if err != nil {
			t.Fatalf("%s, -budget %s: %v", method, cfg.Budget, err)
		}
		t.Logf("%s, -budget %s: the line allocated %d KiB, keeps %d KiB; its JSON is %d KiB", method, cfg.Budget, total>>10, live>>10, out.Len()>>10)
		if total > budget || live > budget {
			t.Errorf("%s, -budget %s: the line allocated %d bytes and keeps %d, more than the budget %d", method, cfg.Budget, total, live, budget)
		}
		if !strings.Contains(out.String(), `"19999":`) {
			t.Errorf("%s: the record lacks the last class's logit", method)
		}
	}
}

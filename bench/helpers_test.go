package bench

import (
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
)

// mustExplainer is attrib.NewExplainer(m), failing the test on its error.
func mustExplainer(tb testing.TB, m attrib.Model) *attrib.Explainer {
	tb.Helper()
	e, err := attrib.NewExplainer(m)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// threadsNote: the benchmarks whose work depends on GOMAXPROCS (Workers 0:
// every core) loop b.N times, not with b.Loop, so that `-cpu 1,2` measures
// each entry at its own GOMAXPROCS. The testing package runs a benchmark
// once (N = 1) before it sets the first -cpu entry's GOMAXPROCS
// (golang/go#49980), and b.Loop ramps up to the whole measurement in that
// first run: the first entry was then measured at the previous
// GOMAXPROCS (seen here: the "1-thread" runs of BenchmarkImportedIG with
// `-cpu 1,2` ran on a team of two). With b.N that first run is one
// iteration, run again at the right GOMAXPROCS, unless it outlasts
// -benchtime: cases of seconds need -benchtime 2x (or one -cpu value per
// process).

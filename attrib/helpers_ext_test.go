package attrib_test

import (
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
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

// mustRunner returns a runner of s, closed at the end of the test.
func mustRunner(tb testing.TB, s *cell.Model) *cell.Runner {
	tb.Helper()
	r, err := cell.NewRunner(s)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

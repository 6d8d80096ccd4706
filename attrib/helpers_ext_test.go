package attrib_test

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

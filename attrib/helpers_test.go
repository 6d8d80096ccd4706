package attrib

import "testing"

// mustExplainer is NewExplainer(m), failing the test on its error.
func mustExplainer(tb testing.TB, m Model) *Explainer {
	tb.Helper()
	e, err := NewExplainer(m)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

package export

import (
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

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

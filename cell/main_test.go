package cell

import (
	"os"
	"testing"
)

// TestMain lets the package's tests run their small inputs on several
// workers, which callWorkers would give one: the bit-parity tests compare
// every worker count. TestCallWorkers checks the thresholds themselves.
// Teams split products from 4 Mi multiply-adds, as when the tests were
// written (teamMinWork is 1 Mi since issue 40; the team tests set their
// own): a team's hand-overs are slow where the tests run emulated (qemu).
func TestMain(m *testing.M) {
	parallelMinWork, sparseSplitMinWork = 0, 0
	teamMinWork = 1 << 22
	os.Exit(m.Run())
}

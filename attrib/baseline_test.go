package attrib

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// One-hot input (a white-box network's) takes no Baseline: it is refused,
// named.
func TestBaselineOneHotRefused(t *testing.T) {
	net := randomNetwork(t, rand.New(rand.NewPCG(1, 2)), 3, 2, 2)
	_, err := Attribute(t.Context(), net, IntegratedGradients, cell.OneHot([]int{0, 1}), Options{Baseline: []float64{0, 0}})
	if err == nil || !strings.Contains(err.Error(), "Baseline is for dense input") {
		t.Fatalf("%v", err)
	}
}

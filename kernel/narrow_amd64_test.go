//go:build !purego

package kernel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestNarrowBodies checks both bodies AVX-512's products of at most
// narrowLanes lanes can run on (narrow_amd64.go) against the twin, on
// misaligned windows with ±0, saturated and non-finite values, and that
// wider products are unaffected by the choice.
func TestNarrowBodies(t *testing.T) {
	if !supported[implAVX512] {
		t.Skipf("avx512 is not supported on this machine (%s)", Machine())
	}
	defer setImpl("avx512")()
	t.Logf("this core runs narrow products on avx2: %v", narrowOnAVX2())
	for _, onAVX2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("avx2=%v", onAVX2), func(t *testing.T) {
			defer setNarrow(onAVX2)()
			rng := rand.New(rand.NewPCG(31, 1))
			for n := 1; n <= narrowLanes+2; n++ {
				for off := range 8 {
					m := []int{1, 4, 5, 6, 7, 12, 13, 25}[(off+n)%8]
					k := []int{1, 2, 3, 9, 17, 40, 0, 64}[(off+2*n)%8]
					checkMulAddRows(t, rng, n, m, k, off)
				}
			}
		})
	}
}

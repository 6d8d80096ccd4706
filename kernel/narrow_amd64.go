//go:build !purego

package kernel

import (
	"strconv"
	"sync"
	"time"
)

// Products of at most 8 lanes fill one AVX-512 vector a row or less. The
// AVX-512 body's tile is then 6 rows × 1 vector (6 accumulators against
// the FMA's latency), the AVX2 body's 4 rows × 2 vectors of 4 lanes (8).
// Which is faster depends on the core: on an AMD EPYC Zen 4 core, whose
// 512-bit FMAs are double-pumped (1 thread, h = 128, weights without ±0:
// MulAddRowsNonzero), AVX-512 ran 38.7 GFLOP/s and AVX2 52.6 at 8 lanes,
// 23.6 and 28.9 at 4; a core with two 512-bit FMA units may keep the wider
// tile ahead. Both bodies give the same bits (TestNarrowBodies), so the
// choice, made once by timing both (probeNarrow), changes only speed.
const narrowLanes = 8

var narrow struct {
	once sync.Once
	avx2 bool // AVX-512's products of at most narrowLanes lanes run on the AVX2 bodies
}

// narrowOnAVX2 reports whether, under AVX-512, products of at most
// narrowLanes lanes run on the AVX2 bodies; the first call times both.
func narrowOnAVX2() bool {
	narrow.once.Do(func() { narrow.avx2 = supported[implAVX2] && probeNarrow() })
	return narrow.avx2
}

// probeNarrow times the AVX-512 and AVX2 bodies on one product of the
// batched engine's shape (4H × H weights without ±0, as trained models'
// weights run them: MulAddRowsNonzero; H = 64, times 8 lanes: 128 KiB of
// weights, in L2, about 10 µs; the choice holds for every product of at
// most 8 lanes) in 16 rounds, each body first in every other round, and
// reports whether the AVX2 bodies' best round is at least 10 % faster.
// About a millisecond, once a process. On the Zen 4 core AVX2's best took
// 0.753–0.758 of AVX-512's (30 processes), and the probe chose AVX2 in 136
// of 142 processes on the otherwise idle machine (6 of the first 52 kept
// AVX-512, none of the last 90). Timing the products with their scan for
// ±0 (before MulAddRowsNonzero), it chose AVX2 in all of 65 processes,
// quiet or beside two benchmarks and a build on the 2 cores, and kept
// AVX-512, the choice before the probe, in 12 of 20 and 2 of 25 beside the
// build of every package's tests from an empty cache (load average 5.6).
// A choice made under such load costs speed, never bits.
func probeNarrow() bool {
	const n, h, rounds, calls = narrowLanes, 64, 16, 4
	m := 4 * h
	rows, coef, dst := make([]float64, h*n), make([]float64, m*h), make([]float64, m*n)
	for i := range rows {
		rows[i] = 0.5 + float64(i%5)/8
	}
	for i := range coef { // no ±0, as the probe runs the product without its scan
		coef[i] = 0.01 + float64(i%7)/512
	}
	best := [2]time.Duration{1 << 62, 1 << 62}
	for round := range rounds {
		for i := range 2 {
			b := i ^ round&1 // A B, then B A: neither body always goes first
			start := time.Now()
			for range calls {
				mulAddRowsOn([2]int{implAVX512, implAVX2}[b], dst, n, rows, n, coef, h, h, true)
			}
			best[b] = min(best[b], time.Since(start))
		}
	}
	return 10*best[1] < 9*best[0]
}

// setNarrow makes AVX-512's narrow products run on the AVX2 bodies or not
// and returns a function that restores the choice (tests only).
func setNarrow(avx2 bool) (restore func()) {
	old := narrowOnAVX2()
	narrow.avx2 = avx2 && supported[implAVX2]
	return func() { narrow.avx2 = old }
}

// implNote is Machine's word on the bodies beside Impl: under AVX-512, the
// narrow products' choice.
func implNote() string {
	if impl == implAVX512 && narrowOnAVX2() {
		return " (avx2 at ≤ " + strconv.Itoa(narrowLanes) + " lanes)"
	}
	return ""
}

//go:build !purego

package peak

import "golang.org/x/sys/cpu"

// 16 accumulators of 8 lanes, 12 of 4: more than FMA latency × units, so
// that the loop runs at the units' throughput.
var kernels = []Kernel{
	{Name: "avx512", Flops: 2 * 8 * 16, run: fma512, ok: func() bool { return cpu.X86.HasAVX512F }},
	{Name: "avx2", Flops: 2 * 4 * 12, run: fma256, ok: func() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA }},
}

//go:noescape
func fma512(n int)

//go:noescape
func fma256(n int)

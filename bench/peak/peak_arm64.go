//go:build !purego

package peak

// 16 accumulators of 2 lanes.
var kernels = []Kernel{
	{Name: "neon", Flops: 2 * 2 * 16, run: fmaNEON, ok: func() bool { return true }},
}

//go:noescape
func fmaNEON(n int)

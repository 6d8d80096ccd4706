// Package kernel holds the numeric kernels of the LSTM on flat []float64
// slices: the gate pre-activation product, the fused gate step, its backward
// step and the LRP ε-redistribution, plus deterministic Exp, Sigmoid and Tanh.
//
// Every kernel is specified by a plain Go loop, its generic twin
// (*_generic.go). Faster implementations must produce the same bits as the
// twin, so the twins are written as the exact sequence of IEEE operations a
// vector unit performs: math.FMA where a fused multiply-add is meant, and
// float64(a*b) where a product must be rounded before it is used (the Go spec
// lets the compiler fuse a plain a*b+c, and it does so on GOAMD64=v3 and
// arm64, which would change the twin's own bits with the build flags).
//
// Kernels check nothing: the caller (package cell) validates dimensions and
// rejects NaN/Inf weights once, when a network is built. The exported entry
// points only reslice their arguments to the lengths they compute, so that a
// short slice panics in Go instead of being overrun by an optimized body.
//
// Sums over a matrix are written as axpys over rows ("z += x[j]·row_j for j in
// order"), never as dot products: every vector lane then accumulates in the
// same order as the scalar loop, whatever the vector width. Rows whose
// coefficient is exactly zero are skipped. Skipping a term with a zero
// factor never changes a bit as long as the accumulator is not −0 (finite
// x: z + (±0) = z for z ≠ 0, and +0 + (±0) = +0), which package cell
// guarantees by starting every sum at +0 or at a bias normalized from −0 to
// +0. Kernels that vectorize differently (across a batch, say) may therefore
// skip zeros of either factor and still agree to the bit.
package kernel

//go:build linux && (amd64 || arm64)

package cell

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on the platforms Linux
// runs this package on (x86-64 and arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// bigFloats is make([]float64, n), asking the kernel to back the huge pages
// that lie wholly inside it with huge pages (madvise MADV_HUGEPAGE) when it
// holds two or more: a trace is written once per step, and a one-shot
// process otherwise takes a page fault for every 4 KiB of it. Measured on
// the 2-core VM (transparent huge pages on "madvise"), the CLI's IG on 200
// tokens of the H = 256 model: 26,454 → 6,029 page faults, 0.57 → 0.45 s
// with GOMAXPROCS=1; 14,556 → 5,546, 0.46 → 0.37 s with two cores. Where
// the kernel says no (huge pages off, or not enough of them), nothing
// changes: the advice is only advice.
func bigFloats(n int) []float64 {
	v := make([]float64, n)
	if n < hugeFloatsMin {
		return v
	}
	base := unsafe.Pointer(unsafe.SliceData(v))
	p := uintptr(base)
	a := (p + hugePage - 1) &^ (hugePage - 1)
	e := (p + uintptr(n*8)) &^ (hugePage - 1)
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(base, a-p)), e-a), madvHugePage)
	return v
}

// hugeFloatsMin is the least length bigFloats advises on: two huge pages,
// so that at least one lies wholly inside.
const hugeFloatsMin = 2 * hugePage / 8

// madvHugePage is MADV_HUGEPAGE on amd64 and arm64 (the syscall package
// does not name it).
const madvHugePage = 14

package kernel

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/klauspost/cpuid/v2"
)

// Machine describes the processor for version output, test logs and
// benchmark headers: brand, x86-64 microarchitecture level, L1 data and L2
// cache sizes, and the kernel implementation in use (Impl). It only
// describes: the implementation is chosen from golang.org/x/sys/cpu.
func Machine() string {
	var b strings.Builder
	brand := cpuid.CPU.BrandName
	if brand == "" {
		brand = "unknown CPU"
	}
	fmt.Fprintf(&b, "%s (%s/%s", brand, runtime.GOOS, runtime.GOARCH)
	if l := cpuid.CPU.X64Level(); l > 0 {
		fmt.Fprintf(&b, ", x86-64-v%d", l)
	}
	b.WriteString(")")
	if c := cpuid.CPU.Cache.L1D; c > 0 {
		fmt.Fprintf(&b, ", L1D %d KiB", c>>10)
	}
	if c := cpuid.CPU.Cache.L2; c > 0 {
		fmt.Fprintf(&b, ", L2 %d KiB", c>>10)
	}
	fmt.Fprintf(&b, ", kernel %s%s", Impl(), implNote())
	return b.String()
}

// Typical cache sizes, for processors that report none (arm64 here, some
// virtual machines).
const (
	typicalL1D = 32 << 10
	typicalL2  = 1 << 20
)

// Caches returns the sizes in bytes of the L1 data cache and the L2 cache
// of one core, as the processor reports them, or typical sizes (32 KiB,
// 1 MiB) where it reports none. Package cell sizes its blocks from them;
// blocking changes speed, never a result.
func Caches() (l1d, l2 int) {
	l1d, l2 = cpuid.CPU.Cache.L1D, cpuid.CPU.Cache.L2
	if l1d <= 0 {
		l1d = typicalL1D
	}
	if l2 <= 0 {
		l2 = typicalL2
	}
	return l1d, l2
}

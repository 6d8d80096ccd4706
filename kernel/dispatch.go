package kernel

import "fmt"

// The implementations of the kernels. Every one of them produces the same
// bits as the generic twins; they differ only in speed.
const (
	implGeneric = iota // the pure-Go twins (*_generic.go)
	implAVX2           // amd64 AVX2+FMA, 4 lanes (kernel_amd64.s)
	implAVX512         // amd64 AVX-512F, 8 lanes (kernel_amd64.s)
	implNEON           // arm64 ASIMD, 2 lanes (kernel_arm64.s)
)

var implNames = [...]string{
	implGeneric: "generic",
	implAVX2:    "avx2",
	implAVX512:  "avx512",
	implNEON:    "neon",
}

// impl is the implementation the kernels call. It is set once, in the
// architecture's init (kernel_amd64.go, kernel_arm64.go), from
// golang.org/x/sys/cpu, and changed afterwards only by setImpl in tests and
// benchmarks.
var impl = implGeneric

// supported[k] says whether implementation k can run on this machine.
var supported = [len(implNames)]bool{implGeneric: true}

// Impl returns the name of the implementation the kernels use: "avx512",
// "avx2", "neon" or "generic" (the pure-Go twins, as with -tags purego or on
// other architectures). GODEBUG=cpu.avx512f=off or cpu.avx2=off narrow the
// choice on amd64.
func Impl() string { return implNames[impl] }

// impls returns the names of the implementations this machine can run, the
// generic twins first.
func impls() []string {
	var names []string
	for k, ok := range supported {
		if ok {
			names = append(names, implNames[k])
		}
	}
	return names
}

// setImpl makes the kernels use the named implementation and returns a
// function that restores the previous one. It panics if the machine cannot
// run that implementation: forcing may only narrow the choice. It is for
// tests and benchmarks only, and must not be called while kernels run in
// other goroutines.
func setImpl(name string) (restore func()) {
	for k, n := range implNames {
		if n == name {
			if !supported[k] {
				panic(fmt.Sprintf("kernel: implementation %q is not supported on this machine", name))
			}
			old := impl
			impl = k
			return func() { impl = old }
		}
	}
	panic(fmt.Sprintf("kernel: unknown implementation %q", name))
}

package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/whitebox-lstm/whitebox/kernel"
)

func version(w io.Writer) int {
	v := "(devel)"
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		v = info.Main.Version
	}
	// Machine names the kernel path that runs (kernel.Impl) among the CPU's facts.
	fmt.Fprintf(w, "whitebox %s\n%s %s/%s\n%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH, kernel.Machine())
	return 0
}

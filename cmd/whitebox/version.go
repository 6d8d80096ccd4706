package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

func version(w io.Writer) int {
	v := "(devel)"
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		v = info.Main.Version
	}
	fmt.Fprintf(w, "whitebox %s\n%s %s/%s, kernels: pure Go\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}

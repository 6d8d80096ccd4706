//go:build linux || darwin || freebsd || netbsd || openbsd

package main

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSSBytes is the peak resident set size of a finished process.
func peakRSSBytes(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss), true // bytes on macOS
	}
	return int64(ru.Maxrss) * 1024, true // KiB elsewhere
}

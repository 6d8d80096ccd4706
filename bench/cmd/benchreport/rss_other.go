//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package main

import "os"

// peakRSSBytes is not available here.
func peakRSSBytes(*os.ProcessState) (int64, bool) { return 0, false }

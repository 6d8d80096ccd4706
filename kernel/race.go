//go:build race

package kernel

import (
	"runtime"
	"unsafe"
)

const raceEnabled = true

// raceRead and raceWrite tell the race detector about the memory that an
// assembly body is about to touch, which it cannot see for itself.
func raceRead(s []float64) {
	if len(s) > 0 {
		runtime.RaceReadRange(unsafe.Pointer(unsafe.SliceData(s)), 8*len(s))
	}
}

func raceWrite(s []float64) {
	if len(s) > 0 {
		runtime.RaceWriteRange(unsafe.Pointer(unsafe.SliceData(s)), 8*len(s))
	}
}

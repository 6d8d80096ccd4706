//go:build !race

package cell_test

// raceDetector reports a build with the race detector, whose
// instrumented loops run several times slower (TestStopLatency).
const raceDetector = false

//go:build !linux || !(amd64 || arm64)

package cell

// bigFloats is make([]float64, n) (see hugepages_thp.go).
func bigFloats(n int) []float64 { return make([]float64, n) }

// hugeFloatsMin is the length at which bigFloats would advise (tests).
const hugeFloatsMin = 1 << 19

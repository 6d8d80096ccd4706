package tensorfile

import (
	"math"
	"math/bits"
	"strconv"
)

const maxInt = math.MaxInt

func itoa(v int64) string  { return strconv.FormatInt(v, 10) }
func utoa(v uint64) string { return strconv.FormatUint(v, 10) }

// mulCheck returns a·b and whether it is exact and at most max (a, b ≥ 0).
func mulCheck(a, b, max int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > uint64(max) {
		return 0, false
	}
	return int64(lo), true
}

// addCheck returns a+b and whether it is exact and at most max (a, b ≥ 0).
func addCheck(a, b, max int64) (int64, bool) {
	s, carry := bits.Add64(uint64(a), uint64(b), 0)
	if carry != 0 || s > uint64(max) {
		return 0, false
	}
	return int64(s), true
}

// numel returns the product of shape, or false when it exceeds max (or
// overflows). A shape with a zero dimension has no elements, however large
// its other dimensions.
func numel(shape []int64, max int64) (int64, bool) {
	for _, d := range shape {
		if d == 0 {
			return 0, true
		}
	}
	n := int64(1)
	for _, d := range shape {
		var ok bool
		if n, ok = mulCheck(n, d, max); !ok {
			return 0, false
		}
	}
	return n, true
}

// intShape converts a validated shape to []int (never nil).
func intShape(shape []int64) ([]int, bool) {
	s := make([]int, len(shape))
	for i, d := range shape {
		if d < 0 || d > math.MaxInt {
			return nil, false
		}
		s[i] = int(d)
	}
	return s, true
}

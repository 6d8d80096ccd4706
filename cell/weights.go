package cell

import (
	"fmt"
	"math/bits"
)

// MaxWeights caps the number of weights of a one-layer, one-direction
// LSTM classifier built from sizes alone (the white-box networks, compiled
// automata), 4H·D + 4H·H + 4H + C·H + C: 2^27 (about 134 million, 1 GiB of
// float64). The engine keeps more than one copy of its weights (as given,
// transposed for the kernels, and their nonzero terms).
const MaxWeights = 1 << 27

// Weights returns the number of weights of a one-layer, one-direction
// LSTM classifier with h units, d input features and c classes (a Model
// model with Layers 1), 4H·D + 4H·H + 4H + C·H + C, computed without
// overflow. It returns an error naming the sizes when one is not positive
// or the count exceeds MaxWeights: a builder calls it before anything is
// allocated.
func Weights(h, d, c int) (int, error) {
	if h < 1 || d < 1 || c < 1 {
		return 0, fmt.Errorf("cell: sizes must be positive: Hidden=%d Input=%d Classes=%d", h, d, c)
	}
	total := uint64(0)
	for _, t := range [][2]uint64{{4 * uint64(h), uint64(d) + uint64(h) + 1}, {uint64(c), uint64(h) + 1}} {
		hi, lo := bits.Mul64(t[0], t[1])
		var carry uint64
		total, carry = bits.Add64(total, lo, 0)
		if hi != 0 || carry != 0 || total > MaxWeights {
			return 0, fmt.Errorf("cell: Hidden=%d Input=%d Classes=%d need more than %d weights (%d MiB each copy), the most a network may have", h, d, c, MaxWeights, MaxWeights*8>>20)
		}
	}
	return int(total), nil
}

func clone(v []float64) []float64 { return append([]float64(nil), v...) }

// transpose returns the cols×rows transpose of a rows×cols matrix.
func transpose(m []float64, rows, cols int) []float64 {
	t := make([]float64, rows*cols)
	for r := range rows {
		for c := range cols {
			t[c*rows+r] = m[r*cols+c]
		}
	}
	return t
}

// Predict returns the index of the largest logit; ties go to the first class.
// NaN never wins: a NaN logit is passed over (+Inf beats every finite one),
// and 0 is returned when every logit is NaN or there are none.
func Predict(logits []float64) int {
	best := -1
	for k, v := range logits {
		if v == v && (best < 0 || v > logits[best]) {
			best = k
		}
	}
	return max(best, 0)
}

// checkClass is the one check of a class index against C classes.
func checkClass(class, c int) error {
	if class < 0 || class >= c {
		return fmt.Errorf("cell: class %d is out of range [0, %d)", class, c)
	}
	return nil
}

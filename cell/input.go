package cell

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Input is one sequence x⁽¹⁾…x⁽ᵀ⁾: either one-hot rows given by their symbol
// indices, all with the same value (1, or α for the scaled copies of
// Integrated Gradients), or a dense T×D matrix. The symbol −1 stands for an
// all-zero row (occlusion). Both forms give the same bits for the same
// matrix: the kernels skip zero features.
type Input struct {
	symbols []int
	scale   float64
	dense   []float64
	t       int
}

// OneHot is the one-hot input whose row t has a 1 in column symbols[t]
// (or no 1 at all for −1).
func OneHot(symbols []int) Input { return Input{symbols: symbols, scale: 1, t: len(symbols)} }

// ScaledOneHot is OneHot(symbols) multiplied by alpha.
func ScaledOneHot(symbols []int, alpha float64) Input {
	return Input{symbols: symbols, scale: alpha, t: len(symbols)}
}

// Dense is the input whose row t is x[t*D : (t+1)*D], D = len(x)/steps.
func Dense(x []float64, steps int) Input { return Input{dense: x, scale: 1, t: steps} }

// Scaled returns alpha·x. Each feature becomes the rounded product
// float64(alpha·x_{t,i}) when the network reads it.
func (x Input) Scaled(alpha float64) Input {
	x.scale = float64(x.scale * alpha)
	return x
}

// Len returns T, the number of time steps.
func (x Input) Len() int { return x.t }

// IsOneHot reports whether x was built by OneHot or ScaledOneHot.
func (x Input) IsOneHot() bool { return x.dense == nil }

// Symbols returns the symbol indices of a one-hot input (nil for dense).
func (x Input) Symbols() []int { return x.symbols }

// DenseValues returns the T×D values of a dense input before scaling (nil
// for one-hot input).
func (x Input) DenseValues() []float64 { return x.dense }

// Scale returns the factor applied to every feature (the value of the hot
// entries of a one-hot input).
func (x Input) Scale() float64 { return x.scale }

// At returns x_{t,i}.
func (x Input) At(t, i, d int) float64 {
	if x.dense != nil {
		return x.feature(x.dense[t*d+i])
	}
	if x.symbols[t] == i {
		return x.scale
	}
	return 0
}

// feature is the value the network reads for a dense feature v.
func (x Input) feature(v float64) float64 {
	if x.scale == 1 {
		return v
	}
	return float64(x.scale * v)
}

// ErrEmptyInput is returned for an input with no time steps.
var ErrEmptyInput = errors.New("cell: empty input (no time steps)")

// Check validates x for a model of d input features, as every method does
// before it allocates anything for x: at least one step and a finite
// scale, then one symbol in [−1, d) a step (one-hot) or T×D finite values
// (dense). A declared length that its data does not match, or whose T×D
// overflows an int, is an error, never a panic.
func (x Input) Check(d int) error { return x.check(d) }

// check validates x against a network with d input features.
func (x Input) check(d int) error {
	if x.t < 1 {
		return ErrEmptyInput
	}
	if d < 1 {
		return fmt.Errorf("cell: a model of %d input features reads no input", d)
	}
	if math.IsNaN(x.scale) || math.IsInf(x.scale, 0) {
		return fmt.Errorf("cell: input scale is %v; inputs must be finite", x.scale)
	}
	if x.dense == nil {
		if len(x.symbols) != x.t {
			return fmt.Errorf("cell: one-hot input has %d symbols for %d steps", len(x.symbols), x.t)
		}
		for t, s := range x.symbols {
			if s < -1 || s >= d {
				return fmt.Errorf("cell: symbol %d at position %d is out of range [0, %d) (−1 means a zero row)", s, t, d)
			}
		}
		return nil
	}
	// len/d = T and len%d = 0, not len = T·D: the product may overflow.
	if len(x.dense)%d != 0 || len(x.dense)/d != x.t {
		if hi, lo := bits.Mul64(uint64(x.t), uint64(d)); hi == 0 && lo <= math.MaxInt {
			return fmt.Errorf("cell: dense input has %d values, want T×D = %d×%d = %d", len(x.dense), x.t, d, lo)
		}
		return fmt.Errorf("cell: dense input has %d values, want T×D = %d×%d, more than an int holds", len(x.dense), x.t, d)
	}
	for k, v := range x.dense {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("cell: input value x[%d][%d] is %v; inputs must be finite", k/d, k%d, v)
		}
	}
	return nil
}

// AppendDense appends x's T×d values, as a model with d input features
// reads them (scale applied, one-hot rows expanded, −1 rows zero), to dst
// and returns the extended slice. It checks x against d first.
func (x Input) AppendDense(dst []float64, d int) ([]float64, error) {
	if err := x.check(d); err != nil {
		return dst, err
	}
	n := len(dst)
	dst = slices.Grow(dst, x.t*d)[:n+x.t*d] // no allocation when dst has room
	out := dst[n:]
	clear(out)
	if x.dense != nil {
		for i, v := range x.dense {
			out[i] = x.feature(v)
		}
		return dst, nil
	}
	for t, s := range x.symbols {
		if s >= 0 {
			out[t*d+s] = x.scale
		}
	}
	return dst, nil
}

package kernel

// Exp returns e^x.
//
// The result is within 1 ULP of the correctly rounded value, subnormal
// results included (there the error is at most one subnormal step). Exp
// overflows to +Inf for x > 709.782712893384 and underflows to 0 for
// x < -745.1332191019411. Special cases: Exp(±0) = 1, Exp(+Inf) = +Inf,
// Exp(-Inf) = 0, Exp(NaN) = NaN.
//
// The result is deterministic: the same bits on every architecture and for
// every build flag, whether or not an assembly implementation is used.
func Exp(x float64) float64 {
	return expGeneric(x)
}

// Sigmoid returns the logistic function 1/(1+e^-x).
//
// The result is within 3 ULP of the correctly rounded value, lies in [0, 1],
// and is computed without overflow for every input. Sigmoid(x) is exactly 1
// for x ≥ 36.74 (1+e^-x rounds to 1 there). Special cases:
// Sigmoid(+Inf) = 1, Sigmoid(-Inf) = 0, Sigmoid(NaN) = NaN.
//
// The result is deterministic in the same sense as Exp.
func Sigmoid(x float64) float64 {
	return sigmoidGeneric(x)
}

// Tanh returns the hyperbolic tangent of x.
//
// The result is within 2 ULP of the correctly rounded value, lies in
// [-1, 1], and is odd to the bit: Tanh(-x) = -Tanh(x), so Tanh(-0) = -0. It
// is exactly ±1 for |x| ≥ 19.07. Special cases: Tanh(±Inf) = ±1,
// Tanh(NaN) = NaN.
//
// The result is deterministic in the same sense as Exp.
func Tanh(x float64) float64 {
	return tanhGeneric(x)
}

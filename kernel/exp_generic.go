package kernel

import "math"

// Generic twins of Exp, Sigmoid and Tanh.
//
// These functions are the specification that the assembly versions (AVX2,
// AVX-512, NEON) reproduce bit for bit, lane by lane. They therefore use only
// operations that vector units perform with identical IEEE-754 results:
//
//   - +, -, *, / on float64, each correctly rounded;
//   - math.FMA(a, b, c) where a fused multiply-add is meant (VFMADD, FMLA);
//   - float64(a*b) + c where the product must be rounded before the add: the
//     explicit conversion forbids the compiler from fusing, which a plain
//     a*b+c allows and which GOAMD64=v3 and arm64 builds do, changing bits;
//   - comparisons, math.Abs and math.Copysign (sign-bit masking),
//     math.RoundToEven (ROUNDPD/VRNDSCALEPD imm 0, FRINTN), float64<->int
//     conversion of exact integers, and building a power of two from
//     exponent bits.
//
// There are no table lookups, no calls to math.Exp and no approximate
// reciprocals. Every constant is a named package-level constant below so that
// the assembly generator can emit exactly these float64 values.

// Exp constants.
const (
	// Inputs are clamped into [expMinArg, expMaxArg]: e^710 overflows and
	// e^-746 rounds to zero, and the clamp keeps k (below) a small integer
	// so 2^k can be built from exponent bits without overflowing them.
	expMaxArg float64 = 710
	expMinArg float64 = -746

	expLog2E float64 = math.Log2E

	// Cody–Waite split of ln 2 (as in Go's math/exp.go): expLn2Hi has
	// trailing zero bits, so r = x - k*ln2 stays accurate to far beyond
	// float64 precision for |k| ≤ 1076.
	expLn2Hi float64 = 6.93147180369123816490e-01
	expLn2Lo float64 = 1.90821492927058770002e-10

	// Taylor coefficients 1/n! of e^r, each rounded once to float64. On the
	// reduced range |r| ≤ ln2/2 the degree-13 truncation error is below
	// 2^-57 relative.
	expC2  float64 = 1.0 / 2
	expC3  float64 = 1.0 / 6
	expC4  float64 = 1.0 / 24
	expC5  float64 = 1.0 / 120
	expC6  float64 = 1.0 / 720
	expC7  float64 = 1.0 / 5040
	expC8  float64 = 1.0 / 40320
	expC9  float64 = 1.0 / 362880
	expC10 float64 = 1.0 / 3628800
	expC11 float64 = 1.0 / 39916800
	expC12 float64 = 1.0 / 479001600
	expC13 float64 = 1.0 / 6227020800

	// Exponent bias and shift for building 2^n from bits.
	expBias     = 1023
	expMantBits = 52
)

// From x = sigmoidSat on, σ(x) = 1 exactly (e^-x < 2^-53 rounds away in
// 1+e^-x, from x ≈ 36.7). The vector bodies skip the work when every lane is
// that large; sigmoidGeneric computes the same 1.
const sigmoidSat float64 = 40

// Tanh constants.
const (
	// Below tanhSmall the rational approximation is used; at and above it,
	// 1 - 2/(e^(2a)+1), whose cancellation is harmless there.
	tanhSmall float64 = 0.625

	// From |x| = tanhSat on, tanh(x) = ±1 exactly (2/(e^(2a)+1) < 1e-17,
	// below half an ULP of 1, from a ≈ 19.06). The vector bodies skip the
	// work when every lane is that large; tanhGeneric computes the same ±1.
	tanhSat float64 = 20

	// Rational approximation x + x*s*P(s)/Q(s), s = x², from Go's
	// math/tanh.go (Cephes). Q is monic.
	tanhP0 float64 = -9.64399179425052238628e-1
	tanhP1 float64 = -9.92877231001918586564e1
	tanhP2 float64 = -1.61468768441708447952e3
	tanhQ0 float64 = 1.12811678491632931402e2
	tanhQ1 float64 = 2.23548839060100448583e3
	tanhQ2 float64 = 4.84406305325125486048e3
)

// expGeneric returns e^x within 1 ULP of the correctly rounded result
// (including subnormal results), +Inf above about 709.78, 0 below about
// -745.13, and NaN for NaN.
func expGeneric(x float64) float64 {
	if x != x {
		return x
	}
	// ±Inf clamp to the finite edges, which still over- and underflow.
	if x > expMaxArg {
		x = expMaxArg
	}
	if x < expMinArg {
		x = expMinArg
	}

	// x = k*ln2 + r with k an integer and |r| ≤ ln2/2 (slightly more when
	// the rounded product x*log2e lands on the other side of a half).
	k := math.RoundToEven(float64(x * expLog2E))
	r := math.FMA(-k, expLn2Hi, x)
	r = math.FMA(-k, expLn2Lo, r)

	// e^r by Horner's rule, one FMA per degree.
	p := math.FMA(expC13, r, expC12)
	p = math.FMA(p, r, expC11)
	p = math.FMA(p, r, expC10)
	p = math.FMA(p, r, expC9)
	p = math.FMA(p, r, expC8)
	p = math.FMA(p, r, expC7)
	p = math.FMA(p, r, expC6)
	p = math.FMA(p, r, expC5)
	p = math.FMA(p, r, expC4)
	p = math.FMA(p, r, expC3)
	p = math.FMA(p, r, expC2)
	p = math.FMA(p, r, 1)
	p = math.FMA(p, r, 1)

	// Scale by 2^k = 2^k1 * 2^k2. k is in [-1076, 1024], outside the normal
	// exponent range at both ends, so it is split in two halves that are
	// each a normal power of two. The first product is exact (its result is
	// normal), the second rounds once: subnormal results are correctly
	// rounded from p, and overflow gives +Inf.
	ki := int64(k)
	k1 := ki >> 1 // arithmetic shift: floor(k/2)
	k2 := ki - k1
	s1 := math.Float64frombits(uint64(k1+expBias) << expMantBits)
	s2 := math.Float64frombits(uint64(k2+expBias) << expMantBits)
	return float64(p*s1) * s2
}

// sigmoidGeneric returns 1/(1+e^-x) within 3 ULP. It never overflows: it
// only evaluates e^-|x| ≤ 1. Sigmoid(+Inf) = 1, Sigmoid(-Inf) = 0, NaN gives
// NaN.
func sigmoidGeneric(x float64) float64 {
	if x != x {
		return x
	}
	z := expGeneric(-math.Abs(x))
	d := 1 + z
	if x >= 0 {
		return 1 / d
	}
	return z / d
}

// tanhGeneric returns tanh(x) within 2 ULP. It is odd to the bit (the sign of
// x is copied onto the result, so tanh(-0) = -0), equals ±1 exactly from
// |x| ≈ 19.06 on, and gives NaN for NaN.
func tanhGeneric(x float64) float64 {
	if x != x {
		return x
	}
	a := math.Abs(x)
	var t float64
	if a < tanhSmall {
		s := float64(a * a)
		p := math.FMA(tanhP0, s, tanhP1)
		p = math.FMA(p, s, tanhP2)
		q := s + tanhQ0
		q = math.FMA(q, s, tanhQ1)
		q = math.FMA(q, s, tanhQ2)
		// a + ((a*s)*p)/q with every product rounded, in Go's order.
		t = a + float64(float64(a*s)*p)/q
	} else {
		// e^(2a) = +Inf for large a gives 2/Inf = 0 and t = 1, never NaN.
		t = 1 - 2/(expGeneric(2*a)+1)
	}
	return math.Copysign(t, x)
}

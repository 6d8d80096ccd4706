package attrib

import (
	"math"
	"math/big"
)

// Gauss–Legendre rules on α ∈ [0, 1].
//
// Every node comes from a colatitude θ ∈ (0, π/2] of the standard rule on
// [-1, 1] (x = cos θ, ordered so that θ grows with k). The pair of mirrored
// nodes is
//
//	α_lo = (1 − cos θ)/2 = sin²(θ/2),  α_hi = 1 − α_lo,
//
// which keeps full relative precision in the nodes closest to α = 0, where
// the naive (1 + x)/2 would cancel. The nodes are mathematically Captum's
// 0.5·(1 + numpy.polynomial.legendre.leggauss(n)[0]) and the weights are
// 0.5·leggauss(n)[1]; only the rounding differs.
//
// For n ≤ glNewtonMaxN the nodes are found by Newton's method on the
// Legendre three-term recurrence (O(n) per node, O(n²) per rule: ~20 µs at
// n = 50). Beyond that Bogaert's iteration-free asymptotic formulas are
// accurate to double precision and cost O(1) per node, so a rule costs O(n).
// Both paths agree to within a few ulps with a 200-bit reference (see the
// tests), and each is a fixed sequence of correctly rounded float64
// operations, so the output is the same bits on every platform and build.
//
// That takes care: Go lets the compiler fuse x*y + z into one FMA (it does
// on arm64, and on amd64 from GOAMD64=v3), which changes the rounding and
// breaks the error-free transformations below. Every product that meets an
// addition is therefore written float64(x*y), which forbids fusion, and
// math.FMA is written where a fused operation is meant. For the same reason
// the sines come from glSincos, not from package math, whose pure-Go
// polynomials the compiler fuses differently on each target. The bits are
// pinned by TestGaussLegendreBits; they are those the unfused code gave on
// amd64 (GOAMD64=v1).

// glNewtonMaxN is the largest n handled by Newton's method. Bogaert's
// expansions are designed (and verified in the tests) for n above 100.
const glNewtonMaxN = 100

// gaussLegendre writes the n-point rule; the caller has validated n ≥ 1 and
// the slice lengths.
func gaussLegendre(n int, alphas, weights []float64) {
	pair := glBogaertPair
	if n <= glNewtonMaxN {
		pair = glNewtonPair
	}
	for k := 1; k <= n/2; k++ {
		lo, w := pair(n, k)
		alphas[k-1], alphas[n-k] = lo, 1-lo
		weights[k-1], weights[n-k] = w, w
	}
	if n%2 == 1 {
		m := n / 2
		alphas[m] = 0.5 // x = 0 exactly, by symmetry
		weights[m] = glMiddleWeight(n)
	}
}

// glMiddleWeight is the α-weight of the node α = 1/2 of an odd-n rule.
func glMiddleWeight(n int) float64 {
	if n <= glNewtonMaxN {
		return glMiddleSmall[n/2]
	}
	_, _, w := glBogaertTheta(n, (n+1)/2)
	return w
}

// glMiddleSmall[m] is the α-weight of the middle node of the (2m+1)-point
// rule, 1/((2m+1)·P_{2m}(0))² with P_{2m}(0)² = (C(2m,m)/4^m)². Forming the
// product of m ratios in float64 would drift by up to ~m ulps, so the table is
// built once, correctly rounded, with exact integer arithmetic.
var glMiddleSmall = func() (t [glNewtonMaxN/2 + 1]float64) {
	for m := range t {
		// 1/((2m+1)·C(2m,m)/4^m)² = 16^m / ((2m+1)·C(2m,m))²
		den := new(big.Int).Binomial(int64(2*m), int64(m))
		den.Mul(den, big.NewInt(int64(2*m+1)))
		den.Mul(den, den)
		num := new(big.Int).Lsh(big.NewInt(1), uint(4*m))
		t[m], _ = new(big.Rat).SetFrac(num, den).Float64()
	}
	return t
}()

// glNewtonPair returns α_lo and the α-weight of the k-th node (1 ≤ k ≤ n/2,
// α_lo ascending) by Newton's method, started from Bogaert's approximation.
// That start is already good to 1e-5 at n = 2, 4e-10 at n = 10 and 2e-15 at
// n = 50 (relative), so one step suffices for n ≥ 6 and two below.
//
// The unknown is u = 1 − x = 2α_lo, not x: near x = 1 a stored x carries an
// absolute rounding error of ~1e-16 that would swamp the nodes near α = 0,
// while u keeps full relative precision and gives α_lo = u/2 exactly. The
// recurrence is evaluated in double-double arithmetic because its float64
// rounding errors (~sqrt(n) ulps) would show in the weights.
func glNewtonPair(n, k int) (alphaLo, weight float64) {
	theta, _, _ := glBogaertTheta(n, k)
	s, _ := glSincos(0.5 * theta)
	u := float64(2 * s * s)
	fn := float64(n)
	for iter := 0; ; iter++ {
		ph, dh, dl := legendreReinschDD(n, u)
		// d/du P_n(1−u) = −P'_n(x) = n·(D_n − u·P_n)/(1 − x²), 1 − x² = u·(2 − u).
		// Keep these in double-double until the last division so the
		// weight is rounded only a couple of times.
		th, tl := twoSum(2, -u)
		qh, ql := twoProd(u, th)
		ql += float64(u * tl)
		mh, ml := twoProd(-u, ph)
		sh, sl := twoSum(dh, mh)
		sl += dl + ml
		eh, el := twoProd(fn, sh) // n·(D_n − u·P_n)
		el += float64(fn * sl)
		step := ph * qh / eh
		// Once a step is below 1e-9·u the error left after it is ~1e-18
		// (quadratic convergence). The weight (1−x²)/(n·(P_{n−1} − x·P_n))²
		// was evaluated at u; move it to u − step to first order using
		// d ln w/du = 2x/(1−x²) at a root (the second-order term is ~1e-18).
		if math.Abs(step) <= 1e-9*u || iter == 8 { // iter == 8: never reached for n ≤ 200
			w := ddQuo(ddQuo(qh, ql, eh, el), 0, eh, el)
			return 0.5 * (u - step), float64(w * (1 - 2*(1-u)*step/qh))
		}
		u -= step
	}
}

// legendreReinschDD returns P_n(x) and D_n = P_n(x) − P_{n−1}(x) for
// x = 1 − u (n ≥ 1), using (j+1)·D_{j+1} = j·D_j − (2j+1)·u·P_j: the
// three-term recurrence rewritten (Reinsch) so that no term is formed from
// the rounded 1 − u. It runs in double-double arithmetic (u is exact) and
// returns the leading part of P_n and both parts of D_n.
func legendreReinschDD(n int, u float64) (p, dHi, dLo float64) {
	ph, pl := twoSum(1, -u) // P_1
	dh, dl := -u, 0.0       // D_1
	for j := 1; j < n; j++ {
		fj := float64(j)
		ah, al := twoProd(fj, dh) // j·D_j
		al += float64(fj * dl)
		ch, cl := twoProd(float64(2*fj)+1, u) // (2j+1)·u
		bh, bl := twoProd(ch, ph)             // (2j+1)·u·P_j
		bl += float64(ch*pl) + float64(cl*ph)
		eh, el := twoSum(ah, -bh)
		el += al - bl
		eh, el = fastTwoSum(eh, el)
		// Divide by m = j+1 through its reciprocal (computed off the
		// dependency chain); the exact remainder repairs the rounding.
		m := fj + 1
		inv := 1 / m
		qh := float64(eh * inv)
		ql := float64((math.FMA(-qh, m, eh) + el) * inv)
		dh, dl = fastTwoSum(qh, ql)
		sh, sl := twoSum(ph, dh) // P_{j+1} = P_j + D_{j+1}
		sl += pl + dl
		ph, pl = fastTwoSum(sh, sl)
	}
	return ph, dh, dl
}

// ddQuo returns (ah+al)/(bh+bl) rounded to float64 (to within ~1 ulp).
func ddQuo(ah, al, bh, bl float64) float64 {
	t := ah / bh
	r := math.FMA(-t, bh, ah) + al - float64(t*bl)
	return t + r/bh
}

// Error-free transformations (Dekker, Knuth): the pair returned is exactly
// a+b or a·b. They rely on float64 rounding of every operation: the product
// is rounded explicitly so that it cannot fuse with a sum it later meets
// (after inlining), and the FMA in twoProd is deliberate.
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}

func fastTwoSum(a, b float64) (s, e float64) { // |a| ≥ |b|
	s = a + b
	return s, b - (s - a)
}

func twoProd(a, b float64) (p, e float64) {
	p = float64(a * b)
	return p, math.FMA(a, b, -p)
}

// glBogaertPair returns α_lo = sin²(θ_k/2) and the α-weight for the k-th
// node (1 ≤ k ≤ n/2) from Bogaert's expansions.
func glBogaertPair(n, k int) (alphaLo, weight float64) {
	th, tl, w := glBogaertTheta(n, k)
	sin, cos := glSincos(0.5 * th)
	s := sin + float64(cos*(0.5*tl)) // sin((th+tl)/2) to first order in tl
	return float64(s * s), w
}

// glBogaertTheta evaluates I. Bogaert, "Iteration-free computation of
// Gauss–Legendre quadrature nodes and weights", SIAM J. Sci. Comput. 36(3),
// A1008–A1026 (2014): θ_k and the weight are expansions in powers of
// 1/(n+1/2)² around the Bessel-function approximation θ ≈ j_{0,k}/(n+1/2),
// with the θ-dependent coefficient functions replaced by polynomial fits in
// θ². The fitted coefficients are those of Bogaert's reference
// implementation fastgl (© 2014 I. Bogaert, SourceForge project
// "fastgausslegendrequadrature"). It returns θ_k (1 ≤ k ≤ (n+1)/2)
// as thetaHi + thetaLo and the weight scaled to [0, 1] (half the [-1, 1]
// weight).
func glBogaertTheta(n, k int) (thetaHi, thetaLo, weight float64) {
	m := float64(n) + 0.5
	w := 1 / m
	nu, nuLo := besselJ0Zero(k)
	theta := float64(w * nu)
	x := theta * theta

	// Node and weight correction functions F1..F3, W1..W3 of the paper, as
	// fitted polynomials in x.
	sf1, sf2, sf3 := glHorner(glF1[:], x), glHorner(glF2[:], x), glHorner(glF3[:], x)
	wsf1, wsf2, wsf3 := glHorner(glW1[:], x), glHorner(glW2[:], x), glHorner(glW3[:], x)

	// ν/sin θ₀ = (n+½)·θ₀/sin θ₀; the ratio θ₀/sin θ₀ barely depends on
	// the rounding of θ₀, unlike ν/sin θ₀ formed directly.
	sinTheta, _ := glSincos(theta)
	sinc := theta / sinTheta
	wInvSinc := w * sinc
	wis2 := wInvSinc * wInvSinc

	// θ = (ν + correction)/(n + 1/2), with ν + correction in double-double
	// and a single, repaired division: θ then carries well under an ulp of
	// rounding error on top of the expansion's own.
	corr := float64(float64(theta*wInvSinc) * (sf1 + float64(wis2*(sf2+float64(wis2*sf3)))))
	nh, nl := fastTwoSum(nu, nuLo+corr)
	thetaHi = nh / m
	thetaLo = (math.FMA(-thetaHi, m, nh) + nl) / m
	// The [-1,1] weight is 2/((n+½)²·J1(j_{0,k})²·θ₀/sin θ₀·(1 + corrections)).
	deno := m * m * besselJ1SqAtJ0Zero(k) * sinc * (1 + float64(wis2*(wsf1+float64(wis2*(wsf2+float64(wis2*wsf3))))))
	return thetaHi, thetaLo, 1 / deno
}

// besselJ0Zeros[k-1] = j_{0,k}, the k-th positive zero of J0, as an
// unevaluated sum hi + lo, and besselJ1Sq[k-1] = J1(j_{0,k})², for k = 1..20:
// rounded from a 320-bit power-series computation (re-derived in the tests).
// For k > 20 the asymptotic expansions below are accurate to well under an
// ulp. The zeros carry a low part because θ_k ∝ j_{0,k}, and the rounding
// of θ is doubled in α ≈ θ²/4.
var besselJ0Zeros = [...][2]float64{
	{2.404825557695773, -1.176691651530894e-16},
	{5.520078110286311, 8.088597146146722e-17},
	{8.653727912911013, -2.92812607320779e-16},
	{11.791534439014281, 2.812956912778735e-16},
	{14.930917708487787, -7.070514505983074e-16},
	{18.071063967910924, -9.658048089426209e-16},
	{21.21163662987926, 4.947077428784068e-16},
	{24.352471530749302, 9.169067133951066e-16},
	{27.493479132040253, 1.6191941793302084e-15},
	{30.634606468431976, -5.390359852115135e-16},
	{33.77582021357357, 1.454224241250595e-15},
	{36.917098353664045, -9.276489358569364e-16},
	{40.05842576462824, -2.6782651477149736e-16},
	{43.19979171317673, 8.55713303876733e-16},
	{46.341188371661815, -9.07797413846536e-16},
	{49.482609897397815, 2.382582551864974e-15},
	{52.624051841115, -1.7558469541662502e-15},
	{55.76551075501998, -2.2474605782970157e-15},
	{58.90698392608094, 1.8824761533828545e-15},
	{62.048469190227166, 3.5462261037501757e-15},
}

var besselJ1Sq = [...]float64{
	0.269514123941916926139021992911, 0.115780138582203695807812836182,
	0.0736863511364082151406476811985, 0.0540375731981162820417749182759,
	0.0426614290172430912655106063497, 0.0352421034909961013587473033648,
	0.0300210701030546726750888157688, 0.0261473914953080885904584675399,
	0.0231591218246913922652676382178, 0.0207838291222678576039808057296,
	0.0188504506693176678161056800213, 0.0172461575696650082995240053542,
	0.0158935181059235978027065594287, 0.0147376260964721895895742982591,
	0.0137384651453871179182880484135, 0.0128661817376151328791406637229,
	0.0120980515486267975471075438497, 0.0114164712244916085168627222987,
	0.0108075927911802040115547286831, 0.0102603729262807628110423992789,
}

// besselJ0Zero returns j_{0,k} as hi + lo. For k > 20 it uses McMahon's
// expansion j ≈ β + 1/(8β) − 124/(3(8β)³) + … with β = (k − 1/4)π, whose
// first omitted term is below 1e-20·β there; β itself is formed in
// double-double since it dominates the sum.
func besselJ0Zero(k int) (hi, lo float64) {
	if k <= len(besselJ0Zeros) {
		return besselJ0Zeros[k-1][0], besselJ0Zeros[k-1][1]
	}
	const piLo = 1.2246467991473532e-16 // π − float64(π)
	kq := float64(k) - 0.25
	zh, zl := twoProd(math.Pi, kq)
	zl += float64(piLo * kq)
	r := 1 / zh
	r2 := r * r
	c := float64(r * (0.125 + float64(r2*(-0.807291666666666666666666666667e-1+float64(r2*(0.246028645833333333333333333333+
		float64(r2*(-1.82443876720610119047619047619+float64(r2*(25.3364147973439050099206349206+
			float64(r2*(-567.644412135183381139802038240))))))))))))
	return fastTwoSum(zh, zl+c)
}

// besselJ1SqAtJ0Zero returns J1(j_{0,k})². For k > 20 it uses the
// asymptotic expansion in x = 1/(k − 1/4) (leading term 2x/π², as in
// fastgl), accurate to ~1e-20 relative there.
func besselJ1SqAtJ0Zero(k int) float64 {
	if k <= len(besselJ1Sq) {
		return besselJ1Sq[k-1]
	}
	x := 1 / (float64(k) - 0.25)
	x2 := x * x
	return float64(x * (0.202642367284675542887758926420 + float64(x2*x2*(-0.303380429711290253026202643516e-3+
		float64(x2*(0.198924364245969295201137972743e-3+float64(x2*(-0.228969902772111653038747229723e-3+
			float64(x2*(0.433710719130746277915572905025e-3+float64(x2*(-0.123632349727175414724737657367e-2))))))))))))
}

// Bogaert's fitted polynomials in x = θ₀², highest degree first: the node
// corrections F1..F3 and the weight corrections W1..W3.
var (
	glF1 = [...]float64{
		-1.29052996274280508473467968379e-12, 2.40724685864330121825976175184e-10,
		-3.13148654635992041468855740012e-8, 0.275573168962061235623801563453e-5,
		-0.148809523713909147898955880165e-3, 0.416666666665193394525296923981e-2,
		-0.416666666666662959639712457549e-1,
	}
	glF2 = [...]float64{
		2.20639421781871003734786884322e-9, -7.53036771373769326811030753538e-8,
		0.161969259453836261731700382098e-5, -0.253300326008232025914059965302e-4,
		0.282116886057560434805998583817e-3, -0.209022248387852902722635654229e-2,
		0.815972221772932265640401128517e-2,
	}
	glF3 = [...]float64{
		-2.97058225375526229899781956673e-8, 5.55845330223796209655886325712e-7,
		-0.567797841356833081642185432056e-5, 0.418498100329504574443885193835e-4,
		-0.251395293283965914823026348764e-3, 0.128654198542845137196151147483e-2,
		-0.416012165620204364833694266818e-2,
	}
	glW1 = [...]float64{
		-2.20902861044616638398573427475e-14, 2.30365726860377376873232578871e-12,
		-1.75257700735423807659851042318e-10, 1.03756066927916795821098009353e-8,
		-4.63968647553221331251529631098e-7, 0.149644593625028648361395938176e-4,
		-0.326278659594412170300449074873e-3, 0.436507936507598105249726413120e-2,
		-0.305555555555553028279487898503e-1, 0.833333333333333302184063103900e-1,
	}
	glW2 = [...]float64{
		3.63117412152654783455929483029e-12, 7.67643545069893130779501844323e-11,
		-7.12912857233642220650643150625e-9, 2.11483880685947151466370130277e-7,
		-0.381817918680045468483009307090e-5, 0.465969530694968391417927388162e-4,
		-0.407297185611335764191683161117e-3, 0.268959435694729660779984493795e-2,
		-0.111111111111214923138249347172e-1,
	}
	glW3 = [...]float64{
		2.01826791256703301806643264922e-9, -4.38647122520206649251063212545e-8,
		5.08898347288671653137451093208e-7, -0.397933316519135275712977531366e-5,
		0.200559326396458326778521795392e-4, -0.422888059282921161626339411388e-4,
		-0.105646050254076140548678457002e-3, -0.947969308958577323145923317955e-4,
		0.656966489926484797412985260842e-2,
	}
)

// glHorner evaluates the polynomial c (highest degree first) at x by
// Horner's rule, rounding every product (no fusion).
func glHorner(c []float64, x float64) float64 {
	p := c[0]
	for _, ck := range c[1:] {
		p = float64(p*x) + ck
	}
	return p
}

// glSincos returns sin x and cos x for 0 ≤ x < 2²⁹ (here x ∈ (0, π/2]). It
// is math.Sincos (the Cephes sin.c algorithm: reduction by π/4 in three
// parts, then degree-13/14 polynomials) written out with every product
// rounded, so that it gives the same bits on every target; compiled
// without fusion (amd64, GOAMD64=v1) math.Sincos gives these bits too.
func glSincos(x float64) (sin, cos float64) {
	const (
		pi4A = 7.85398125648498535156e-1  // 0x3fe921fb40000000, π/4 split into three parts
		pi4B = 3.77489470793079817668e-8  // 0x3e64442d00000000
		pi4C = 2.69515142907905952645e-15 // 0x3ce8469898cc5170
	)
	j := uint64(x * (4 / math.Pi)) // integer part of x/(π/4)
	y := float64(j)
	if j&1 == 1 { // map zeros to origin
		j++
		y++
	}
	j &= 7 // octant modulo 2π
	z := ((x - float64(y*pi4A)) - float64(y*pi4B)) - float64(y*pi4C)
	sinSign, cosSign := false, false
	if j > 3 { // reflect in x axis
		j -= 4
		sinSign, cosSign = true, true
	}
	if j > 1 {
		cosSign = !cosSign
	}
	zz := z * z
	cos = (1.0 - float64(0.5*zz)) + float64(float64(zz*zz)*glHorner(glCos[:], zz))
	sin = z + float64(float64(z*zz)*glHorner(glSin[:], zz))
	if j == 1 || j == 2 {
		sin, cos = cos, sin
	}
	if cosSign {
		cos = -cos
	}
	if sinSign {
		sin = -sin
	}
	return sin, cos
}

// The coefficients of math.Sincos (Cephes sin.c), highest degree first.
var (
	glSin = [...]float64{
		1.58962301576546568060e-10, // 0x3de5d8fd1fd19ccd
		-2.50507477628578072866e-8, // 0xbe5ae5e5a9291f5d
		2.75573136213857245213e-6,  // 0x3ec71de3567d48a1
		-1.98412698295895385996e-4, // 0xbf2a01a019bfdf03
		8.33333333332211858878e-3,  // 0x3f8111111110f7d0
		-1.66666666666666307295e-1, // 0xbfc5555555555548
	}
	glCos = [...]float64{
		-1.13585365213876817300e-11, // 0xbda8fa49a0861a9b
		2.08757008419747316778e-9,   // 0x3e21ee9d7b4e3f05
		-2.75573141792967388112e-7,  // 0xbe927e4f7eac4bc6
		2.48015872888517045348e-5,   // 0x3efa01a019c844f5
		-1.38888888888730564116e-3,  // 0xbf56c16c16c14f91
		4.16666666666665929218e-2,   // 0x3fa555555555554b
	}
)

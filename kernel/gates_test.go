package kernel

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

func randSlice(rng *rand.Rand, n int, scale float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = scale * rng.NormFloat64()
	}
	return s
}

// TestAxpyRows checks the contract loop, including skipped zero coefficients
// (which also leave -0 and NaN rows alone), strides longer than dst and sub-
// slices at odd offsets.
func TestAxpyRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for n := 0; n <= 19; n++ {
		for rowsN := 0; rowsN <= 5; rowsN++ {
			for off := range 3 {
				stride := n + off
				coef := randSlice(rng, rowsN, 1)
				if rowsN > 1 {
					coef[1] = 0
				}
				buf := randSlice(rng, off+rowsN*stride+n, 1)
				rows := buf[off:]
				if rowsN > 1 && n > 0 {
					rows[stride] = math.NaN() // in the skipped row
				}
				dst := randSlice(rng, n, 1)
				want := append([]float64(nil), dst...)
				for j, a := range coef {
					if a == 0 {
						continue
					}
					for i := range want {
						want[i] = math.FMA(a, rows[j*stride+i], want[i])
					}
				}
				AxpyRows(dst, rows, stride, coef)
				for i := range dst {
					if !sameBits(dst[i], want[i]) {
						t.Fatalf("n=%d rows=%d off=%d: dst[%d] = %v, want %v", n, rowsN, off, i, dst[i], want[i])
					}
				}
			}
		}
	}
}

// gateReference is GateStep for one unit, written from the formulas.
func gateReference(zi, zf, zg, zo, cPrev float64) (i, f, g, o, c, tc, h float64) {
	i, f, g, o = Sigmoid(zi), Sigmoid(zf), Tanh(zg), Sigmoid(zo)
	c = float64(f*cPrev) + float64(i*g)
	tc = Tanh(c)
	return i, f, g, o, c, tc, o * tc
}

func checkGateStep(t *testing.T, z, cPrev []float64) {
	t.Helper()
	n := len(cPrev)
	gates := append([]float64(nil), z...)
	zg, c, tc, h := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	GateStep(gates, zg, cPrev, c, tc, h)
	for j := range n {
		i, f, g, o, cj, tcj, hj := gateReference(z[j], z[n+j], z[2*n+j], z[3*n+j], cPrev[j])
		for _, p := range [][2]float64{{gates[j], i}, {gates[n+j], f}, {gates[2*n+j], g}, {gates[3*n+j], o},
			{zg[j], z[2*n+j]}, {c[j], cj}, {tc[j], tcj}, {h[j], hj}} {
			if !sameBits(p[0], p[1]) {
				t.Fatalf("unit %d of %d (z %v, cPrev %v): got %v want %v", j, n, []float64{z[j], z[n+j], z[2*n+j], z[3*n+j]}, cPrev[j], p[0], p[1])
			}
		}
	}
}

func TestGateStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for n := 1; n <= 17; n++ {
		checkGateStep(t, randSlice(rng, 4*n, 3), randSlice(rng, n, 2))
	}
	// Saturation: σ(50) and tanh(±19.1) are exactly 1, and a counter of
	// open gates adds exactly.
	z := []float64{50, 50, 19.1, 50}
	gates := append([]float64(nil), z...)
	zg, c, tc, h := make([]float64, 1), make([]float64, 1), make([]float64, 1), make([]float64, 1)
	GateStep(gates, zg, []float64{2}, c, tc, h)
	if gates[0] != 1 || gates[1] != 1 || gates[2] != 1 || gates[3] != 1 || c[0] != 3 {
		t.Errorf("saturated step: gates %v, c %v; want 1, 1, 1, 1 and c = 3", gates, c)
	}
}

// TestGateBackward compares the backward step with central differences of
// L = Σ_j a_j h_j + b_j c_j through GateStep.
func TestGateBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for n := 1; n <= 9; n++ {
		z, cPrev := randSlice(rng, 4*n, 1.5), randSlice(rng, n, 1)
		a, b := randSlice(rng, n, 1), randSlice(rng, n, 1)
		loss := func(z, cPrev []float64) float64 {
			g := append([]float64(nil), z...)
			zg, c, tc, h := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			GateStep(g, zg, cPrev, c, tc, h)
			s := 0.0
			for j := range n {
				s += a[j]*h[j] + b[j]*c[j]
			}
			return s
		}
		gates := append([]float64(nil), z...)
		zg, c, tc, h := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		GateStep(gates, zg, cPrev, c, tc, h)
		dz, dcPrev := make([]float64, 4*n), make([]float64, n)
		GateBackward(dz, dcPrev, a, b, gates, tc, cPrev)
		const eps = 1e-6
		fd := func(v []float64, k int) float64 {
			old := v[k]
			v[k] = old + eps
			up := loss(z, cPrev)
			v[k] = old - eps
			down := loss(z, cPrev)
			v[k] = old
			return (up - down) / (2 * eps)
		}
		for k := range z {
			if want := fd(z, k); math.Abs(dz[k]-want) > 1e-8*(1+math.Abs(want)) {
				t.Errorf("n=%d dz[%d] = %v, finite difference %v", n, k, dz[k], want)
			}
		}
		for k := range cPrev {
			if want := fd(cPrev, k); math.Abs(dcPrev[k]-want) > 1e-8*(1+math.Abs(want)) {
				t.Errorf("n=%d dcPrev[%d] = %v, finite difference %v", n, k, dcPrev[k], want)
			}
		}
	}
}

// TestLRPCell checks the ε-rule split of c = f⊙cPrev + i⊙g: the two shares
// add up to rc·c/(c ± ε), and sign(0) = +1.
func TestLRPCell(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const eps = 1e-3
	for n := 1; n <= 11; n++ {
		z, cPrev := randSlice(rng, 4*n, 2), randSlice(rng, n, 1)
		if n == 3 {
			z[2*n], cPrev[0] = 0, 0 // z_g = 0 and c = 0: sign(0) = +1
		}
		gates := append([]float64(nil), z...)
		zg, c, tc, h := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		GateStep(gates, zg, cPrev, c, tc, h)
		rc := randSlice(rng, n, 1)
		rcPrev, qg := make([]float64, n), make([]float64, n)
		LRPCell(rcPrev, qg, rc, gates, zg, c, cPrev, eps)
		for j := range n {
			den := c[j] + eps
			if c[j] < 0 {
				den = c[j] - eps
			}
			dg := zg[j] + eps
			if zg[j] < 0 {
				dg = zg[j] - eps
			}
			rg := qg[j] * dg
			if got, want := rcPrev[j]+rg, rc[j]*c[j]/den; math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
				t.Errorf("n=%d unit %d: shares add to %v, want %v", n, j, got, want)
			}
			if !sameBits(rcPrev[j], float64(gates[n+j]*cPrev[j])*(rc[j]/den)) {
				t.Errorf("n=%d unit %d: rcPrev %v", n, j, rcPrev[j])
			}
		}
	}
}

func TestLRPLinear(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for n := 0; n <= 13; n++ {
		for rowsN := 1; rowsN <= 4; rowsN++ {
			stride := n + 2
			rows, q := randSlice(rng, rowsN*stride, 1), randSlice(rng, rowsN, 1)
			a, dst := randSlice(rng, n, 1), randSlice(rng, n, 1)
			want := append([]float64(nil), dst...)
			for i := range want {
				s := 0.0
				for j := range rowsN {
					s = math.FMA(q[j], rows[j*stride+i], s)
				}
				want[i] += float64(a[i] * s)
			}
			acc := randSlice(rng, n, 1) // garbage: LRPLinear clears it
			LRPLinear(dst, acc, a, rows, stride, q)
			for i := range dst {
				if !sameBits(dst[i], want[i]) {
					t.Fatalf("n=%d rows=%d: dst[%d] = %v, want %v", n, rowsN, i, dst[i], want[i])
				}
			}
		}
	}
}

func TestKernelAllocations(t *testing.T) {
	const n = 8
	rng := rand.New(rand.NewPCG(5, 5))
	z, cPrev, rows := randSlice(rng, 4*n, 1), randSlice(rng, n, 1), randSlice(rng, 4*n*n, 1)
	zg, c, tc, h, dz, dc := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, 4*n), make([]float64, n)
	for name, f := range map[string]func(){
		"AxpyRows":     func() { AxpyRows(z, rows, 4*n, h) },
		"GateStep":     func() { GateStep(z, zg, cPrev, c, tc, h) },
		"GateBackward": func() { GateBackward(dz, dc, h, c, z, tc, cPrev) },
		"LRPCell":      func() { LRPCell(dc, zg, h, z, zg, c, cPrev, 1e-3) },
		"LRPLinear":    func() { LRPLinear(h, c, tc, rows, 4*n, zg) },
	} {
		if a := testing.AllocsPerRun(50, f); a != 0 {
			t.Errorf("%s: %v allocs", name, a)
		}
	}
}

// FuzzGateStep feeds raw float64 bits (NaN payloads, subnormals, infinities)
// to GateStep and checks it against the scalar formulas and the ranges of
// the activations.
func FuzzGateStep(f *testing.F) {
	seed := func(v ...float64) []byte {
		b := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
		return b
	}
	f.Add(seed(50, 50, 19.1, 50, 0))
	f.Add(seed(-50, -745.2, 709.8, math.Inf(-1), math.NaN()))
	f.Add(seed(0, math.Copysign(0, -1), 5e-324, -5e-324, 1, 2, 3, 4, 5, 6))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v []float64
		for len(data) >= 8 {
			v = append(v, math.Float64frombits(binary.LittleEndian.Uint64(data)))
			data = data[8:]
		}
		n := len(v) / 5
		if n == 0 {
			return
		}
		z, cPrev := v[:4*n], v[4*n:5*n]
		checkGateStep(t, z, cPrev)
		gates := append([]float64(nil), z...)
		zg, c, tc, h := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		GateStep(gates, zg, cPrev, c, tc, h)
		for j := range n {
			for k, g := range []float64{gates[j], gates[n+j], gates[3*n+j]} {
				if !(g >= 0 && g <= 1) && !math.IsNaN(z[k*n+j]) && !(k == 2 && math.IsNaN(z[3*n+j])) {
					t.Fatalf("gate %d of unit %d is %v for z %v", k, j, g, z[k*n+j])
				}
			}
			if math.Abs(gates[2*n+j]) > 1 || math.Abs(tc[j]) > 1 || math.Abs(h[j]) > 1 {
				t.Fatalf("unit %d: g %v tanh(c) %v h %v out of [-1, 1]", j, gates[2*n+j], tc[j], h[j])
			}
		}
	})
}

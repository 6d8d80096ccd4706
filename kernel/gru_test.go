package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestImplGRUStep: every length, blocks stride apart (the gaps and the
// fourth block read-only), misaligned windows, against the twin.
func TestImplGRUStep(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(31, 1))
		for _, n := range testLengths(rng) {
			for off := range 8 {
				stride := n + rng.IntN(9)
				if off == 0 {
					stride = n
				}
				z, hp := draw(rng, 3*stride+n, 4), draw(rng, n, 1)
				gates := newWindow(z, offsets(off, 0))
				hPrev := newWindow(hp, offsets(off, 1)).protect()
				c, tc, h := newWindow(make([]float64, n), offsets(off, 2)), newWindow(make([]float64, n), offsets(off, 3)), newWindow(make([]float64, n), offsets(off, 4))
				GRUStep(gates.s(), stride, hPrev.s(), c.s(), tc.s(), h.s())

				wg := append([]float64(nil), z...)
				wc, wtc, wh := make([]float64, n), make([]float64, n), make([]float64, n)
				gruStepGeneric(wg, stride, hp, wc, wtc, wh)
				what := fmt.Sprintf("n=%d stride=%d off=%d", n, stride, off)
				for _, w := range []*window{gates, hPrev, c, tc, h} {
					w.check(t, what)
				}
				compareBits(t, what+" gates (the fourth block and the gaps untouched)", gates.s(), wg)
				compareBits(t, what+" c", c.s(), wc)
				compareBits(t, what+" tc", tc.s(), wtc)
				compareBits(t, what+" h", h.s(), wh)
			}
		}
	})
}

// TestImplGRUBackward: as TestImplGRUStep, for the backward step; the
// inputs read-only, dz's gaps untouched.
func TestImplGRUBackward(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(32, 1))
		for _, n := range testLengths(rng) {
			for off := range 8 {
				stride := n + rng.IntN(9)
				if off == 0 {
					stride = n
				}
				vdh, vdc, vg, vhp := draw(rng, n, 1), draw(rng, n, 1), draw(rng, 3*stride+n, 0.5), draw(rng, n, 1)
				vdz := draw(rng, 3*stride+n, 1) // the gaps must keep these
				dz, dcPrev := newWindow(vdz, offsets(off, 0)), newWindow(make([]float64, n), offsets(off, 1))
				dh, dc := newWindow(vdh, offsets(off, 2)).protect(), newWindow(vdc, offsets(off, 3)).protect()
				gates, hPrev := newWindow(vg, offsets(off, 4)).protect(), newWindow(vhp, offsets(off, 5)).protect()
				GRUBackward(dz.s(), stride, dcPrev.s(), dh.s(), dc.s(), gates.s(), hPrev.s())
				wdz, wdcp := append([]float64(nil), vdz...), make([]float64, n)
				gruBackwardGeneric(wdz, stride, wdcp, vdh, vdc, vg, vhp)
				what := fmt.Sprintf("n=%d stride=%d off=%d", n, stride, off)
				for _, w := range []*window{dz, dcPrev, dh, dc, gates, hPrev} {
					w.check(t, what)
				}
				compareBits(t, what+" dz", dz.s(), wdz)
				compareBits(t, what+" dcPrev", dcPrev.s(), wdcp)
			}
		}
	})
}

// TestImplGRUAliasing: c may be hPrev.
func TestImplGRUAliasing(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(33, 1))
		for n := range 26 {
			z, hp := draw(rng, 4*n, 3), draw(rng, n, 1)
			gates, c := append([]float64(nil), z...), append([]float64(nil), hp...)
			tc, h := make([]float64, n), make([]float64, n)
			GRUStep(gates, n, c, c, tc, h)
			wg, wc, wtc, wh := append([]float64(nil), z...), make([]float64, n), make([]float64, n), make([]float64, n)
			gruStepGeneric(wg, n, hp, wc, wtc, wh)
			compareBits(t, fmt.Sprintf("n=%d c=hPrev", n), c, wc)
			compareBits(t, fmt.Sprintf("n=%d h", n), h, wh)
		}
	})
}

// TestGRUStep checks the twin against nn.GRU's formulas written with the
// math package (not the kernel's exp): r = σ(z_r), z = σ(z_z),
// n = tanh(n_in + r⊙hn), h' = (1 − z)⊙n + z⊙h; to 1e-15 relative.
func TestGRUStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 1))
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	for n := 1; n <= 17; n++ {
		z, hp := randSlice(rng, 4*n, 3), randSlice(rng, n, 1)
		gates := append([]float64(nil), z...)
		c, tc, h := make([]float64, n), make([]float64, n), make([]float64, n)
		GRUStep(gates, n, hp, c, tc, h)
		for j := range n {
			r, u := sig(z[j]), sig(z[n+j])
			a := z[2*n+j] + r*z[3*n+j]
			nv := math.Tanh(a)
			want := (1-u)*nv + u*hp[j]
			for _, p := range [][2]float64{{gates[j], r}, {gates[n+j], u}, {gates[2*n+j], nv}, {gates[3*n+j], z[3*n+j]}, {tc[j], a}, {c[j], want}, {h[j], want}} {
				if math.Abs(p[0]-p[1]) > 1e-15*(1+math.Abs(p[1])) {
					t.Fatalf("n=%d unit %d: got %v, want %v", n, j, p[0], p[1])
				}
			}
		}
	}
	// Saturated: r = z = 1 keeps h exactly.
	gates := []float64{50, 50, 3, 4}
	c, tc, h := make([]float64, 1), make([]float64, 1), make([]float64, 1)
	GRUStep(gates, 1, []float64{0.25}, c, tc, h)
	if h[0] != 0.25 {
		t.Errorf("z = 1: h = %v, want h_{t−1} = 0.25", h[0])
	}
}

// TestGRUBackward compares the backward step with central differences of
// L = Σ_j a_j h'_j through GRUStep, for every pre-activation and h_{t−1}
// (dc = 0: the direct path's gradient is dcPrev = z⊙dh).
func TestGRUBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 1))
	const n = 5
	z, hp, wts := randSlice(rng, 4*n, 1), randSlice(rng, n, 1), randSlice(rng, n, 1)
	loss := func(z, hp []float64) float64 {
		g := append([]float64(nil), z...)
		c, tc, h := make([]float64, n), make([]float64, n), make([]float64, n)
		GRUStep(g, n, hp, c, tc, h)
		s := 0.0
		for j := range n {
			s += wts[j] * h[j]
		}
		return s
	}
	g := append([]float64(nil), z...)
	c, tc, h := make([]float64, n), make([]float64, n), make([]float64, n)
	GRUStep(g, n, hp, c, tc, h)
	dz, dcPrev := make([]float64, 4*n), make([]float64, n)
	GRUBackward(dz, n, dcPrev, wts, make([]float64, n), g, hp)
	const step = 1e-6
	for i := range z {
		zp, zm := append([]float64(nil), z...), append([]float64(nil), z...)
		zp[i] += step
		zm[i] -= step
		fd := (loss(zp, hp) - loss(zm, hp)) / (2 * step)
		if math.Abs(fd-dz[i]) > 1e-8 {
			t.Errorf("dz[%d] = %v, central difference %v", i, dz[i], fd)
		}
	}
	// h_{t−1} reaches h' directly (z⊙h) and, in the engine, through the
	// recurrent products; the kernel's share is the direct one.
	for j := range n {
		hpp, hpm := append([]float64(nil), hp...), append([]float64(nil), hp...)
		hpp[j] += step
		hpm[j] -= step
		fd := (loss(z, hpp) - loss(z, hpm)) / (2 * step)
		if math.Abs(fd-dcPrev[j]) > 1e-8 {
			t.Errorf("dcPrev[%d] = %v, central difference %v", j, dcPrev[j], fd)
		}
	}
}

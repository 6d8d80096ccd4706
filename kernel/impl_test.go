package kernel

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// Tests that every implementation (assembly paths included) produces the
// same bits as the generic twins. NaN results only have to be NaN: their
// payloads are not part of the contract (sameBits).

func TestMain(m *testing.M) {
	// A comment to benchfmt (benchstat), not a configuration key: runs of
	// other kernels and machines still compare in one table.
	fmt.Printf("# kernel: %s; implementations here: %s\n", Machine(), strings.Join(impls(), ", "))
	os.Exit(m.Run())
}

// TestRequireImpl fails when WHITEBOX_REQUIRE_IMPL names an implementation
// other than the one selected, so that CI cannot fall back to the twins
// silently (avx512 natively here, avx2 with GODEBUG=cpu.avx512f=off, neon
// under qemu-aarch64).
func TestRequireImpl(t *testing.T) {
	want := os.Getenv("WHITEBOX_REQUIRE_IMPL")
	if want == "" {
		t.Skipf("WHITEBOX_REQUIRE_IMPL not set; using %s", Impl())
	}
	if got := Impl(); got != want {
		t.Fatalf("kernel implementation is %q, WHITEBOX_REQUIRE_IMPL wants %q (supported: %v)", got, want, impls())
	}
}

func TestSetImplNarrowsOnly(t *testing.T) {
	for k, name := range implNames {
		func() {
			defer func() {
				if r := recover(); (r != nil) == supported[k] {
					t.Errorf("setImpl(%q): panic %v, supported %v", name, r, supported[k])
				}
			}()
			restore := setImpl(name)
			if Impl() != name {
				t.Errorf("setImpl(%q): Impl() = %q", name, Impl())
			}
			restore()
		}()
	}
}

// forEachImpl runs f once per implementation that is not the twin itself.
func forEachImpl(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	ran := false
	for k, name := range implNames {
		if k == implGeneric {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if !supported[k] {
				t.Skipf("%s is not supported on this machine (%s)", name, Machine())
			}
			ran = true
			defer setImpl(name)()
			f(t)
		})
	}
	if !ran {
		t.Logf("no assembly implementation on this machine: only the twins ran")
	}
}

// specials are inputs at the edges of the activations' ranges.
var specials = []float64{
	0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(),
	math.Float64frombits(0x7ff0000000000001), // signalling NaN
	math.Float64frombits(0xfff8000000000123), // negative NaN with payload
	5e-324, -5e-324, 0x1p-1022, -0x1p-1022, 1e-300, math.MaxFloat64, -math.MaxFloat64,
	709.782712893384, 709.7827128933841, 710, 711, -745.1332191019411, -745.1332191019412, -746, -747,
	50, -50, 36.74, -36.74, 19.1, -19.1, 19.06, 0.625, -0.625, 0.6249999999999999, 1e-8, -1e-8,
	0.5 * math.Ln2, 1e10, -1e10,
}

// testValue draws an input: mostly normal values of the given scale, some
// special.
func testValue(rng *rand.Rand, scale float64) float64 {
	switch rng.IntN(10) {
	case 0:
		return specials[rng.IntN(len(specials))]
	case 1:
		return math.Float64frombits(rng.Uint64())
	default:
		return scale * rng.NormFloat64()
	}
}

// guard is the NaN pattern around every window; outputs and read-only
// inputs live inside such buffers.
const guardBits = 0x7ff8_dead_beef_0001

// window is a slice of n values at offset off inside a guarded buffer.
type window struct {
	buf      []float64
	off, n   int
	readOnly []float64 // a copy of the contents of a read-only window
}

const guardLen = 8

func newWindow(vals []float64, off int) *window {
	w := &window{buf: make([]float64, guardLen+off+len(vals)+guardLen), off: guardLen + off, n: len(vals)}
	for i := range w.buf {
		w.buf[i] = math.Float64frombits(guardBits)
	}
	copy(w.s(), vals)
	return w
}

func (w *window) s() []float64 { return w.buf[w.off : w.off+w.n : w.off+w.n] }

func (w *window) protect() *window {
	w.readOnly = append([]float64(nil), w.s()...)
	return w
}

// check reports writes outside the window, and inside it if it is read-only.
func (w *window) check(t *testing.T, what string) {
	t.Helper()
	for i, v := range w.buf {
		if i >= w.off && i < w.off+w.n {
			if w.readOnly != nil && math.Float64bits(v) != math.Float64bits(w.readOnly[i-w.off]) {
				t.Fatalf("%s: modified read-only argument at %d: %v, was %v", what, i-w.off, v, w.readOnly[i-w.off])
			}
			continue
		}
		if math.Float64bits(v) != guardBits {
			t.Fatalf("%s: guard at %d (window %d..%d) overwritten with %v", what, i, w.off, w.off+w.n, v)
		}
	}
}

func compareBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if !sameBits(got[i], want[i]) {
			t.Fatalf("%s: [%d] = %v (%#016x), twin %v (%#016x)", what, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

func draw(rng *rand.Rand, n int, scale float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = testValue(rng, scale)
	}
	return s
}

// testLengths are every n from 0 to 3×8+1, then some large random ones.
func testLengths(rng *rand.Rand) []int {
	var ns []int
	for n := 0; n <= 3*8+1; n++ {
		ns = append(ns, n)
	}
	for range 4 {
		ns = append(ns, 26+rng.IntN(1500))
	}
	return append(ns, 1024)
}

func offsets(base, k int) int { return (base + 3*k) % 8 }

func TestImplGateStep(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 1))
		for _, n := range testLengths(rng) {
			for off := range 8 {
				z, cp := draw(rng, 4*n, 4), draw(rng, n, 2)
				gates, zg := newWindow(z, offsets(off, 0)), newWindow(make([]float64, n), offsets(off, 1))
				cPrev := newWindow(cp, offsets(off, 2)).protect()
				c, tc, h := newWindow(make([]float64, n), offsets(off, 3)), newWindow(make([]float64, n), offsets(off, 4)), newWindow(make([]float64, n), offsets(off, 5))
				GateStep(gates.s(), zg.s(), cPrev.s(), c.s(), tc.s(), h.s())

				wg := append([]float64(nil), z...)
				wzg, wc, wtc, wh := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
				gateStepGeneric(wg, wzg, cp, wc, wtc, wh)
				what := fmt.Sprintf("n=%d off=%d", n, off)
				for _, w := range []*window{gates, zg, cPrev, c, tc, h} {
					w.check(t, what)
				}
				compareBits(t, what+" gates", gates.s(), wg)
				compareBits(t, what+" zg", zg.s(), wzg)
				compareBits(t, what+" c", c.s(), wc)
				compareBits(t, what+" tc", tc.s(), wtc)
				compareBits(t, what+" h", h.s(), wh)
			}
		}
	})
}

// TestImplGateStepTable: every table set, gate blocks stride apart (the gaps
// between them are read-only), act read-only, against the twin; the table
// gates' blocks of gates are left alone; with stride = n and no table,
// against GateStep's twin.
func TestImplGateStepTable(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(22, 1))
		for _, n := range testLengths(rng) {
			for off := range 16 {
				table := off // every table set at every length
				stride := n + rng.IntN(9)
				if off == 0 || off == 7 && n%2 == 0 {
					stride = n
				}
				z, cp, av := draw(rng, 3*stride+n, 4), draw(rng, n, 2), draw(rng, 3*stride+n, 1)
				gates := newWindow(z, offsets(off, 0))
				act := newWindow(av, offsets(off, 6)).protect()
				cPrev := newWindow(cp, offsets(off, 2)).protect()
				c, tc, h := newWindow(make([]float64, n), offsets(off, 3)), newWindow(make([]float64, n), offsets(off, 4)), newWindow(make([]float64, n), offsets(off, 5))
				GateStepTable(gates.s(), stride, act.s(), table, cPrev.s(), c.s(), tc.s(), h.s())

				wg := append([]float64(nil), z...)
				wc, wtc, wh := make([]float64, n), make([]float64, n), make([]float64, n)
				gateStepTableGeneric(wg, stride, av, table, cp, wc, wtc, wh)
				what := fmt.Sprintf("n=%d stride=%d table=%d off=%d", n, stride, table, off)
				for _, w := range []*window{gates, act, cPrev, c, tc, h} {
					w.check(t, what)
				}
				compareBits(t, what+" gates (and the gaps between the blocks)", gates.s(), wg)
				compareBits(t, what+" c", c.s(), wc)
				compareBits(t, what+" tc", tc.s(), wtc)
				compareBits(t, what+" h", h.s(), wh)
				// The twin against GateStep's, with act holding the
				// activations GateStep computes: the same bits.
				full := make([]float64, 4*n)
				for q := range 4 {
					copy(full[q*n:(q+1)*n], z[q*stride:q*stride+n])
				}
				want, zg, c2, tc2, h2 := append([]float64(nil), full...), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
				gateStepGeneric(want, zg, cp, c2, tc2, h2)
				tab := make([]float64, 3*stride+n)
				for q := range 4 {
					copy(tab[q*stride:q*stride+n], want[q*n:(q+1)*n])
				}
				wg = append([]float64(nil), z...)
				gateStepTableGeneric(wg, stride, tab, table, cp, wc, wtc, wh)
				for q := range 4 {
					if table&(1<<q) != 0 {
						compareBits(t, fmt.Sprintf("%s twin: table gate %d untouched", what, q), wg[q*stride:q*stride+n], z[q*stride:q*stride+n])
					} else {
						compareBits(t, fmt.Sprintf("%s twin vs GateStep: gate %d", what, q), wg[q*stride:q*stride+n], want[q*n:(q+1)*n])
					}
				}
				compareBits(t, what+" twin vs GateStep: c", wc, c2)
				compareBits(t, what+" twin vs GateStep: tc", wtc, tc2)
				compareBits(t, what+" twin vs GateStep: h", wh, h2)
			}
		}
	})
}

// TestImplGateBackwardTable: every table set and need set, blocks stride
// apart, against the twin (the blocks of dz outside need and the gaps keep
// their values), and the twin against GateBackward's with the table gates'
// rows moved into gates.
func TestImplGateBackwardTable(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(23, 1))
		for _, n := range testLengths(rng) {
			for off := range 32 {
				table, need := off%16, rng.IntN(16)
				if off < 16 && n <= 17 {
					need = (off + n) % 16 // every pair over the short lengths
				} else if off%4 == 0 {
					need = 15
				}
				stride := n + rng.IntN(9)
				if off == 0 || off == 7 && n%2 == 0 {
					stride = n
				}
				vdh, vdc, vtc, vcp := draw(rng, n, 1), draw(rng, n, 1), draw(rng, n, 0.5), draw(rng, n, 1)
				vg, va, vdz := draw(rng, 3*stride+n, 0.5), draw(rng, 3*stride+n, 0.5), draw(rng, 3*stride+n, 1)
				dz, dcPrev := newWindow(vdz, offsets(off, 0)), newWindow(make([]float64, n), offsets(off, 1))
				dh, dc := newWindow(vdh, offsets(off, 2)).protect(), newWindow(vdc, offsets(off, 3)).protect()
				gates, act := newWindow(vg, offsets(off, 4)).protect(), newWindow(va, offsets(off, 7)).protect()
				tc, cPrev := newWindow(vtc, offsets(off, 5)).protect(), newWindow(vcp, offsets(off, 6)).protect()
				GateBackwardTable(dz.s(), stride, dcPrev.s(), dh.s(), dc.s(), gates.s(), act.s(), table, need, tc.s(), cPrev.s())
				wdz, wdcp := append([]float64(nil), vdz...), make([]float64, n)
				gateBackwardTableGeneric(wdz, stride, wdcp, vdh, vdc, vg, va, table, need, vtc, vcp)
				what := fmt.Sprintf("n=%d stride=%d table=%d need=%d off=%d", n, stride, table, need, off)
				for _, w := range []*window{dz, dcPrev, dh, dc, gates, act, tc, cPrev} {
					w.check(t, what)
				}
				compareBits(t, what+" dz", dz.s(), wdz)
				compareBits(t, what+" dcPrev", dcPrev.s(), wdcp)
				full := make([]float64, 4*n)
				for q := range 4 {
					src := vg
					if table&(1<<q) != 0 {
						src = va
					}
					copy(full[q*n:(q+1)*n], src[q*stride:q*stride+n])
				}
				fdz, fdcp := make([]float64, 4*n), make([]float64, n)
				gateBackwardGeneric(fdz, fdcp, vdh, vdc, full, vtc, vcp)
				for q := range 4 {
					want := fdz[q*n : (q+1)*n]
					if need&(1<<q) == 0 {
						want = vdz[q*stride : q*stride+n]
					}
					compareBits(t, fmt.Sprintf("%s twin vs GateBackward: dz %d", what, q), wdz[q*stride:q*stride+n], want)
				}
				compareBits(t, what+" twin vs GateBackward: dcPrev", wdcp, fdcp)
			}
		}
	})
}

// TestImplActivations runs the vector exp, sigmoid and tanh of the gate step
// over dense sweeps of their inputs: z_i gives σ, z_g gives tanh, and with
// f = 0, i = 1 (z_f = -Inf, z_i = +Inf) c = g, so tc = tanh(tanh(z_g)).
func TestImplActivations(t *testing.T) {
	var xs []float64
	rng := rand.New(rand.NewPCG(12, 1))
	xs = append(xs, specials...)
	xs = appendUniform(xs, rng, testScale(20000), -750, 750)
	xs = appendUniform(xs, rng, testScale(20000), -40, 40)
	xs = appendUniform(xs, rng, testScale(5000), -1, 1)
	xs = appendLogUniform(xs, rng, testScale(5000), -1074, 0)
	for x := -746.0; x <= 711; x += 0.0625 {
		xs = append(xs, x, math.Nextafter(x, math.Inf(1)))
	}
	for x := 0.6; x <= 0.65; x += 1e-5 {
		xs = append(xs, x, -x)
	}
	forEachImpl(t, func(t *testing.T) {
		n := len(xs)
		z := make([]float64, 4*n)
		copy(z, xs)       // σ
		copy(z[n:], xs)   // σ
		copy(z[2*n:], xs) // tanh
		copy(z[3*n:], xs) // σ
		cp := append([]float64(nil), xs...)
		gates, zg, c, tc, h := append([]float64(nil), z...), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		GateStep(gates, zg, cp, c, tc, h)
		wg, wzg, wc, wtc, wh := append([]float64(nil), z...), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		gateStepGeneric(wg, wzg, cp, wc, wtc, wh)
		for j, x := range xs {
			for k, p := range [][2]float64{{gates[j], wg[j]}, {gates[2*n+j], wg[2*n+j]}, {c[j], wc[j]}, {tc[j], wtc[j]}, {h[j], wh[j]}} {
				if !sameBits(p[0], p[1]) {
					t.Fatalf("x = %v (%#x): output %d = %v, twin %v", x, math.Float64bits(x), k, p[0], p[1])
				}
			}
		}
		// Exp alone: the gate step's tanh(c) with c = ±x needs exp(2|x|);
		// σ needs exp(-|x|). Check the saturation points the spec names.
		one := []float64{50, -50, 19.1, -19.1}
		for _, x := range one {
			g := []float64{x, x, x, x}
			zg, c, tc, h := make([]float64, 1), make([]float64, 1), make([]float64, 1), make([]float64, 1)
			GateStep(g, zg, []float64{0}, c, tc, h)
			if x == 50 && g[0] != 1 {
				t.Errorf("σ(50) = %v, want 1", g[0])
			}
			if math.Abs(x) == 19.1 && math.Abs(g[2]) != 1 {
				t.Errorf("tanh(%v) = %v, want ±1", x, g[2])
			}
		}
	})
}

// TestImplTableActivations runs GateStepTable over the dense sweeps of
// TestImplActivations for every table set: each gate row and cPrev is the
// sorted sweep, so whole vectors fall on each side of the saturation and
// branch points whose work the vector bodies skip.
func TestImplTableActivations(t *testing.T) {
	var xs []float64
	rng := rand.New(rand.NewPCG(24, 1))
	xs = append(xs, specials...)
	xs = appendUniform(xs, rng, testScale(4000), -60, 60)
	for x := -746.0; x <= 711; x += 0.25 {
		xs = append(xs, x, math.Nextafter(x, math.Inf(1)))
	}
	for x := -45.0; x <= 45; x += 1.0 / 64 {
		xs = append(xs, x)
	}
	slices.SortFunc(xs, func(a, b float64) int {
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
	n := len(xs)
	z := make([]float64, 4*n)
	for q := range 4 {
		copy(z[q*n:], xs)
	}
	av := draw(rng, 4*n, 1)
	forEachImpl(t, func(t *testing.T) {
		for table := range 16 {
			for _, cp := range [][]float64{xs, make([]float64, n)} {
				g, c, tc, h := append([]float64(nil), z...), make([]float64, n), make([]float64, n), make([]float64, n)
				GateStepTable(g, n, av, table, cp, c, tc, h)
				wg, wc, wtc, wh := append([]float64(nil), z...), make([]float64, n), make([]float64, n), make([]float64, n)
				gateStepTableGeneric(wg, n, av, table, cp, wc, wtc, wh)
				what := fmt.Sprintf("table=%d", table)
				compareBits(t, what+" gates", g, wg)
				compareBits(t, what+" c", c, wc)
				compareBits(t, what+" tc", tc, wtc)
				compareBits(t, what+" h", h, wh)
			}
		}
	})
}

func TestImplGateBackward(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(13, 1))
		for _, n := range testLengths(rng) {
			for off := range 8 {
				vdh, vdc, vg, vtc, vcp := draw(rng, n, 1), draw(rng, n, 1), draw(rng, 4*n, 0.5), draw(rng, n, 0.5), draw(rng, n, 1)
				dz, dcPrev := newWindow(make([]float64, 4*n), offsets(off, 0)), newWindow(make([]float64, n), offsets(off, 1))
				dh, dc := newWindow(vdh, offsets(off, 2)).protect(), newWindow(vdc, offsets(off, 3)).protect()
				gates, tc, cPrev := newWindow(vg, offsets(off, 4)).protect(), newWindow(vtc, offsets(off, 5)).protect(), newWindow(vcp, offsets(off, 6)).protect()
				GateBackward(dz.s(), dcPrev.s(), dh.s(), dc.s(), gates.s(), tc.s(), cPrev.s())
				wdz, wdcp := make([]float64, 4*n), make([]float64, n)
				gateBackwardGeneric(wdz, wdcp, vdh, vdc, vg, vtc, vcp)
				what := fmt.Sprintf("n=%d off=%d", n, off)
				for _, w := range []*window{dz, dcPrev, dh, dc, gates, tc, cPrev} {
					w.check(t, what)
				}
				compareBits(t, what+" dz", dz.s(), wdz)
				compareBits(t, what+" dcPrev", dcPrev.s(), wdcp)
			}
		}
	})
}

func TestImplLRPCell(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(14, 1))
		for _, n := range testLengths(rng) {
			for off := range 8 {
				eps := []float64{1e-3, 0, 1e-9, 0.5}[off%4]
				vrc, vg, vzg, vc, vcp := draw(rng, n, 1), draw(rng, 4*n, 0.5), draw(rng, n, 2), draw(rng, n, 1), draw(rng, n, 1)
				if n > 2 {
					vc[0], vzg[1], vc[2] = 0, math.Copysign(0, -1), -eps
				}
				rcPrev, qg := newWindow(make([]float64, n), offsets(off, 0)), newWindow(make([]float64, n), offsets(off, 1))
				rc, gates, zg := newWindow(vrc, offsets(off, 2)).protect(), newWindow(vg, offsets(off, 3)).protect(), newWindow(vzg, offsets(off, 4)).protect()
				c, cPrev := newWindow(vc, offsets(off, 5)).protect(), newWindow(vcp, offsets(off, 6)).protect()
				LRPCell(rcPrev.s(), qg.s(), rc.s(), gates.s(), zg.s(), c.s(), cPrev.s(), eps)
				wr, wq := make([]float64, n), make([]float64, n)
				lrpCellGeneric(wr, wq, vrc, vg, vzg, vc, vcp, eps)
				what := fmt.Sprintf("n=%d off=%d eps=%v", n, off, eps)
				for _, w := range []*window{rcPrev, qg, rc, gates, zg, c, cPrev} {
					w.check(t, what)
				}
				compareBits(t, what+" rcPrev", rcPrev.s(), wr)
				compareBits(t, what+" qg", qg.s(), wq)
			}
		}
	})
}

// axpyRowsCase draws coefficients with exact zeros of both signs (whose
// rows, holding NaN and Inf, must be skipped) and a NaN coefficient.
func axpyRowsCase(rng *rand.Rand, n, nrows int) (stride int, rows, coef []float64) {
	stride = n + rng.IntN(9)
	coef = draw(rng, nrows, 1)
	rows = draw(rng, max(0, (nrows-1)*stride+n), 1)
	for j := range coef {
		switch rng.IntN(4) {
		case 0:
			coef[j] = 0
		case 1:
			coef[j] = math.Copysign(0, -1)
		}
		if coef[j] == 0 && n > 0 {
			rows[j*stride] = math.NaN()
			rows[j*stride+n-1] = math.Inf(1)
		}
	}
	return stride, rows, coef
}

func TestImplAxpyRows(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(15, 1))
		for _, n := range testLengths(rng) {
			for off := range 8 {
				nrows := []int{0, 1, 2, 3, 5, 9, 17, 40}[off]
				stride, vrows, vcoef := axpyRowsCase(rng, n, nrows)
				vdst := draw(rng, n, 1)
				dst := newWindow(vdst, offsets(off, 0))
				rows, coef := newWindow(vrows, offsets(off, 1)).protect(), newWindow(vcoef, offsets(off, 2)).protect()
				AxpyRows(dst.s(), rows.s(), stride, coef.s())
				want := append([]float64(nil), vdst...)
				if nrows > 0 {
					axpyRowsGeneric(want, vrows, stride, vcoef)
				}
				what := fmt.Sprintf("n=%d rows=%d stride=%d off=%d", n, nrows, stride, off)
				for _, w := range []*window{dst, rows, coef} {
					w.check(t, what)
				}
				compareBits(t, what, dst.s(), want)
			}
		}
	})
}

// mulAddRowsCase draws m output rows of n lanes over k shared rows, with
// exact zeros of both signs among the coefficients (whose rows carry NaN and
// Inf in some lanes: the term must be skipped for that output row only) and
// coefficient rows longer than k.
func mulAddRowsCase(rng *rand.Rand, n, m, k int) (stride, coefStride int, rows, coef []float64) {
	stride = n + rng.IntN(9)
	coefStride = k + rng.IntN(5)
	rows = draw(rng, max(0, (k-1)*stride+n), 1)
	coef = draw(rng, max(0, (m-1)*coefStride+k), 1)
	// Half of the cases have dense coefficients (no ±0: the AVX-512 body's
	// loop without tests), the others a zero in about every eighth term,
	// somewhere in a tile of dense rows.
	zeros := 8
	if rng.IntN(2) == 0 {
		for i, v := range coef {
			if v == 0 {
				coef[i] = 1
			}
		}
		zeros = 0
	}
	for r := range m {
		for j := range k {
			if zeros == 0 {
				break
			}
			switch rng.IntN(zeros) {
			case 0:
				coef[r*coefStride+j] = 0
			case 1:
				coef[r*coefStride+j] = math.Copysign(0, -1)
			}
		}
	}
	if n > 0 {
		for j := range k {
			if rng.IntN(3) == 0 {
				rows[j*stride+rng.IntN(n)] = math.Inf(rng.IntN(2)*2 - 1)
				rows[j*stride+rng.IntN(n)] = math.NaN()
			}
		}
	}
	return stride, coefStride, rows, coef
}

// checkMulAddRows runs MulAddRows on a case of mulAddRowsCase in windows
// misaligned by off and compares it with the twin: it returns the case,
// dst before and the twin's dst after.
func checkMulAddRows(t *testing.T, rng *rand.Rand, n, m, k, off int) (vdst, want, vrows, vcoef []float64, stride, coefStride int, what string) {
	t.Helper()
	stride, coefStride, vrows, vcoef = mulAddRowsCase(rng, n, m, k)
	extra := off % 3 % n // dst elements past m·n: untouched
	vdst = draw(rng, m*n+extra, 1)
	dst := newWindow(vdst, offsets(off, 0))
	rows, coef := newWindow(vrows, offsets(off, 1)).protect(), newWindow(vcoef, offsets(off, 2)).protect()
	MulAddRows(dst.s(), n, rows.s(), stride, coef.s(), coefStride, k)
	want = append([]float64(nil), vdst...)
	if k > 0 {
		mulAddRowsGeneric(want[:m*n], n, vrows, stride, vcoef, coefStride, k)
	}
	what = fmt.Sprintf("n=%d m=%d k=%d stride=%d coefStride=%d off=%d", n, m, k, stride, coefStride, off)
	for _, w := range []*window{dst, rows, coef} {
		w.check(t, what)
	}
	compareBits(t, what, dst.s(), want)
	if Nonzero(vcoef) { // half the cases: MulAddRowsNonzero, without the scan, gives the same bits
		nz := newWindow(vdst, offsets(off, 0))
		MulAddRowsNonzero(nz.s(), n, rows.s(), stride, coef.s(), coefStride, k)
		nz.check(t, what+" (MulAddRowsNonzero)")
		compareBits(t, what+" (MulAddRowsNonzero)", nz.s(), want)
	}
	return vdst, want, vrows, vcoef, stride, coefStride, what
}

func TestImplMulAddRows(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 1))
		ns := append(testLengths(rng), 64, 56, 48, 65, 97, 50, 63, 66, 68, 69, 72, 76)
		for n := 1; n <= 40; n++ { // every last vector of the tail passes: 1–4 lanes (256 bits) and 5–8
			ns = append(ns, n)
		}
		for _, n := range ns {
			if n == 0 {
				continue
			}
			for off := range 8 {
				m := []int{1, 4, 5, 6, 7, 12, 13, 25, 2, 3, 8, 9, 10, 11}[(off+n)%14]
				if n > 200 {
					m = []int{6, 7}[off%2]
				}
				k := []int{1, 2, 3, 9, 17, 40, 0, 5}[(off+n)%8]
				vdst, want, vrows, vcoef, stride, coefStride, what := checkMulAddRows(t, rng, n, m, k, off)
				// The twin is AxpyRows row by row.
				want2 := append([]float64(nil), vdst...)
				for r := range m {
					if k > 0 {
						axpyRowsGeneric(want2[r*n:(r+1)*n], vrows, stride, vcoef[r*coefStride:r*coefStride+k])
					}
				}
				compareBits(t, what+" (AxpyRows)", want, want2)
			}
		}
	})
}

func TestImplAxpy(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(16, 1))
		for _, n := range testLengths(rng) {
			for off := range 8 {
				alpha := []float64{0, math.Copysign(0, -1), 1.5, -0.3, math.Inf(1), math.NaN(), 1e-300, 2}[off]
				vx, vy := draw(rng, n+off, 1), draw(rng, n, 1)
				x, y := newWindow(vx, offsets(off, 1)).protect(), newWindow(vy, offsets(off, 2))
				Axpy(alpha, x.s(), y.s())
				want := append([]float64(nil), vy...)
				axpyGeneric(alpha, vx[:n], want)
				what := fmt.Sprintf("n=%d alpha=%v off=%d", n, alpha, off)
				x.check(t, what)
				y.check(t, what)
				compareBits(t, what, y.s(), want)
			}
		}
	})
}

func TestImplLRPLinear(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(17, 1))
		for _, n := range testLengths(rng) {
			for off := range 8 {
				nrows := 1 + off
				stride, vrows, vq := axpyRowsCase(rng, n, nrows)
				vdst, va := draw(rng, n, 1), draw(rng, n, 1)
				dst, acc := newWindow(vdst, offsets(off, 0)), newWindow(draw(rng, n, 1), offsets(off, 1))
				a, rows, q := newWindow(va, offsets(off, 2)).protect(), newWindow(vrows, offsets(off, 3)).protect(), newWindow(vq, offsets(off, 4)).protect()
				LRPLinear(dst.s(), acc.s(), a.s(), rows.s(), stride, q.s())
				want, wacc := append([]float64(nil), vdst...), make([]float64, n)
				axpyRowsGeneric(wacc, vrows, stride, vq)
				lrpLinearGeneric(want, wacc, va)
				what := fmt.Sprintf("n=%d rows=%d off=%d", n, nrows, off)
				for _, w := range []*window{dst, acc, a, rows, q} {
					w.check(t, what)
				}
				compareBits(t, what+" dst", dst.s(), want)
				compareBits(t, what+" acc", acc.s(), wacc)
			}
		}
	})
}

// TestImplAliasing: GateStep updates gates in place (always), and an output
// may be the very same slice as an input of the same unit (c as cPrev).
func TestImplAliasing(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(18, 1))
		for n := range 26 {
			z, cp := draw(rng, 4*n, 3), draw(rng, n, 1)
			gates, c := append([]float64(nil), z...), append([]float64(nil), cp...)
			zg, tc, h := make([]float64, n), make([]float64, n), make([]float64, n)
			GateStep(gates, zg, c, c, tc, h)
			wg, wzg, wc, wtc, wh := append([]float64(nil), z...), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			gateStepGeneric(wg, wzg, cp, wc, wtc, wh)
			compareBits(t, fmt.Sprintf("n=%d c=cPrev", n), c, wc)
			compareBits(t, fmt.Sprintf("n=%d h", n), h, wh)
		}
	})
}

func TestImplAllocations(t *testing.T) {
	forEachImpl(t, func(t *testing.T) {
		const n = 37
		rng := rand.New(rand.NewPCG(5, 5))
		z, cPrev, rows := randSlice(rng, 4*n, 1), randSlice(rng, n, 1), randSlice(rng, 4*n*n, 1)
		zg, c, tc, h, dz, dc := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, 4*n), make([]float64, n)
		for name, f := range map[string]func(){
			"Axpy":              func() { Axpy(0.5, rows, z) },
			"AxpyRows":          func() { AxpyRows(z, rows, 4*n, h) },
			"MulAddRows":        func() { MulAddRows(z, n, rows, 4*n, rows, n, n) },
			"MulAddRowsNonzero": func() { MulAddRowsNonzero(z, n, rows, 4*n, rows, n, n) },
			"GateStep":          func() { GateStep(z, zg, cPrev, c, tc, h) },
			"GateStepTable": func() {
				GateStepTable(z, n, rows, TableF|TableG|TableO, cPrev, c, tc, h)
			},
			"GateBackwardTable": func() {
				GateBackwardTable(dz, n, dc, h, c, z, rows, TableI|TableO, TableG, tc, cPrev)
			},
			"GateBackward": func() { GateBackward(dz, dc, h, c, z, tc, cPrev) },
			"GRUStep":      func() { GRUStep(z, n, cPrev, c, tc, h) },
			"GRUBackward":  func() { GRUBackward(dz, n, dc, h, c, z, cPrev) },
			"LRPCell":      func() { LRPCell(dc, zg, h, z, zg, c, cPrev, 1e-3) },
			"LRPLinear":    func() { LRPLinear(h, c, tc, rows, 4*n, zg) },
		} {
			if a := testing.AllocsPerRun(50, f); a != 0 {
				t.Errorf("%s: %v allocs", name, a)
			}
		}
	})
}

// decodeFloats reads little-endian float64 bit patterns.
func decodeFloats(data []byte) []float64 {
	v := make([]float64, len(data)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
	}
	return v
}

func fuzzBytes(v ...float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// FuzzImplKernels decodes raw float64 bits (NaN payloads, subnormals,
// infinities) into the inputs of every kernel and checks every
// implementation against the twin, at sub-slice offset off%8.
func FuzzImplKernels(f *testing.F) {
	f.Add(fuzzBytes(50, 50, 19.1, 50, 0), uint8(0))
	f.Add(fuzzBytes(-50, -745.2, 709.8, math.Inf(-1), math.NaN(), 1, 2, 3, 4, 5), uint8(3))
	f.Add(fuzzBytes(0, math.Copysign(0, -1), 5e-324, -5e-324, 1, 2, 3, 4, 5, 6, -19.1, 0.625, 36.74, 1e300, -1e300), uint8(5))
	f.Add(fuzzBytes(specials...), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, off uint8) {
		v := decodeFloats(data)
		n := len(v) / 5
		o := int(off % 8)
		pad := func(s []float64) []float64 { return append(make([]float64, o), s...)[o:] }
		z, x := v[:4*n], v[4*n:5*n]
		for k := range implNames {
			if k == implGeneric || !supported[k] {
				continue
			}
			func() {
				defer setImpl(implNames[k])()
				// GateStep.
				g, zg, c, tc, h := pad(z), pad(make([]float64, n)), pad(make([]float64, n)), pad(make([]float64, n)), pad(make([]float64, n))
				GateStep(g, zg, x, c, tc, h)
				wg, wzg, wc, wtc, wh := append([]float64(nil), z...), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
				gateStepGeneric(wg, wzg, x, wc, wtc, wh)
				for i, p := range [][2][]float64{{g, wg}, {zg, wzg}, {c, wc}, {tc, wtc}, {h, wh}} {
					compareBits(t, fmt.Sprintf("%s GateStep output %d", implNames[k], i), p[0], p[1])
				}
				// GateStepTable and GateBackwardTable, with z as the gates
				// and as act (reversed), the table set from off.
				if n > 0 {
					tb := int(off>>3) & 15
					av := pad(append([]float64(nil), z...))
					slices.Reverse(av)
					g, c, tc, h := pad(z), pad(make([]float64, n)), pad(make([]float64, n)), pad(make([]float64, n))
					GateStepTable(g, n, av, tb, x, c, tc, h)
					wg, wc, wtc, wh := append([]float64(nil), z...), make([]float64, n), make([]float64, n), make([]float64, n)
					gateStepTableGeneric(wg, n, av, tb, x, wc, wtc, wh)
					for i, p := range [][2][]float64{{g, wg}, {c, wc}, {tc, wtc}, {h, wh}} {
						compareBits(t, fmt.Sprintf("%s GateStepTable output %d", implNames[k], i), p[0], p[1])
					}
					dz, dcp := pad(make([]float64, 4*n)), pad(make([]float64, n))
					need := int(off>>3) ^ 9
					GateBackwardTable(dz, n, dcp, x, x, z, av, tb, need, x, x)
					wdz, wdcp := make([]float64, 4*n), make([]float64, n)
					gateBackwardTableGeneric(wdz, n, wdcp, x, x, z, av, tb, need, x, x)
					compareBits(t, implNames[k]+" GateBackwardTable dz", dz, wdz)
					compareBits(t, implNames[k]+" GateBackwardTable dcPrev", dcp, wdcp)
				}
				// GateBackward, with z as the gates and x as everything else.
				dz, dcp := pad(make([]float64, 4*n)), pad(make([]float64, n))
				GateBackward(dz, dcp, x, x, z, x, x)
				wdz, wdcp := make([]float64, 4*n), make([]float64, n)
				gateBackwardGeneric(wdz, wdcp, x, x, z, x, x)
				compareBits(t, implNames[k]+" GateBackward dz", dz, wdz)
				compareBits(t, implNames[k]+" GateBackward dcPrev", dcp, wdcp)
				// GRUStep and GRUBackward, blocks n apart.
				g, c, tc, h = pad(z), pad(make([]float64, n)), pad(make([]float64, n)), pad(make([]float64, n))
				GRUStep(g, n, x, c, tc, h)
				wg, wc, wtc, wh = append([]float64(nil), z...), make([]float64, n), make([]float64, n), make([]float64, n)
				gruStepGeneric(wg, n, x, wc, wtc, wh)
				for i, p := range [][2][]float64{{g, wg}, {c, wc}, {tc, wtc}, {h, wh}} {
					compareBits(t, fmt.Sprintf("%s GRUStep output %d", implNames[k], i), p[0], p[1])
				}
				dz, dcp = pad(make([]float64, 4*n)), pad(make([]float64, n))
				GRUBackward(dz, n, dcp, x, x, z, x)
				wdz, wdcp = make([]float64, 4*n), make([]float64, n)
				gruBackwardGeneric(wdz, n, wdcp, x, x, z, x)
				compareBits(t, implNames[k]+" GRUBackward dz", dz, wdz)
				compareBits(t, implNames[k]+" GRUBackward dcPrev", dcp, wdcp)
				// LRPCell.
				eps := 1e-3
				if n > 0 {
					eps = math.Abs(x[0])
				}
				r, q := pad(make([]float64, n)), pad(make([]float64, n))
				LRPCell(r, q, x, z, z[:n], x, z[n:2*n], eps)
				wr, wq := make([]float64, n), make([]float64, n)
				lrpCellGeneric(wr, wq, x, z, z[:n], x, z[n:2*n], eps)
				compareBits(t, implNames[k]+" LRPCell rcPrev", r, wr)
				compareBits(t, implNames[k]+" LRPCell qg", q, wq)
				// AxpyRows over z as 4 rows of n and x as the coefficients.
				if n > 0 {
					coef := x[:min(n, 4)]
					d := pad(append([]float64(nil), x...))
					AxpyRows(d, z, n, coef)
					wd := append([]float64(nil), x...)
					axpyRowsGeneric(wd, z[:(len(coef)-1)*n+n], n, coef)
					compareBits(t, implNames[k]+" AxpyRows", d, wd)
					acc, d2 := pad(make([]float64, n)), pad(append([]float64(nil), z[:n]...))
					LRPLinear(d2, acc, x, z, n, coef)
					wacc, wd2 := make([]float64, n), append([]float64(nil), z[:n]...)
					axpyRowsGeneric(wacc, z[:(len(coef)-1)*n+n], n, coef)
					lrpLinearGeneric(wd2, wacc, x)
					compareBits(t, implNames[k]+" LRPLinear", d2, wd2)
				}
				// MulAddRows: z as rows of n lanes, a tile of output rows
				// (the first 4n values of z, then x) with coefficients
				// from z and x.
				if n > 0 {
					kk := min(n, 4)
					dv := append(append([]float64(nil), z...), x...)
					cv := append(append([]float64(nil), x...), z...)
					m := len(dv) / n
					cs := kk
					for (m-1)*cs+kk > len(cv) {
						m--
					}
					d := pad(append([]float64(nil), dv...))
					MulAddRows(d, n, z, n, cv, cs, kk)
					wd := append([]float64(nil), dv...)
					if m > 0 {
						mulAddRowsGeneric(wd[:m*n], n, z, n, cv, cs, kk)
					}
					compareBits(t, implNames[k]+" MulAddRows", d, wd)
					if Nonzero(cv[:max(0, (m-1)*cs+kk)]) {
						d = pad(append([]float64(nil), dv...))
						MulAddRowsNonzero(d, n, z, n, cv, cs, kk)
						compareBits(t, implNames[k]+" MulAddRowsNonzero", d, wd)
					}
				}
			}()
		}
	})
}

// Command _gen generates ../kernel_amd64.s and ../kernel_stubs_amd64.go, the
// AVX2+FMA and AVX-512 bodies of package kernel, with avo:
//
//	cd kernel/_gen && go run . -out ../kernel_amd64.s -stubs ../kernel_stubs_amd64.go -pkg kernel
//
// Every kernel is emitted once per vector width from the same Go function,
// and each emits exactly the IEEE operations of its generic twin
// (../gates_generic.go, ../exp_generic.go), lane by lane, in the same order:
// VFMADD where the twin writes math.FMA, separate VMULPD and VADDPD where it
// writes float64(a*b) + c. The AVX-512 bodies cover every n, finishing with
// a masked block; the AVX2 bodies cover n rounded down to a multiple of 4
// and leave the rest to the twin in Go, but for MulAddRows, which masks
// its last vector.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// VCMPPD predicates.
const (
	cmpLTOQ  = 0x11 // a < b, ordered (false for NaN)
	cmpNLTUQ = 0x15 // !(a < b), true for NaN
	cmpGEOQ  = 0x1d // a >= b, ordered (false for NaN)
	cmpNGEUQ = 0x19 // !(a >= b), true for NaN
)

var cst = map[string]Mem{}

// isa is one vector width.
type isa struct {
	name   string // suffix of the Go names: AVX2, AVX512
	lanes  int    // float64 lanes per register
	avx512 bool
}

var (
	avx2   = &isa{name: "AVX2", lanes: 4}
	avx512 = &isa{name: "AVX512", lanes: 8, avx512: true}
)

func (a *isa) vec() VecVirtual {
	if a.avx512 {
		return ZMM()
	}
	return YMM()
}

// k returns the named constant as a full-width memory operand.
func (a *isa) k(name string) Mem {
	m, ok := cst[name]
	if !ok {
		panic("no constant " + name)
	}
	return m
}

// load returns the constant in a fresh register.
func (a *isa) kreg(name string) Register {
	r := a.vec()
	VMOVUPD(a.k(name), r)
	return r
}

func (a *isa) and(src2 Op, src1, dst Register) {
	if a.avx512 {
		VPANDQ(src2, src1, dst)
	} else {
		VANDPD(src2, src1, dst)
	}
}

func (a *isa) or(src2 Op, src1, dst Register) {
	if a.avx512 {
		VPORQ(src2, src1, dst)
	} else {
		VORPD(src2, src1, dst)
	}
}

// cmp returns the mask src1 <pred> src2 (a vector on AVX2, a K register on
// AVX-512).
func (a *isa) cmp(pred uint8, src2 Op, src1 Register) Register {
	if a.avx512 {
		m := K()
		VCMPPD(U8(pred), src2, src1, m)
		return m
	}
	m := a.vec()
	VCMPPD(U8(pred), src2, src1, m)
	return m
}

// blend sets dst = mask ? ifTrue : ifFalse, lane by lane.
func (a *isa) blend(mask Register, ifTrue Op, ifFalse, dst Register) {
	if a.avx512 {
		VBLENDMPD(ifTrue, ifFalse, mask, dst)
	} else {
		VBLENDVPD(mask, ifTrue, ifFalse, dst)
	}
}

// round rounds to an integer: mode 0 to nearest even, 1 down.
func (a *isa) round(mode uint8, src, dst Register) {
	if a.avx512 {
		VRNDSCALEPD(U8(mode), src, dst)
	} else {
		VROUNDPD(U8(mode), src, dst)
	}
}

// expArg is one exp evaluation: x is replaced by e^x.
type expArg struct {
	x      Register
	hi, lo bool // whether x may exceed expMaxArg / fall below expMinArg
}

// exp replaces each x by expGeneric(x), interleaving the evaluations
// instruction by instruction. NaN stays NaN (its payload is not specified).
func (a *isa) exp(args []expArg) {
	Comment("exp: clamp x into [expMinArg, expMaxArg], keeping NaN")
	for _, e := range args {
		// VMINPD returns its first Go operand when either is NaN.
		if e.hi {
			VMINPD(e.x, a.kreg("expMaxArg"), e.x)
		}
		if e.lo {
			VMAXPD(e.x, a.kreg("expMinArg"), e.x)
		}
	}
	Comment("k = roundEven(float64(x*log2e))")
	ks := make([]Register, len(args))
	for i, e := range args {
		ks[i] = a.vec()
		VMULPD(a.k("expLog2E"), e.x, ks[i])
		a.round(0, ks[i], ks[i])
	}
	Comment("r = fma(-k, ln2hi, x); r = fma(-k, ln2lo, r)")
	for i, e := range args {
		VFNMADD231PD(a.k("expLn2Hi"), ks[i], e.x)
	}
	for i, e := range args {
		VFNMADD231PD(a.k("expLn2Lo"), ks[i], e.x)
	}
	Comment("p = Horner(1/13!, ..., 1, 1; r), one FMA per degree")
	ps := make([]Register, len(args))
	for i := range args {
		ps[i] = a.kreg("expC13")
	}
	for d := 12; d >= 0; d-- {
		c := fmt.Sprintf("expC%d", d)
		if d <= 1 {
			c = "one"
		}
		for i, e := range args {
			VFMADD213PD(a.k(c), e.x, ps[i])
		}
	}
	if a.avx512 {
		Comment("x = p * 2^k, rounded once (VSCALEFPD)")
		for i, e := range args {
			VSCALEFPD(ks[i], ps[i], e.x)
		}
		return
	}
	Comment("k1 = floor(k/2), k2 = k - k1; x = float64(p * 2^k1) * 2^k2")
	for i, e := range args {
		k1 := a.vec()
		VMULPD(a.k("half"), ks[i], k1)
		a.round(1, k1, k1)
		VSUBPD(k1, ks[i], ks[i])
		VADDPD(a.k("expMagic"), k1, k1)
		VPSLLQ(U8(52), k1, k1)
		VADDPD(a.k("expMagic"), ks[i], ks[i])
		VPSLLQ(U8(52), ks[i], ks[i])
		VMULPD(k1, ps[i], ps[i])
		VMULPD(ks[i], ps[i], e.x)
	}
}

// activations counts activate's calls, for unique labels.
var activations int

// activate replaces each register of sig by sigmoidGeneric of it and each of
// tanh by tanhGeneric of it, sharing one interleaved exp.
func (a *isa) activate(sig, tanh []Register) { a.activateSkip(sig, tanh, false) }

// activateSkip is activate, skipping work where skip is set: where no lane
// of any tanh argument is small (|x| < tanhSmall), the rational branch is not
// computed, and where every lane of every argument is saturated (tanh: |x| ≥
// tanhSat; sigmoid: x ≥ sigmoidSat; the two are not mixed), nothing is: the
// result is ±1 or 1. Either way the lanes get the bits of the blended
// computation. The tests and branches cost 6–8% on inputs where they never
// pay (GateStep on random values, and the single path's short masked blocks,
// whose masked-off lanes are never saturated), so only GateStepTable, which
// runs the white-box networks' long batches of counters, takes them.
func (a *isa) activateSkip(sig, tanh []Register, skip bool) {
	if !skip {
		a.activateAll(sig, tanh)
		return
	}
	activations++
	id := fmt.Sprintf("act%d%s", activations, a.name)
	args, zs, as, es := a.activationArgs(sig, tanh)
	if len(tanh) == 0 {
		Comment("every lane saturated: sigmoid = 1")
		a.anyLane(cmpNGEUQ, "sigmoidSat", sig)
		JZ(LabelRef(id + "_sat"))
		a.exp(args)
		a.sigmoids(sig, zs)
		JMP(LabelRef(id + "_done"))
		Label(id + "_sat")
		for _, x := range sig {
			VMOVUPD(a.k("one"), x)
		}
		Label(id + "_done")
		return
	}
	if len(sig) == 0 {
		Comment("every lane saturated: tanh = ±1")
		a.anyLane(cmpNGEUQ, "tanhSat", as)
		JZ(LabelRef(id + "_sat"))
	}
	Comment("no lane small: no rational branch")
	a.anyLane(cmpLTOQ, "tanhSmall", as)
	JZ(LabelRef(id + "_large"))
	a.exp(args)
	a.sigmoids(sig, zs)
	a.tanhBlend(tanh, as, es)
	JMP(LabelRef(id + "_done"))

	Label(id + "_large")
	a.exp(args)
	a.sigmoids(sig, zs)
	Comment("tanh: 1 + (-2)/(e+1)")
	for i, x := range tanh {
		t := as[i]
		VADDPD(a.k("one"), es[i], es[i])
		VMOVUPD(a.k("minusTwo"), t)
		VDIVPD(es[i], t, t)
		VADDPD(a.k("one"), t, t)
		a.copysign(t, x)
	}
	if len(sig) == 0 {
		JMP(LabelRef(id + "_done"))
		Label(id + "_sat")
		Comment("tanh: ±1")
		for i, x := range tanh {
			VMOVUPD(a.k("one"), as[i])
			a.copysign(as[i], x)
		}
	}
	Label(id + "_done")
}

// activationArgs emits the first steps of activate: z = -|x| for each
// sigmoid, a = |x| and 2a for each tanh, and returns the exp arguments (the
// z and 2a registers, replaced by their exps by a.exp) with z, a and 2a.
func (a *isa) activationArgs(sig, tanh []Register) (args []expArg, zs, as, es []Register) {
	zs = make([]Register, len(sig))
	Comment("sigmoid: z = exp(-|x|)")
	for i, x := range sig {
		zs[i] = a.vec()
		a.or(a.k("signMask"), x, zs[i])
		args = append(args, expArg{x: zs[i], lo: true})
	}
	Comment("tanh: a = |x|, e = exp(2a)")
	as = make([]Register, len(tanh))
	es = make([]Register, len(tanh))
	for i, x := range tanh {
		as[i], es[i] = a.vec(), a.vec()
		a.and(a.k("absMask"), x, as[i])
		VADDPD(as[i], as[i], es[i])
		args = append(args, expArg{x: es[i], hi: true})
	}
	return args, zs, as, es
}

// activateAll is activate without any shortcut.
func (a *isa) activateAll(sig, tanh []Register) {
	args, zs, as, es := a.activationArgs(sig, tanh)
	a.exp(args)
	a.sigmoids(sig, zs)
	a.tanhBlend(tanh, as, es)
}

// tanhBlend finishes the tanh of activate from a = |x| and e = exp(2a),
// evaluating both branches and blending their operands before the one
// division.
func (a *isa) tanhBlend(tanh, as, es []Register) {
	Comment("tanh: a < 0.625 ? a + ((a*s)*P(s))/Q(s) : 1 + (-2)/(e+1), s = a*a")
	for i, x := range tanh {
		t := as[i]
		s, p, q := a.vec(), a.vec(), a.vec()
		VMULPD(t, t, s)
		VMOVUPD(a.k("tanhP0"), p)
		VFMADD213PD(a.k("tanhP1"), s, p)
		VFMADD213PD(a.k("tanhP2"), s, p)
		VADDPD(a.k("tanhQ0"), s, q)
		VFMADD213PD(a.k("tanhQ1"), s, q)
		VFMADD213PD(a.k("tanhQ2"), s, q)
		VMULPD(s, t, s)
		VMULPD(p, s, p)
		VADDPD(a.k("one"), es[i], es[i])
		Comment("large (or NaN): numerator -2, denominator e+1, base 1")
		m := a.cmp(cmpNLTUQ, a.k("tanhSmall"), t)
		a.blend(m, a.k("minusTwo"), p, p)
		a.blend(m, es[i], q, q)
		a.blend(m, a.k("one"), t, t)
		VDIVPD(q, p, p)
		VADDPD(p, t, t)
		a.copysign(t, x)
	}
}

// sigmoids finishes the sigmoids of activate from z = exp(-|x|).
func (a *isa) sigmoids(sig, zs []Register) {
	Comment("sigmoid: x >= 0 ? 1/(1+z) : z/(1+z)")
	for i, x := range sig {
		d := a.vec()
		VADDPD(a.k("one"), zs[i], d)
		m := a.cmp(cmpGEOQ, a.k("zero"), x)
		a.blend(m, a.k("one"), zs[i], zs[i])
		VDIVPD(d, zs[i], x)
	}
}

// copysign sets x = copysign(t, x) for t ≥ 0 (t is clobbered on AVX2).
func (a *isa) copysign(t, x Register) {
	Comment("x = copysign(t, x)")
	if a.avx512 {
		// x = signMask ? x : t, bit by bit.
		VPTERNLOGQ(U8(0xe4), a.k("signMask"), t, x)
	} else {
		a.and(a.k("absMask"), t, t)
		a.and(a.k("signMask"), x, x)
		a.or(t, x, x)
	}
}

// anyLane compares every lane of the registers with the named constant
// (r <pred> c) and clears ZF if any comparison holds.
func (a *isa) anyLane(pred uint8, c string, rs []Register) {
	var acc Register
	for i, r := range rs {
		m := a.cmp(pred, a.k(c), r)
		switch {
		case i == 0:
			acc = m
		case a.avx512:
			KORW(m, acc, acc)
		default:
			VORPD(m, acc, acc)
		}
	}
	if a.avx512 {
		KORTESTW(acc, acc)
	} else {
		VTESTPD(acc, acc)
	}
}

// access loads and stores vectors of one block, masked in the tail block.
type access struct {
	a    *isa
	mask Register // nil: full vectors
	idx  Register // element index
	disp int      // byte offset from the element index
}

func (ac access) mem(base Register) Mem {
	return Mem{Base: base, Index: ac.idx, Scale: 8, Disp: ac.disp}
}

func (ac access) ld(base Register) Register {
	v := ac.a.vec()
	if ac.mask != nil {
		VMOVUPD_Z(ac.mem(base), ac.mask, v)
	} else {
		VMOVUPD(ac.mem(base), v)
	}
	return v
}

func (ac access) st(v, base Register) {
	if ac.mask != nil {
		VMOVUPD(v, ac.mask, ac.mem(base))
	} else {
		VMOVUPD(v, ac.mem(base))
	}
}

// elementwise emits the loop over n elements in blocks of a.lanes, with a
// masked last block on AVX-512 (on AVX2 it stops at n rounded down to a
// multiple of 4), then VZEROUPPER and RET.
func (a *isa) elementwise(name string, n Register, body func(ac access)) {
	i := GP64()
	XORQ(i, i)
	m := GP64()
	MOVQ(n, m)
	ANDQ(I32(^(a.lanes - 1)), m)
	Label(name + "_loop")
	Comment("for ; i < n&^(lanes-1); i += lanes {")
	CMPQ(i, m)
	JAE(LabelRef(name + "_tail"))
	body(access{a: a, idx: i})
	ADDQ(I8(int8(a.lanes)), i)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_tail")
	Comment("}")
	if a.avx512 {
		Comment("the last n-i < 8 elements, masked")
		SUBQ(i, n)
		JZ(LabelRef(name + "_done"))
		k := tailMask(n)
		body(access{a: a, idx: i, mask: k})
	}
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func (a *isa) gateStep() {
	name := "gateStep" + a.name
	TEXT(name, NOSPLIT, "func(gates, zg, cPrev, c, tc, h []float64)")
	a.doc(name, "gateStepGeneric")
	n := Load(Param("c").Len(), GP64())
	gi := Load(Param("gates").Base(), GP64())
	nb := GP64()
	MOVQ(n, nb)
	SHLQ(U8(3), nb)
	gf, gg, gt := GP64(), GP64(), GP64()
	LEAQ(Mem{Base: gi, Index: nb, Scale: 1}, gf)
	LEAQ(Mem{Base: gf, Index: nb, Scale: 1}, gg)
	LEAQ(Mem{Base: gg, Index: nb, Scale: 1}, gt)
	zg := Load(Param("zg").Base(), GP64())
	cp := Load(Param("cPrev").Base(), GP64())
	c := Load(Param("c").Base(), GP64())
	tc := Load(Param("tc").Base(), GP64())
	h := Load(Param("h").Base(), GP64())
	a.elementwise(name, n, func(ac access) {
		Comment("load every input of the block before storing anything")
		vi, vf, vg, vo, vc := ac.ld(gi), ac.ld(gf), ac.ld(gg), ac.ld(gt), ac.ld(cp)
		ac.st(vg, zg)
		if a.avx512 {
			a.activate([]Register{vi, vf, vo}, []Register{vg})
		} else {
			a.activate([]Register{vi, vf}, nil)
			a.activate([]Register{vo}, []Register{vg})
		}
		Comment("c = float64(f*cPrev) + float64(i*g)")
		t1, t2 := a.vec(), a.vec()
		VMULPD(vc, vf, t1)
		VMULPD(vg, vi, t2)
		VADDPD(t2, t1, vc)
		ac.st(vi, gi)
		ac.st(vf, gf)
		ac.st(vg, gg)
		ac.st(vo, gt)
		ac.st(vc, c)
		Comment("tc = tanh(c), h = o*tc")
		vt := a.vec()
		VMOVUPD(vc, vt)
		a.activate(nil, []Register{vt})
		ac.st(vt, tc)
		VMULPD(vt, vo, vo)
		ac.st(vo, h)
	})
}

// gateStepTable is gateStep for gate blocks stride elements apart where the
// gates with bit q of table set (q = 0 … 3: i, f, g, o) are read from act
// instead of computed, and left alone in gates; no zg. There is one loop per
// value of table, each interleaving the activations it computes like
// gateStep; where at most one gate is computed, two blocks go through one
// iteration together (AVX-512).
func (a *isa) gateStepTable() {
	name := "gateStepTable" + a.name
	TEXT(name, NOSPLIT, "func(gates []float64, stride int, act []float64, table int, cPrev, c, tc, h []float64)")
	a.doc(name, "gateStepTableGeneric")
	n := Load(Param("c").Len(), GP64())
	sb := Load(Param("stride"), GP64())
	SHLQ(U8(3), sb)
	table := Load(Param("table"), GP64())
	base := func(p string) Register { return Load(Param(p).Base(), GP64()) }
	// row returns the address register of gate q's block in p (gates or
	// act), computed afresh: there are too few general registers to keep
	// eight block bases.
	row := func(p string, q int) Register {
		r := base(p)
		switch q {
		case 1:
			ADDQ(sb, r)
		case 2:
			LEAQ(Mem{Base: r, Index: sb, Scale: 2}, r)
		case 3:
			t := GP64()
			LEAQ(Mem{Base: sb, Index: sb, Scale: 2}, t)
			ADDQ(t, r)
		}
		return r
	}
	Comment("one loop per table set")
	for mask := 1; mask < 16; mask++ {
		CMPQ(table, U8(mask))
		JE(LabelRef(fmt.Sprintf("%s_m%d", name, mask)))
	}
	for mask := range 16 {
		label := fmt.Sprintf("%s_m%d", name, mask)
		if mask > 0 {
			Label(label)
		}
		Commentf("table = %d", mask)
		computed := 0
		for q := range 4 {
			if mask&(1<<q) == 0 {
				computed++
			}
		}
		k := 1
		if a.avx512 && computed <= 1 {
			k = 2
		}
		// With no table (a team's step on dense weights) eight bases fit
		// in registers: computing them afresh for every access cost 19 %
		// (12,800 units: 62 µs against GateStep's 52 µs).
		gate, at := func(q int) Register { return row("gates", q) }, base
		if mask == 0 {
			var gb [4]Register
			for q := range gb {
				gb[q] = row("gates", q)
			}
			ab := map[string]Register{}
			for _, p := range []string{"cPrev", "c", "tc", "h"} {
				ab[p] = base(p)
			}
			gate, at = func(q int) Register { return gb[q] }, func(p string) Register { return ab[p] }
		}
		a.elementwiseN(label, n, k, func(acs []access) {
			nb := len(acs)
			Comment("load every input of the blocks before storing anything")
			v := make([][4]Register, nb)
			vc := make([]Register, nb)
			type arg struct {
				x    Register
				tanh bool
			}
			var args []arg
			for b, ac := range acs {
				vc[b] = ac.ld(at("cPrev"))
				for q := range 4 {
					if mask&(1<<q) != 0 {
						v[b][q] = ac.ld(row("act", q))
						continue
					}
					v[b][q] = ac.ld(gate(q))
					args = append(args, arg{v[b][q], q == 2})
				}
			}
			Comment("the computed activations")
			group := len(args)
			if !a.avx512 {
				group = 2
			}
			for g0 := 0; g0 < len(args); g0 += group {
				var sig, th []Register
				for _, r := range args[g0:min(g0+group, len(args))] {
					if r.tanh {
						th = append(th, r.x)
					} else {
						sig = append(sig, r.x)
					}
				}
				a.activateSkip(sig, th, true)
			}
			vt := make([]Register, nb)
			for b, ac := range acs {
				Comment("c = float64(f*cPrev) + float64(i*g)")
				t1, t2 := a.vec(), a.vec()
				VMULPD(vc[b], v[b][1], t1)
				VMULPD(v[b][2], v[b][0], t2)
				VADDPD(t2, t1, vc[b])
				for q := range 4 {
					if mask&(1<<q) == 0 {
						ac.st(v[b][q], gate(q))
					}
				}
				ac.st(vc[b], at("c"))
				vt[b] = a.vec()
				VMOVUPD(vc[b], vt[b])
			}
			Comment("tc = tanh(c), h = o*tc")
			a.activateSkip(nil, vt, true)
			for b, ac := range acs {
				ac.st(vt[b], at("tc"))
				VMULPD(vt[b], v[b][3], v[b][3])
				ac.st(v[b][3], at("h"))
			}
		})
	}
}

// elementwiseN is elementwise with k blocks per iteration of the main loop,
// then single blocks (and on AVX-512 a masked last one); each variant of the
// body gets its blocks' accesses. It ends with VZEROUPPER and RET.
func (a *isa) elementwiseN(name string, n Register, k int, body func(acs []access)) {
	i := GP64()
	XORQ(i, i)
	m := GP64()
	if k > 1 {
		MOVQ(n, m)
		ANDQ(I32(^(k*a.lanes - 1)), m)
		Label(name + "_loopk")
		Commentf("for ; i < n&^(%d-1); i += %d {", k*a.lanes, k*a.lanes)
		CMPQ(i, m)
		JAE(LabelRef(name + "_loopk_end"))
		acs := make([]access, k)
		for b := range acs {
			acs[b] = access{a: a, idx: i, disp: 8 * a.lanes * b}
		}
		body(acs)
		ADDQ(I32(k*a.lanes), i)
		JMP(LabelRef(name + "_loopk"))
		Label(name + "_loopk_end")
	}
	MOVQ(n, m)
	ANDQ(I32(^(a.lanes - 1)), m)
	Label(name + "_loop")
	Comment("for ; i < n&^(lanes-1); i += lanes {")
	CMPQ(i, m)
	JAE(LabelRef(name + "_tail"))
	body([]access{{a: a, idx: i}})
	ADDQ(I8(int8(a.lanes)), i)
	JMP(LabelRef(name + "_loop"))
	Label(name + "_tail")
	Comment("}")
	if a.avx512 {
		Comment("the last n-i < 8 elements, masked")
		SUBQ(i, n)
		JZ(LabelRef(name + "_done"))
		km := tailMask(n)
		body([]access{{a: a, idx: i, mask: km}})
	}
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func (a *isa) gateBackward() {
	name := "gateBackward" + a.name
	TEXT(name, NOSPLIT, "func(dz, dcPrev, dh, dc, gates, tc, cPrev []float64)")
	a.doc(name, "gateBackwardGeneric")
	n := Load(Param("dh").Len(), GP64())
	nb := GP64()
	MOVQ(n, nb)
	SHLQ(U8(3), nb)
	dz, gs := gateBlocks("dz", nb), gateBlocks("gates", nb)
	// The other bases are reloaded from the frame in the loop: there are
	// not enough general registers for all of them.
	base := func(p string) Register { return Load(Param(p).Base(), GP64()) }
	a.elementwise(name, n, func(ac access) {
		one := a.kreg("one")
		vi, vf, vg, vo := ac.ld(gs[0]), ac.ld(gs[1]), ac.ld(gs[2]), ac.ld(gs[3])
		vt, vd, vdc, vcp := ac.ld(base("tc")), ac.ld(base("dh")), ac.ld(base("dc")), ac.ld(base("cPrev"))
		a.backwardBody(one, vi, vf, vg, vo, vt, vd, vdc, vcp, 15, func(q int, r Register) { ac.st(r, dz[q]) },
			func(r Register) { ac.st(r, base("dcPrev")) })
	})
}

// gateBlocks returns the addresses of the four gate blocks of slice
// parameter p, stride bytes apart.
func gateBlocks(p string, stride Register) [4]Register {
	var r [4]Register
	r[0] = Load(Param(p).Base(), GP64())
	for k := 1; k < 4; k++ {
		r[k] = GP64()
		LEAQ(Mem{Base: r[k-1], Index: stride, Scale: 1}, r[k])
	}
	return r
}

// gateBackwardTable is gateBackward for gate blocks stride elements apart
// in dz, gates and act, reading gate q's activations from act where bit q of
// table is set (the four source blocks are chosen once, before the loop),
// and writing dz only for the gates in need: one loop per value of need,
// each loading and computing only what it stores.
func (a *isa) gateBackwardTable() {
	name := "gateBackwardTable" + a.name
	TEXT(name, NOSPLIT, "func(dz []float64, stride int, dcPrev, dh, dc, gates, act []float64, table, need int, tc, cPrev []float64)")
	a.doc(name, "gateBackwardTableGeneric")
	n := Load(Param("dh").Len(), GP64())
	sb := Load(Param("stride"), GP64())
	SHLQ(U8(3), sb)
	table := Load(Param("table"), GP64())
	dz, gs := gateBlocks("dz", sb), gateBlocks("gates", sb)
	Comment("gate q's activations come from act where bit q of table is set")
	ap := Load(Param("act").Base(), GP64())
	for q := range 4 {
		if q > 0 {
			ADDQ(sb, ap)
		}
		BTQ(U8(q), table)
		CMOVQCS(ap, gs[q])
	}
	base := func(p string) Register { return Load(Param(p).Base(), GP64()) }
	need := Load(Param("need"), GP64())
	Comment("one loop per need set")
	for mask := range 15 {
		CMPQ(need, U8(mask))
		JE(LabelRef(fmt.Sprintf("%s_n%d", name, mask)))
	}
	for mask := 15; mask >= 0; mask-- {
		label := fmt.Sprintf("%s_n%d", name, mask)
		if mask < 15 {
			Label(label)
		}
		Commentf("need = %d", mask)
		a.elementwiseN(label, n, 1, func(acs []access) {
			ac := acs[0]
			one := a.kreg("one")
			var vi, vg, vcp Register
			if mask&5 != 0 { // di or dg
				vi, vg = ac.ld(gs[0]), ac.ld(gs[2])
			}
			vf, vo := ac.ld(gs[1]), ac.ld(gs[3])
			vt, vd, vdc := ac.ld(base("tc")), ac.ld(base("dh")), ac.ld(base("dc"))
			if mask&2 != 0 {
				vcp = ac.ld(base("cPrev"))
			}
			a.backwardBody(one, vi, vf, vg, vo, vt, vd, vdc, vcp, mask, func(q int, r Register) { ac.st(r, dz[q]) },
				func(r Register) { ac.st(r, base("dcPrev")) })
		})
	}
}

// backwardBody emits gateBackwardBlocks' operations on one block for the
// gates in need (bit q: gate q): the activations i, f, g, o, tc, dh, dc and
// cPrev in registers (clobbered; i and g may be nil if neither di nor dg is
// needed, cPrev if df is not); stdz stores dz of gate q, stdc dcPrev.
func (a *isa) backwardBody(one, vi, vf, vg, vo, vt, vd, vdc, vcp Register, need int, stdz func(q int, r Register), stdc func(r Register)) {
	t1, t2 := a.vec(), a.vec()
	Comment("dct = float64(float64(d*o)*float64(1-float64(t*t))) + dc")
	dct := a.vec()
	VMULPD(vt, vt, t1)
	VSUBPD(t1, one, t1)
	VMULPD(vo, vd, dct)
	VMULPD(t1, dct, dct)
	VADDPD(vdc, dct, dct)
	if need&8 != 0 {
		Comment("do = float64(float64(d*t)*float64(1-o)) * o")
		VMULPD(vt, vd, t1)
		VSUBPD(vo, one, t2)
		VMULPD(t2, t1, t1)
		VMULPD(vo, t1, t1)
		stdz(3, t1)
	}
	if need&1 != 0 {
		Comment("di = float64(float64(dct*g)*float64(1-i)) * i")
		di := a.vec()
		VMULPD(vg, dct, di)
		VSUBPD(vi, one, t2)
		VMULPD(t2, di, di)
		VMULPD(vi, di, di)
		stdz(0, di)
	}
	if need&2 != 0 {
		Comment("df = float64(float64(dct*cPrev)*float64(1-f)) * f")
		VMULPD(vcp, dct, vcp)
		VSUBPD(vf, one, t2)
		VMULPD(t2, vcp, vcp)
		VMULPD(vf, vcp, vcp)
		stdz(1, vcp)
	}
	if need&4 != 0 {
		Comment("dg = float64(dct*i) * float64(1-float64(g*g))")
		VMULPD(vi, dct, vi)
		VMULPD(vg, vg, vg)
		VSUBPD(vg, one, vg)
		VMULPD(vg, vi, vi)
		stdz(2, vi)
	}
	Comment("dcPrev = dct * f")
	VMULPD(vf, dct, dct)
	stdc(dct)
}

// stabilize sets z = z >= 0 ? z+eps : z-eps.
func (a *isa) stabilize(z, eps Register) {
	zp := a.vec()
	VADDPD(eps, z, zp)
	m := a.cmp(cmpGEOQ, a.k("zero"), z)
	VSUBPD(eps, z, z)
	a.blend(m, zp, z, z)
}

func (a *isa) lrpCell() {
	name := "lrpCell" + a.name
	TEXT(name, NOSPLIT, "func(rcPrev, qg, rc, gates, zg, c, cPrev []float64, eps float64)")
	a.doc(name, "lrpCellGeneric")
	n := Load(Param("rc").Len(), GP64())
	nb := GP64()
	MOVQ(n, nb)
	SHLQ(U8(3), nb)
	gi := Load(Param("gates").Base(), GP64())
	gf, gg := GP64(), GP64()
	LEAQ(Mem{Base: gi, Index: nb, Scale: 1}, gf)
	LEAQ(Mem{Base: gf, Index: nb, Scale: 1}, gg)
	rcp := Load(Param("rcPrev").Base(), GP64())
	qg := Load(Param("qg").Base(), GP64())
	rc := Load(Param("rc").Base(), GP64())
	zg := Load(Param("zg").Base(), GP64())
	c := Load(Param("c").Base(), GP64())
	cp := Load(Param("cPrev").Base(), GP64())
	eps := a.vec()
	VBROADCASTSD(addr("eps"), eps)
	a.elementwise(name, n, func(ac access) {
		vi, vf, vg := ac.ld(gi), ac.ld(gf), ac.ld(gg)
		vrc, vz, vc, vcp := ac.ld(rc), ac.ld(zg), ac.ld(c), ac.ld(cp)
		Comment("s = rc / stabilize(c, eps)")
		a.stabilize(vc, eps)
		VDIVPD(vc, vrc, vrc)
		Comment("rcPrev = float64(f*cPrev) * s")
		VMULPD(vcp, vf, vf)
		VMULPD(vrc, vf, vf)
		Comment("qg = float64(i*g) * s / stabilize(zg, eps)")
		VMULPD(vg, vi, vi)
		VMULPD(vrc, vi, vi)
		a.stabilize(vz, eps)
		VDIVPD(vz, vi, vi)
		ac.st(vf, rcp)
		ac.st(vi, qg)
	})
}

func (a *isa) lrpLinear() {
	name := "lrpLinear" + a.name
	TEXT(name, NOSPLIT, "func(dst, acc, a []float64)")
	a.doc(name, "lrpLinearGeneric")
	n := Load(Param("dst").Len(), GP64())
	dst := Load(Param("dst").Base(), GP64())
	acc := Load(Param("acc").Base(), GP64())
	av := Load(Param("a").Base(), GP64())
	a.elementwise(name, n, func(ac access) {
		Comment("dst += float64(a*acc)")
		x, y, d := ac.ld(av), ac.ld(acc), ac.ld(dst)
		VMULPD(y, x, x)
		VADDPD(x, d, d)
		ac.st(d, dst)
	})
}

func (a *isa) axpy() {
	name := "axpy" + a.name
	TEXT(name, NOSPLIT, "func(alpha float64, x, y []float64)")
	a.doc(name, "axpyGeneric")
	n := Load(Param("y").Len(), GP64())
	x := Load(Param("x").Base(), GP64())
	y := Load(Param("y").Base(), GP64())
	alpha := a.vec()
	VBROADCASTSD(addr("alpha"), alpha)
	a.elementwise(name, n, func(ac access) {
		Comment("y = fma(alpha, x, y)")
		vx, vy := ac.ld(x), ac.ld(y)
		VFMADD231PD(vx, alpha, vy)
		ac.st(vy, y)
	})
}

// axpyRows keeps a chunk of dst in registers while it runs down all the
// rows, so each element of the rows is loaded once and each element of dst
// once per call; every lane still accumulates its terms in the order of j.
func (a *isa) axpyRows() {
	name := "axpyRows" + a.name
	TEXT(name, NOSPLIT, "func(dst, rows []float64, stride int, coef []float64)")
	a.doc(name, "axpyRowsGeneric")
	n := Load(Param("dst").Len(), GP64())
	dst := Load(Param("dst").Base(), GP64())
	rows := Load(Param("rows").Base(), GP64())
	sb := Load(Param("stride"), GP64())
	SHLQ(U8(3), sb)
	coef := Load(Param("coef").Base(), GP64())
	nc := Load(Param("coef").Len(), GP64())
	i := GP64()
	XORQ(i, i)

	chunk := func(label string, u int, mask Op) {
		Commentf("a chunk of %d vectors of dst in registers", u)
		rp, cp, cnt, t := GP64(), GP64(), GP64(), GP64()
		LEAQ(Mem{Base: rows, Index: i, Scale: 8}, rp)
		MOVQ(coef, cp)
		MOVQ(nc, cnt)
		accs := make([]Register, u)
		for k := range accs {
			accs[k] = a.vec()
			m := Mem{Base: dst, Index: i, Scale: 8, Disp: 8 * a.lanes * k}
			if mask != nil {
				VMOVUPD_Z(m, mask, accs[k])
			} else {
				VMOVUPD(m, accs[k])
			}
		}
		Label(label + "_rows")
		Comment("for each row j: skip it if coef[j] == ±0")
		MOVQ(Mem{Base: cp}, t)
		SHLQ(U8(1), t)
		JZ(LabelRef(label + "_next"))
		bc := a.vec()
		VBROADCASTSD(Mem{Base: cp}, bc)
		for k := range accs {
			m := Mem{Base: rp, Disp: 8 * a.lanes * k}
			if mask != nil {
				r := a.vec()
				VMOVUPD_Z(m, mask, r)
				VFMADD231PD(r, bc, accs[k])
			} else {
				VFMADD231PD(m, bc, accs[k])
			}
		}
		Label(label + "_next")
		ADDQ(sb, rp)
		ADDQ(I8(8), cp)
		DECQ(cnt)
		JNZ(LabelRef(label + "_rows"))
		for k := range accs {
			m := Mem{Base: dst, Index: i, Scale: 8, Disp: 8 * a.lanes * k}
			if mask != nil {
				VMOVUPD(accs[k], mask, m)
			} else {
				VMOVUPD(accs[k], m)
			}
		}
	}

	m := GP64()
	for _, u := range []int{8, 1} {
		label := fmt.Sprintf("%s_u%d", name, u)
		MOVQ(n, m)
		SUBQ(I32(u*a.lanes), m)
		Label(label)
		Commentf("while i <= n-%d", u*a.lanes)
		CMPQ(i, m)
		JG(LabelRef(label + "_end"))
		chunk(label, u, nil)
		ADDQ(I32(u*a.lanes), i)
		JMP(LabelRef(label))
		Label(label + "_end")
	}
	if a.avx512 {
		Comment("the last n-i < 8 elements, masked")
		SUBQ(i, n)
		JZ(LabelRef(name + "_done"))
		k := tailMask(n)
		chunk(name+"_tail", 1, k)
	}
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// mulAddRowsRows is the number of output rows a mulAddRows body handles per
// call, by vector width.
func (a *isa) mulAddRowsRows() int {
	if a.avx512 {
		return 6
	}
	return 4
}

// mulAddRows is axpyRows for R output rows at once (R = mulAddRowsRows, or
// fewer for the rows left over, named mulAddRows<R><isa>):
// a tile of R rows × u vectors of dst stays in registers while the shared
// rows go by, each row's vectors loaded once for all R outputs. Every lane of
// every output row still takes its terms in the order of j, one FMA each,
// and a term whose coefficient is ±0 is skipped for that output row only.
func (a *isa) mulAddRows(R int) {
	name := "mulAddRows" + a.name
	if R != a.mulAddRowsRows() {
		name = fmt.Sprintf("mulAddRows%d%s", R, a.name)
	}
	TEXT(name, NOSPLIT, "func(dst []float64, n int, rows []float64, stride int, coef []float64, coefStride, k int, nonzero bool)")
	if a.avx512 {
		Doc(fmt.Sprintf("%s is mulAddRowsGeneric for %d output rows (len(dst) = %d·n) on 8-lane AVX-512 vectors, for every n.", name, R, R))
	} else {
		Doc(fmt.Sprintf("%s is mulAddRowsGeneric for %d output rows (len(dst) = %d·n) on 4-lane AVX2+FMA vectors, for every n (the last n mod 4 lanes masked).", name, R, R))
	}
	Pragma("noescape")
	n := Load(Param("n"), GP64())
	SHLQ(U8(3), n)
	nb := GP64() // bytes per dst row
	MOVQ(n, nb)
	sb := Load(Param("stride"), GP64())
	SHLQ(U8(3), sb)
	csb := Load(Param("coefStride"), GP64())
	SHLQ(U8(3), csb)
	cs3 := GP64()
	LEAQ(Mem{Base: csb, Index: csb, Scale: 2}, cs3)
	abs := GP64()
	MOVQ(U64(1<<63-1), abs)
	i := GP64() // byte offset of the chunk in a row
	XORQ(i, i)

	// rowMem returns the address of output row r (bases: row 0 and row 3).
	rowMem := func(b0, b3, st Register, r, disp int) Mem {
		switch r {
		case 0:
			return Mem{Base: b0, Disp: disp}
		case 1:
			return Mem{Base: b0, Index: st, Scale: 1, Disp: disp}
		case 2:
			return Mem{Base: b0, Index: st, Scale: 2, Disp: disp}
		case 3:
			return Mem{Base: b3, Disp: disp}
		case 4:
			return Mem{Base: b3, Index: st, Scale: 1, Disp: disp}
		case 5:
			return Mem{Base: b3, Index: st, Scale: 2, Disp: disp}
		}
		panic("row")
	}

	// AVX-512: kz collects the coefficients of the tile that are ±0, so
	// that a tile without any (dense weights) runs a loop without the
	// per-term tests. Skipping a zero term and not having one are the same.
	// A coefficient's bits shifted left by one (the sign dropped) are 0 only
	// for ±0: the scan keeps their unsigned minimum in two registers and
	// tests it once, at the end, rather than chaining a K register through
	// every vector. Measured on an AMD Zen 4 core, h = 128, 16 lanes: 47.6–48.1
	// → 49.3–49.7 GFLOP/s (no scan at all: 54.8–55.3).
	var kz Register
	if a.avx512 {
		Comment("kz = the coefficients of the tile that are ±0: none with nonzero")
		kz = K()
		KXORW(kz, kz, kz)
		nz := Load(Param("nonzero"), GP64())
		TESTQ(nz, nz)
		JNZ(LabelRef(name + "_scanned"))
		mins := []Register{a.vec(), a.vec()}
		VPTERNLOGQ(U8(0xff), mins[0], mins[0], mins[0]) // all ones
		VMOVDQA64(mins[0], mins[1])
		kt := GP64()
		Load(Param("k"), kt)
		ANDQ(I8(7), kt)
		ktail := tailMask(kt)
		cb, c3b := GP64(), GP64()
		Load(Param("coef").Base(), cb)
		LEAQ(Mem{Base: cb, Index: cs3, Scale: 1}, c3b)
		for r := range R {
			p, cnt := GP64(), GP64()
			LEAQ(rowMem(cb, c3b, csb, r, 0), p)
			Load(Param("k"), cnt)
			SHRQ(U8(3), cnt) // whole vectors
			lbl := fmt.Sprintf("%s_scan%d", name, r)
			Label(lbl)
			CMPQ(cnt, I8(2))
			JB(LabelRef(lbl + "_one"))
			for q := range 2 {
				t := a.vec()
				VPSLLQ(U8(1), Mem{Base: p, Disp: 64 * q}, t)
				VPMINUQ(t, mins[q], mins[q])
			}
			ADDQ(U32(128), p)
			SUBQ(I8(2), cnt)
			JMP(LabelRef(lbl))
			Label(lbl + "_one")
			TESTQ(cnt, cnt)
			JZ(LabelRef(lbl + "_tail"))
			t := a.vec()
			VPSLLQ(U8(1), Mem{Base: p}, t)
			VPMINUQ(t, mins[0], mins[0])
			ADDQ(I8(64), p)
			Label(lbl + "_tail")
			Comment("the last k mod 8 coefficients; the lanes off the mask stay all ones")
			t2 := a.vec()
			VPTERNLOGQ(U8(0xff), t2, t2, t2)
			VPSLLQ(U8(1), Mem{Base: p}, ktail, t2)
			VPMINUQ(t2, mins[1], mins[1])
		}
		VPMINUQ(mins[1], mins[0], mins[0])
		VPTESTNMQ(mins[0], mins[0], kz)
		Label(name + "_scanned")
	}

	// AVX2: the same test, its answer kept in the frame (no general
	// register is left over for it): 1 when no coefficient of the tile is
	// ±0.
	var dense Mem
	if !a.avx512 {
		Comment("dense = 1 when no coefficient of the tile is ±0 (so with nonzero)")
		dense = AllocLocal(8)
		nz := Load(Param("nonzero"), GP64())
		TESTQ(nz, nz)
		JNZ(LabelRef(name + "_nonzero"))
		zero, acc := a.vec(), a.vec()
		VXORPD(zero, zero, zero)
		VXORPD(acc, acc, acc)
		cb, c3b := GP64(), GP64()
		Load(Param("coef").Base(), cb)
		LEAQ(Mem{Base: cb, Index: cs3, Scale: 1}, c3b)
		for r := range R {
			p, cnt := GP64(), GP64()
			LEAQ(rowMem(cb, c3b, csb, r, 0), p)
			Load(Param("k"), cnt)
			SHRQ(U8(2), cnt)
			lbl := fmt.Sprintf("%s_scan%d", name, r)
			Label(lbl)
			JZ(LabelRef(lbl + "_tail"))
			VORPD(a.cmp(0, Mem{Base: p}, zero), acc, acc)
			ADDQ(I8(32), p)
			DECQ(cnt)
			JMP(LabelRef(lbl))
			Label(lbl + "_tail")
			Load(Param("k"), cnt)
			ANDQ(I8(3), cnt)
			Label(lbl + "_one")
			JZ(LabelRef(lbl + "_end"))
			TESTQ(abs, Mem{Base: p})
			JZ(LabelRef(name + "_sparse"))
			ADDQ(I8(8), p)
			DECQ(cnt)
			JMP(LabelRef(lbl + "_one"))
			Label(lbl + "_end")
		}
		VTESTPD(acc, acc)
		JNZ(LabelRef(name + "_sparse"))
		Label(name + "_nonzero")
		MOVQ(U32(1), dense)
		JMP(LabelRef(name + "_scanned"))
		Label(name + "_sparse")
		MOVQ(U32(0), dense)
		Label(name + "_scanned")
	}

	// chunkOf runs a tile of R rows × u vectors of dst over the k rows; with
	// mask, the last vector holds only mask's lanes, and with half (AVX-512,
	// mask of at most 4 lanes) it is the lower half of its register: a
	// 256-bit FMA, which a core whose 512-bit FMAs are double-pumped (AMD
	// Zen 4) runs in half the time of a masked 512-bit one.
	chunkOf := func(label string, u int, mask Op, half bool) {
		Commentf("a tile of %d rows × %d vectors of dst in registers", R, u)
		if half {
			Comment("(the last vector 256 bits wide)")
		}
		// width is x as wide as vector v of the tile: its lower 256 bits for
		// a half last vector.
		width := func(x VecVirtual, v int) Register {
			if half && v == u-1 {
				return x.AsY()
			}
			return x
		}
		dc, d3, rp, cj, c3, cnt := GP64(), GP64(), GP64(), GP64(), GP64(), GP64()
		Load(Param("dst").Base(), dc)
		ADDQ(i, dc)
		LEAQ(Mem{Base: dc, Index: nb, Scale: 2}, d3)
		ADDQ(nb, d3)
		Load(Param("rows").Base(), rp)
		ADDQ(i, rp)
		Load(Param("coef").Base(), cj)
		LEAQ(Mem{Base: cj, Index: cs3, Scale: 1}, c3)
		Load(Param("k"), cnt)
		// ld and st move a vector, masked where it is the tile's last and
		// mask is set (AVX2: VMASKMOVPD, the mask in a register or in the
		// frame, then loaded into a fresh one; the lanes off the mask read
		// as 0 and are not written).
		ld := func(m Mem, v int, dst Register) {
			switch {
			case mask == nil || v != u-1:
				VMOVUPD(m, dst)
			case a.avx512:
				VMOVUPD_Z(m, mask, dst)
			default:
				mr, ok := mask.(Register)
				if !ok {
					mr = a.vec()
					VMOVUPD(mask, mr)
				}
				VMASKMOVPD(m, mr, dst)
			}
		}
		st := func(src Register, v int, m Mem) {
			switch {
			case mask == nil || v != u-1:
				VMOVUPD(src, m)
			case a.avx512:
				VMOVUPD(src, mask, m)
			default:
				mr, ok := mask.(Register)
				if !ok {
					mr = a.vec()
					VMOVUPD(mask, mr)
				}
				VMASKMOVPD(src, mr, m)
			}
		}
		accs := make([][]Register, R)
		for r := range accs {
			accs[r] = make([]Register, u)
			for v := range accs[r] {
				accs[r][v] = width(a.vec(), v)
				ld(rowMem(dc, d3, nb, r, 8*a.lanes*v), v, accs[r][v])
			}
		}
		loop := func(label string, check bool) {
			Label(label)
			Comment("row j of rows, loaded once for every output row")
			src := make([]Register, u)
			for v := range src {
				src[v] = width(a.vec(), v)
				ld(Mem{Base: rp, Disp: 8 * a.lanes * v}, v, src[v])
			}
			bc := a.vec()
			for r := range R {
				skip := fmt.Sprintf("%s_skip%d", label, r)
				cm := rowMem(cj, c3, csb, r, 0)
				if check {
					Commentf("output row %d: skip the term if its coefficient is ±0", r)
					TESTQ(abs, cm)
					JZ(LabelRef(skip))
				} else {
					Commentf("output row %d", r)
				}
				VBROADCASTSD(cm, bc)
				for v := range src {
					VFMADD231PD(src[v], width(bc, v), accs[r][v])
				}
				if check {
					Label(skip)
				}
			}
			ADDQ(sb, rp)
			ADDQ(I8(8), cj)
			ADDQ(I8(8), c3)
			DECQ(cnt)
			JNZ(LabelRef(label))
		}
		Comment("no coefficient of the tile is ±0: no tests")
		if kz != nil {
			KORTESTW(kz, kz)
			JNZ(LabelRef(label + "_rows"))
		} else {
			CMPQ(dense, U8(0))
			JE(LabelRef(label + "_rows"))
		}
		loop(label+"_dense", false)
		JMP(LabelRef(label + "_store"))
		loop(label+"_rows", true)
		Label(label + "_store")
		for r := range accs {
			for v := range accs[r] {
				st(accs[r][v], v, rowMem(dc, d3, nb, r, 8*a.lanes*v))
			}
		}
	}
	chunk := func(label string, u int, mask Op) { chunkOf(label, u, mask, false) }

	m := GP64()
	if !a.avx512 {
		a.mulAddRowsAVX2Passes(name, n, i, m, chunk)
		Label(name + "_done")
		VZEROUPPER()
		RET()
		return
	}
	label := name + "_u4" // AVX-512: tiles of 4 vectors, then the rest in one pass
	w := 8 * 4 * a.lanes
	MOVQ(n, m)
	SUBQ(I32(w), m)
	Label(label)
	Commentf("while i <= n-%d (bytes)", w)
	CMPQ(i, m)
	JG(LabelRef(label + "_end"))
	chunk(label, 4, nil)
	ADDQ(I32(w), i)
	JMP(LabelRef(label))
	Label(label + "_end")
	// One pass for the rest, not one per width and one for the tail:
	// each pass loads the tile's coefficients again, and costs about as
	// much for one vector as for three (measured, 1024×256, 2 MB of
	// coefficients, 1 thread: 24 lanes 0.11 ms, 25 lanes 0.21 ms as a
	// pass of 3 vectors and a masked one).
	Comment("the last n-i < 32 elements in one pass: ⌈(n-i)/8⌉ vectors, the last masked")
	SUBQ(i, n)
	JZ(LabelRef(name + "_done"))
	SHRQ(U8(3), n)
	last := GP64() // the lanes of the last vector, in [1, 8]
	MOVQ(n, last)
	DECQ(last)
	ANDQ(I8(7), last)
	INCQ(last)
	k := tailMask(last)
	for u := 1; u < 4; u++ {
		CMPQ(n, I8(int8(8*u)))
		JBE(LabelRef(fmt.Sprintf("%s_tail%d", name, u)))
	}
	for u := 4; u >= 1; u-- {
		label := fmt.Sprintf("%s_tail%d", name, u)
		Label(label)
		Comment("at most 4 lanes in the last vector: a 256-bit one")
		CMPQ(last, I8(4))
		JBE(LabelRef(label + "_y"))
		chunk(label, u, k)
		JMP(LabelRef(name + "_done"))
		Label(label + "_y")
		chunkOf(label+"_y", u, k, true)
		if u > 1 {
			JMP(LabelRef(name + "_done"))
		}
	}
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// mulAddRowsAVX2Passes emits the AVX2 passes of mulAddRows over dst's
// ⌈n/4⌉ vectors (n and i in bytes), the last vector masked where n mod 4
// lanes are left: tiles of 3 vectors (12 accumulators, the 3 shared vectors
// and the broadcast coefficient fill the 16 registers) while more than 4
// vectors are left, then the rest in one pass of 1 to 3 vectors, or for 4
// two passes: 2 + 2 when whole, 3 + a masked 1 when not. Each pass reads
// the tile's coefficients again and holds only its u·4 accumulators
// against the FMA's latency: 16 lanes ran as 3 + 1 vectors, 18 as 3 + 1 +
// a masked 1. Measured on an AMD EPYC (Zen 3, AVX2, FMA peak 47 GFLOP/s)
// core, both bodies in one test binary, alternating, best of 400 rounds of
// a 4h × h product: 16 lanes, h = 128 and 256, 35.1 → 39.1 and 33.4 →
// 39.5 GFLOP/s; 18 lanes, h = 128, 28.2 → 36.4; 64 lanes, h = 256,
// 43.0 → 45.5; 24, 25, 32 and 50 lanes within 3 %.
func (a *isa) mulAddRowsAVX2Passes(name string, n, i, m Register, chunk func(label string, u int, mask Op)) {
	label := name + "_u3"
	MOVQ(n, m)
	SUBQ(I32(4*32+8), m)
	Label(label)
	Comment("while i <= n-136 (bytes): more than 4 vectors left")
	CMPQ(i, m)
	JG(LabelRef(label + "_end"))
	chunk(label, 3, nil)
	ADDQ(I32(3*32), i)
	JMP(LabelRef(label))
	Label(label + "_end")

	Comment("the rest: n-i bytes, 1 to 4 vectors, the last one masked where it holds fewer than 4 lanes")
	SUBQ(i, n)
	JZ(LabelRef(name + "_done"))
	mask := AllocLocal(32) // the last vector's VMASKMOVPD mask
	tbl, lanes, t := GP64(), GP64(), a.vec()
	MOVQ(n, lanes)
	SHRQ(U8(3), lanes)
	DECQ(lanes)
	ANDQ(I8(3), lanes)
	INCQ(lanes) // the lanes of the last vector, in [1, 4]
	SHLQ(U8(5), lanes)
	LEAQ(cst["avx2TailMask"], tbl)
	VMOVUPD(Mem{Base: tbl, Index: lanes, Scale: 1}, t)
	VMOVUPD(t, mask)
	// masked runs a pass of u vectors, the last masked: the mask in a
	// register, but for a tile of 3, which leaves none free.
	masked := func(l string, u int) {
		if u == 3 {
			chunk(l, u, mask)
			return
		}
		r := a.vec()
		VMOVUPD(mask, r)
		chunk(l, u, r)
	}
	// last runs the final pass of u vectors, its last masked unless whole.
	last := func(u int) {
		l := fmt.Sprintf("%s_last%d", name, u)
		TESTQ(I32(31), n)
		JNZ(LabelRef(l + "m"))
		chunk(l, u, nil)
		JMP(LabelRef(name + "_done"))
		Label(l + "m")
		masked(l+"m", u)
		JMP(LabelRef(name + "_done"))
	}
	for _, v := range []int{3, 2, 1} {
		CMPQ(n, I32(32*v))
		JA(LabelRef(fmt.Sprintf("%s_rest%d", name, v+1)))
	}
	Label(name + "_rest1")
	last(1)
	Label(name + "_rest2")
	last(2)
	Label(name + "_rest3")
	last(3)
	Label(name + "_rest4")
	TESTQ(I32(31), n)
	JNZ(LabelRef(name + "_rest4m"))
	chunk(name+"_rest4a", 2, nil)
	ADDQ(I32(2*32), i)
	chunk(name+"_rest4b", 2, nil)
	JMP(LabelRef(name + "_done"))
	Label(name + "_rest4m")
	chunk(name+"_rest4m", 3, nil)
	ADDQ(I32(3*32), i)
	masked(name+"_rest4m1", 1)
}

// addr is the frame address of a scalar argument.
func addr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// tailMask returns the K mask of the first r lanes, r in [1, 8].
func tailMask(r Register) Register {
	t := GP64()
	LEAQ(cst["tailMask"], t)
	k := K()
	KMOVW(Mem{Base: t, Index: r, Scale: 2}, k)
	return k
}

func (a *isa) doc(name, twin string) {
	if a.avx512 {
		Doc(fmt.Sprintf("%s is %s on 8-lane AVX-512 vectors, for every n.", name, twin))
	} else {
		Doc(fmt.Sprintf("%s is %s on 4-lane AVX2+FMA vectors, for n rounded down to a multiple of 4.", name, twin))
	}
	Pragma("noescape")
}

func main() {
	ConstraintExpr("!purego")

	for _, c := range constants {
		m := GLOBL(c.name, RODATA|NOPTR)
		for l := range 8 {
			DATA(8*l, U64(math.Float64bits(c.value)))
		}
		cst[c.name] = m
	}
	for _, c := range masks {
		m := GLOBL(c.name, RODATA|NOPTR)
		for l := range 8 {
			DATA(8*l, U64(c.bits))
		}
		cst[c.name] = m
	}
	// avx2TailMask[r]: the VMASKMOVPD mask of the first r of 4 lanes, r in
	// [0, 4].
	cst["avx2TailMask"] = GLOBL("avx2TailMask", RODATA|NOPTR)
	for r := range 5 {
		for l := range 4 {
			bits := uint64(0)
			if l < r {
				bits = ^uint64(0)
			}
			DATA(32*r+8*l, U64(bits))
		}
	}
	// tailMask[r] = 1<<r - 1: the K mask of the first r lanes, r in [0, 8].
	cst["tailMask"] = GLOBL("tailMask", RODATA|NOPTR)
	for r := range 9 {
		DATA(2*r, U16(1<<r-1))
	}

	for _, a := range []*isa{avx2, avx512} {
		a.axpy()
		a.axpyRows()
		a.mulAddRows(a.mulAddRowsRows())
		if a.avx512 {
			// The rows past the last 6 (4H mod 6 is 4 for H = 64 and 256,
			// 2 for H = 32): row by row, axpyRows's one chain per lane
			// vector cost as much as a tile (measured, 26 lanes × 256
			// terms: 4 rows 4.2 µs, a tile of 6 rows 1.3 µs).
			a.mulAddRows(4)
			a.mulAddRows(2)
		}
		a.gateStep()
		a.gateStepTable()
		a.gateBackward()
		a.gateBackwardTable()
		a.gruStep()
		a.gruBackward()
		a.lrpCell()
		a.lrpLinear()
	}
	Generate()
}

package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// gruStep emits GRUStep's body: the sigmoids of r and z share one
// interleaved exp; tanh(a) needs r first, so it has its own.
func (a *isa) gruStep() {
	name := "gruStep" + a.name
	TEXT(name, NOSPLIT, "func(gates []float64, stride int, hPrev, c, tc, h []float64)")
	a.doc(name, "gruStepGeneric")
	n := Load(Param("c").Len(), GP64())
	sb := Load(Param("stride"), GP64())
	SHLQ(U8(3), sb)
	gs := gateBlocks("gates", sb)
	hp := Load(Param("hPrev").Base(), GP64())
	c := Load(Param("c").Base(), GP64())
	tc := Load(Param("tc").Base(), GP64())
	h := Load(Param("h").Base(), GP64())
	a.elementwise(name, n, func(ac access) {
		Comment("load every input of the block before storing anything")
		vr, vz, vn, vh, vp := ac.ld(gs[0]), ac.ld(gs[1]), ac.ld(gs[2]), ac.ld(gs[3]), ac.ld(hp)
		a.activate([]Register{vr, vz}, nil)
		Comment("a = n_in + float64(r*hn)")
		VMULPD(vh, vr, vh)
		VADDPD(vh, vn, vn)
		ac.st(vn, tc)
		Comment("n = tanh(a)")
		a.activate(nil, []Register{vn})
		Comment("h = n + float64(z*float64(hPrev-n))")
		VSUBPD(vn, vp, vp)
		VMULPD(vp, vz, vp)
		VADDPD(vp, vn, vp)
		ac.st(vr, gs[0])
		ac.st(vz, gs[1])
		ac.st(vn, gs[2])
		ac.st(vp, c)
		ac.st(vp, h)
	})
}

// gruBackward emits GRUBackward's body.
func (a *isa) gruBackward() {
	name := "gruBackward" + a.name
	TEXT(name, NOSPLIT, "func(dz []float64, stride int, dcPrev, dh, dc, gates, hPrev []float64)")
	a.doc(name, "gruBackwardGeneric")
	n := Load(Param("dh").Len(), GP64())
	sb := Load(Param("stride"), GP64())
	SHLQ(U8(3), sb)
	dz, gs := gateBlocks("dz", sb), gateBlocks("gates", sb)
	// The other bases are reloaded from the frame in the loop: there are
	// not enough general registers for all of them.
	base := func(p string) Register { return Load(Param(p).Base(), GP64()) }
	a.elementwise(name, n, func(ac access) {
		one := a.kreg("one")
		vr, vz, vn, vh := ac.ld(gs[0]), ac.ld(gs[1]), ac.ld(gs[2]), ac.ld(gs[3])
		d, vdc, vp := ac.ld(base("dh")), ac.ld(base("dc")), ac.ld(base("hPrev"))
		Comment("d = dh + dc")
		VADDPD(vdc, d, d)
		Comment("da = float64(float64(d*float64(1-z)) * float64(1-float64(n*n)))")
		omz, da, t := a.vec(), a.vec(), a.vec()
		VSUBPD(vz, one, omz)
		VMULPD(omz, d, da)
		VMULPD(vn, vn, t)
		VSUBPD(t, one, t)
		VMULPD(t, da, da)
		Comment("dzt = float64(d*float64(hPrev-n)); dz_z = float64(dzt*float64(1-z)) * z")
		VSUBPD(vn, vp, vp)
		VMULPD(vp, d, vp)
		VMULPD(omz, vp, vp)
		VMULPD(vz, vp, vp)
		ac.st(vp, dz[1])
		Comment("dz_r = float64(float64(da*hn)*float64(1-r)) * r")
		VMULPD(vh, da, vh)
		VSUBPD(vr, one, t)
		VMULPD(t, vh, vh)
		VMULPD(vr, vh, vh)
		ac.st(vh, dz[0])
		ac.st(da, dz[2])
		Comment("dz_hn = da * r; dcPrev = d * z")
		VMULPD(vr, da, da)
		ac.st(da, dz[3])
		VMULPD(vz, d, d)
		ac.st(d, base("dcPrev"))
	})
}

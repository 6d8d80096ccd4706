package kernel

// The GRU's twins (see gates_generic.go): GRUStep's and GRUBackward's
// specification, every product rounded before it is added.

func gruStepGeneric(gates []float64, stride int, hPrev, c, tc, h []float64) {
	n := len(c)
	gruStepBlocks(gates[:n], gates[stride:stride+n], gates[2*stride:2*stride+n], gates[3*stride:3*stride+n], hPrev, c, tc, h)
}

// gruStepBlocks is gruStepGeneric on the four blocks given apart (the
// assembly's callers finish a tail with it).
func gruStepBlocks(gr, gz, gn, gh, hPrev, c, tc, h []float64) {
	n := len(c)
	gr, gz, gn, gh = gr[:n], gz[:n], gn[:n], gh[:n]
	hPrev, tc, h = hPrev[:n], tc[:n], h[:n]
	for j := range n {
		r := sigmoidGeneric(gr[j])
		z := sigmoidGeneric(gz[j])
		a := gn[j] + float64(r*gh[j])
		nv := tanhGeneric(a)
		hj := nv + float64(z*float64(hPrev[j]-nv))
		gr[j], gz[j], gn[j] = r, z, nv
		tc[j], c[j], h[j] = a, hj, hj
	}
}

func gruBackwardGeneric(dz []float64, stride int, dcPrev, dh, dc, gates, hPrev []float64) {
	n := len(dh)
	gruBackwardBlocks(dz[:n], dz[stride:stride+n], dz[2*stride:2*stride+n], dz[3*stride:3*stride+n], dcPrev, dh, dc,
		gates[:n], gates[stride:stride+n], gates[2*stride:2*stride+n], gates[3*stride:3*stride+n], hPrev)
}

// gruBackwardBlocks is gruBackwardGeneric on blocks given apart.
func gruBackwardBlocks(dr, dzz, dn, dhn, dcPrev, dh, dc, gr, gz, gn, gh, hPrev []float64) {
	n := len(dh)
	dr, dzz, dn, dhn = dr[:n], dzz[:n], dn[:n], dhn[:n]
	dcPrev, dc, gr, gz, gn, gh, hPrev = dcPrev[:n], dc[:n], gr[:n], gz[:n], gn[:n], gh[:n], hPrev[:n]
	for j := range n {
		r, z, nv, ghn := gr[j], gz[j], gn[j], gh[j]
		d := dh[j] + dc[j]
		da := float64(float64(d*float64(1-z)) * float64(1-float64(nv*nv)))
		dzt := float64(d * float64(hPrev[j]-nv))
		dr[j] = float64(float64(da*ghn)*float64(1-r)) * r
		dzz[j] = float64(dzt*float64(1-z)) * z
		dn[j] = da
		dhn[j] = da * r
		dcPrev[j] = d * z
	}
}

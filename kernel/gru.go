package kernel

// GRUStep is one GRU time step (PyTorch's nn.GRU) for n = len(c) values
// (units × lanes) whose four packed blocks lie stride elements apart in
// gates: on entry, the pre-activations of r and z (input and recurrent
// products with both biases), n's input part W_in·x + b_in and n's
// recurrent part W_hn·h_{t−1} + b_hn. As a loop, per element j:
//
//	r := Sigmoid(gates[j])
//	z := Sigmoid(gates[stride+j])
//	a := gates[2*stride+j] + float64(r*gates[3*stride+j])
//	n := Tanh(a)
//	h' := n + float64(z*float64(hPrev[j]-n))   // (1 − z)⊙n + z⊙h_{t−1}
//	gates[j], gates[stride+j], gates[2*stride+j] = r, z, n
//	tc[j], c[j], h[j] = a, h', h'
//
// The fourth block (W_hn·h + b_hn) is left as it is: the backward step
// needs it. c may be hPrev (every input of an element is read before its
// outputs are written).
func GRUStep(gates []float64, stride int, hPrev, c, tc, h []float64) {
	n := len(c)
	if n == 0 {
		return
	}
	gates = gates[:3*stride+n]
	hPrev, tc, h = hPrev[:n], tc[:n], h[:n]
	if raceEnabled {
		raceRead(hPrev)
		for q := range 4 {
			raceWrite(gates[q*stride : q*stride+n])
		}
		raceWrite(c)
		raceWrite(tc)
		raceWrite(h)
	}
	gruStep(gates, stride, hPrev, c, tc, h)
}

// GRUBackward is GRUStep's backward for n = len(dh) values: from the
// activations GRUStep left in gates (r, z, n and W_hn·h + b_hn, blocks
// stride apart), h_{t−1} (hPrev), the gradient dh of h_t from above and
// dc, the gradient h_{t+1} sends to h_t directly, it writes the gradients
// of the four packed pre-activations to dz (blocks stride apart) and
// z⊙(dh + dc), the direct gradient of h_{t−1}, to dcPrev. As a loop:
//
//	r, z, n, hn := gates[j], gates[stride+j], gates[2*stride+j], gates[3*stride+j]
//	d := dh[j] + dc[j]
//	da := float64(float64(d*float64(1-z)) * float64(1-float64(n*n)))
//	dzt := float64(d * float64(hPrev[j]-n))
//	dz[j] = float64(float64(da*hn)*float64(1-r)) * r
//	dz[stride+j] = float64(dzt*float64(1-z)) * z
//	dz[2*stride+j] = da
//	dz[3*stride+j] = da * r
//	dcPrev[j] = d * z
func GRUBackward(dz []float64, stride int, dcPrev, dh, dc, gates, hPrev []float64) {
	n := len(dh)
	if n == 0 {
		return
	}
	dz, gates = dz[:3*stride+n], gates[:3*stride+n]
	dcPrev, dc, hPrev = dcPrev[:n], dc[:n], hPrev[:n]
	if raceEnabled {
		raceRead(dh)
		raceRead(dc)
		raceRead(hPrev)
		for q := range 4 {
			raceRead(gates[q*stride : q*stride+n])
			raceWrite(dz[q*stride : q*stride+n])
		}
		raceWrite(dcPrev)
	}
	gruBackward(dz, stride, dcPrev, dh, dc, gates, hPrev)
}

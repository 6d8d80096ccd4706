package cell

// DeepLIFT through a GRU layer: the rules of deeplift.go (Rescale
// at every sigmoid and tanh, the symmetric split at every product of two
// varying factors, linear maps passing multipliers as gradients) applied
// to PyTorch's GRU step. With d = m_h the multiplier of h_t (from above,
// from h_{t+1}'s gates through W_hh and from h_{t+1} directly), per unit:
//
//   - h_t = (1 − z)⊙n + z⊙h_{t−1}: two product splits,
//     m_n = d·((1 − z₀) + Δ(1 − z)/2), m_{h_{t−1}} = d·(z₀ + Δz/2) (direct)
//     and m_z = d·((h₀_{t−1} + Δh_{t−1}/2) − (n₀ + Δn/2)) (z's share of
//     z⊙h_{t−1} less its share of (1 − z)⊙n);
//   - n = tanh(a): Rescale, m_a = m_n·(n − n₀)/(a − a₀);
//   - a = (W_in·x + b_in) + r⊙(W_hn·h_{t−1} + b_hn): the input part gets
//     m_a, the product splits: m_r = m_a·(q₀ + Δq/2), m_q = m_a·(r₀ + Δr/2),
//     q = W_hn·h_{t−1} + b_hn;
//   - r = σ(·), z = σ(·): Rescale of their pre-activations.
//
// The four multipliers land in the packed pre-activations' blocks (r, z,
// the input part of a, q), so W_ih'ᵀ and W_hh'ᵀ (layer_gru.go's packing)
// carry them to x_t and h_{t−1} as for an LSTM; the direct part d·(z₀ +
// Δz/2) goes to h_{t−1} through mcPrev, where the LSTM passes c_{t−1}'s.

// gruMultipliersLanes is gateMultipliersLanes for a GRU step and l lanes
// of multipliers (lane-minor, [j·l + c]): given those of h_t from above
// and through h_{t+1}'s gates (mh) and directly from h_{t+1} (mc), it
// writes the multipliers of the four packed pre-activations (mz, 4H·l)
// and the direct one of h_{t−1} (mcPrev). x is the step's trace on the
// input, x0 on the reference (act: r, z, n, q; pre: r's and z's
// pre-activations, a's input part, q; tc: a), hPrev and hPrev0 h_{t−1}.
// Each factor is computed once per unit and every product rounded on its
// own: one lane has the bits of each lane of many.
func gruMultipliersLanes(mz, mcPrev, mh, mc []float64, x, x0 cellStep, hPrev, hPrev0 []float64, l int) {
	h := len(mh) / l
	for j := range h {
		r, z, n, q := x.act[j], x.act[h+j], x.act[2*h+j], x.act[3*h+j]
		r0, z0, n0, q0 := x0.act[j], x0.act[h+j], x0.act[2*h+j], x0.act[3*h+j]
		sn := shapley(1-z0, 1-z)                            // n's factor in (1 − z)⊙n
		sz := shapley(hPrev0[j], hPrev[j]) - shapley(n0, n) // z's in z⊙h less in (1 − z)⊙n
		sh := shapley(z0, z)                                // h_{t−1}'s in z⊙h_{t−1}
		ra := rescale(x.tc[j], x0.tc[j], n, n0, tanhPrime)
		sr, sq := shapley(q0, q), shapley(r0, r)
		rr := rescale(x.pre[j], x0.pre[j], r, r0, sigmoidPrime)
		rz := rescale(x.pre[h+j], x0.pre[h+j], z, z0, sigmoidPrime)
		for c := range l {
			u := j*l + c
			d := mh[u] + mc[u]
			ma := float64(float64(d*sn) * ra)
			mz[u] = float64(float64(ma*sr) * rr)
			mz[(h+j)*l+c] = float64(float64(d*sz) * rz)
			mz[(2*h+j)*l+c] = ma
			mz[(3*h+j)*l+c] = float64(ma * sq)
			mcPrev[u] = float64(d * sh)
		}
	}
}

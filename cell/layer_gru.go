package cell

import (
	"errors"
	"fmt"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// GRU layers (LayerGRU): PyTorch's nn.GRU, gates r, z, n in that order in
// weight_ih (3H×in) and weight_hh (3H×H),
//
//	r  = σ(W_ir·x + b_ir + W_hr·h + b_hr)
//	z  = σ(W_iz·x + b_iz + W_hz·h + b_hz)
//	n  = tanh(W_in·x + b_in + r⊙(W_hn·h + b_hn))
//	h' = (1 − z)⊙n + z⊙h   (computed as n + z⊙(h − n), as PyTorch does)
//
// A GRU cell runs on the LSTM's buffers and products. Its weights are
// packed into the LSTM's 4H rows,
//
//	W_ih' = [W_ir; W_iz; W_in; 0]   W_hh' = [W_hr; W_hz; 0; W_hn]
//	b'    = [b_ir + b_hr; b_iz + b_hz; b_in; b_hn]
//
// so that z = b' + W_ih'·x + W_hh'·h holds the pre-activations of r and z,
// the input part of n's pre-activation and the recurrent part W_hn·h + b_hn
// that r scales: every product of the engine (input products, batches of
// lanes, teams, checkpoints) serves it unchanged, at the price of one zero
// block in each matrix (a GRU's products are 4/3 of its dense size). The
// gate step (gruStep) leaves in the trace's z the activations r, z, n and
// the recurrent term, in tc n's pre-activation a, in c a copy of h (the
// state the LSTM's code passes from step to step as c_{t−1}: the GRU's
// backward reads h_{t−1} there), and in zg (LRP) the input part of a. Its
// backward (gruBackward) carries in dc the gradient z⊙dh that h_t sends to
// h_{t−1} directly. One-hot tables (tables.go) are an LSTM path:
// a GRU's layer 0 reads one-hot input as dense rows.

// LayerKind is the kind of a model's recurrent layers.
type LayerKind int

const (
	LayerLSTM LayerKind = iota // nn.LSTM (the zero value)
	LayerGRU                   // nn.GRU
)

func (k LayerKind) String() string {
	switch k {
	case LayerLSTM:
		return "lstm"
	case LayerGRU:
		return "gru"
	}
	return fmt.Sprintf("LayerKind(%d)", int(k))
}

// Kind returns the kind of s's layers.
func (s *Model) Kind() LayerKind { return s.p.Kind }

// gruLRP and gruDeepLIFT report whether LRP and DeepLIFT are defined for
// GRU layers yet.
const (
	gruLRP      = true
	gruDeepLIFT = true
)

// errGRU is the error of the methods not defined for GRU layers.
func errGRU(method string) error {
	return fmt.Errorf("cell: %s is not defined for GRU layers (LSTM only)", method)
}

// ErrCDGRU is contextual decomposition's refusal of a GRU model.
var ErrCDGRU = errors.New("cell: contextual decomposition is defined for LSTMs only, not for a GRU")

// newGRUCell checks direction d of GRU layer k (PyTorch's 3H layout, B =
// bias_ih and Bhh = bias_hh, both or neither) and packs it as the 4H-row
// cell newPackedCell makes of an LSTM's.
func newGRUCell(pc CellParams, k, d, h, in int) (packedCell, error) {
	name := cellName(k, d)
	if err := checkWeights(name+" weight_ih", pc.Wih, 3*h*in, fmt.Sprintf("3H×in = 3×%d×%d", h, in)); err != nil {
		return packedCell{}, err
	}
	if err := checkWeights(name+" weight_hh", pc.Whh, 3*h*h, fmt.Sprintf("3H×H = 3×%d×%d", h, h)); err != nil {
		return packedCell{}, err
	}
	if (pc.B == nil) != (pc.Bhh == nil) {
		return packedCell{}, fmt.Errorf("cell: GRU %s has one of bias_ih and bias_hh; give both or neither", name)
	}
	if pc.B != nil {
		if err := checkWeights(name+" bias_ih", pc.B, 3*h, fmt.Sprintf("3H = 3×%d", h)); err != nil {
			return packedCell{}, err
		}
		if err := checkWeights(name+" bias_hh", pc.Bhh, 3*h, fmt.Sprintf("3H = 3×%d", h)); err != nil {
			return packedCell{}, err
		}
	}
	wih := make([]float64, 4*h*in)
	copy(wih, pc.Wih) // rows r, z, n; the fourth block stays zero
	whh := make([]float64, 4*h*h)
	copy(whh, pc.Whh[:2*h*h])
	copy(whh[3*h*h:], pc.Whh[2*h*h:])
	var b []float64
	if pc.B != nil {
		b = make([]float64, 4*h)
		for j := range 2 * h {
			b[j] = pc.B[j] + pc.Bhh[j]
		}
		copy(b[2*h:3*h], pc.B[2*h:])
		copy(b[3*h:], pc.Bhh[2*h:])
	}
	c, err := newPackedCell(CellParams{Wih: wih, Whh: whh, B: b}, k, d, h, in)
	if err != nil {
		return packedCell{}, err
	}
	return c, nil
}

// gruStep is the GRU's gate step (kernel.GRUStep) for n = len(c) values
// (units × lanes) whose four blocks (the packed pre-activations) lie
// stride apart in gates: it reads h_{t−1} from hPrev, writes r, z, n over
// the first three blocks (the fourth, W_hn·h + b_hn, stays), n's
// pre-activation to tc, its input part to zg (when not nil) and h_t to c
// and h.
func gruStep(gates []float64, stride int, zg, hPrev, c, tc, h []float64) {
	if zg != nil {
		copy(zg[:len(c)], gates[2*stride:2*stride+len(c)])
	}
	kernel.GRUStep(gates, stride, hPrev, c, tc, h)
}

// gruBackward is gruStep's backward (kernel.GRUBackward) for n = len(dh)
// values: given the activations gruStep left (gates, blocks stride apart),
// h_{t−1} (hPrev), the gradient dh of h_t from above and dc, that h_{t+1}
// sends to h_t directly, it writes the gradients of the four packed
// pre-activations to dz (blocks stride apart) and z⊙(dh + dc), the direct
// gradient of h_{t−1}, to dcPrev.
func gruBackward(dz []float64, stride int, dcPrev, dh, dc, gates, hPrev []float64) {
	kernel.GRUBackward(dz, stride, dcPrev, dh, dc, gates, hPrev)
}

// lrpCellGRU is lrpCell for direction d of GRU layer k: the ε-rule with
// the gates r and z passing no relevance, their signals taking it all
// (Arras et al.'s rule for an LSTM's gates). Per step, from the last one
// processed to the first:
//
//   - h_t = (1 − z)⊙n + z⊙h_{t−1} is a sum of two gated signals: lrp_linear
//     with the identity on the 2H inputs u = (1 − z)⊙n and v = z⊙h_{t−1},
//     no bias: with s_j = R_j/(h_j ± ε), n_j gets u_j·s_j and h_{t−1,j}
//     gets v_j·s_j, each plus bf·ε·Σ_j sign(h_j)·s_j/(2H), the shares of
//     the stabilizer;
//   - n = tanh(a) passes its relevance to a;
//   - a = W_in·x + b_in + r⊙(W_hn·h_{t−1} + b_hn) is a linear map of the
//     in + H inputs (x, h_{t−1}) with weights W_in and r_j·W_hn[j,·] (r a
//     constant) and bias b_in + r⊙b_hn: lrp_linear with N = in + H, so
//     with q_j = R_{a,j}/(a_j ± ε) input i of x gets
//     x_i·Σ_j W_in[j,i]·q_j and h_{t−1,k} gets h_{t−1,k}·Σ_j W_hn[j,k]·r_j·q_j,
//     each plus bf·Σ_j (b_in,j + r_j·b_hn,j + ε·sign(a_j))·q_j/N.
//
// With bias factor 1 each step conserves relevance exactly (up to
// rounding): Σ inputs + the initial state's share = the logit. It adds
// the inputs' relevance to run.below (or run.rel) and returns what
// reaches the zero initial state. Every product is rounded before it is
// added, as in lrpCell.
func (r *lanes) lrpCellGRU(run *lrpRun, k, d int, top bool) float64 {
	s := r.s
	h, g, dirs, steps := s.h, 4*s.h, s.dirs, run.steps
	eps, bf := run.eps, run.bf
	cl, tr := &s.cells[k*dirs+d], &r.cells[k*dirs+d]
	rh, rd, q, qr, acc := r.dh[:h], r.dc[:h], r.dz[:h], r.dz[h:2*h], r.dz[2*h:3*h]
	clear(rh)
	if top {
		r.headSeed(run.relV, rh, d, 1)
	}
	win, whn := cl.wih[2*h*cl.in:3*h*cl.in], cl.whh[3*h*h:4*h*h]
	bin, bhn := cl.b[2*h:3*h], cl.b[3*h:4*h]
	work := s.stepWork(k*dirs+d, 1)
	for i := steps - 1; i >= 0; i-- {
		if r.stop.spend(work) {
			return 0
		}
		t := order(cl.reverse, i, steps)
		if run.above != nil {
			for j, v := range run.above[(t*dirs+d)*h : (t*dirs+d+1)*h] {
				rh[j] += v
			}
		}
		hPrev := r.zero[:h]
		if i > 0 {
			tp := order(cl.reverse, i-1, steps)
			hPrev = tr.c[tp*h : (tp+1)*h]
		}
		gates := tr.z[t*g : (t+1)*g]
		rg, zg, ng := gates[:h], gates[h:2*h], gates[2*h:3*h]
		hc, a := tr.c[t*h:(t+1)*h], tr.tc[t*h:(t+1)*h]
		cross := 0.0
		for j := range rh {
			sv := rh[j] / stabilize(hc[j], eps)
			rh[j] = sv // s_j, until the split below
			cross += float64(sign(hc[j]) * sv)
		}
		cross = float64(cross * (bf * eps / float64(2*h)))
		kx := 0.0
		for j := range rh {
			sv := rh[j]
			rd[j] = float64(float64(zg[j]*hPrev[j])*sv) + cross
			rn := float64(float64(float64(1-zg[j])*ng[j])*sv) + cross
			q[j] = rn / stabilize(a[j], eps)
			qr[j] = float64(rg[j] * q[j])
			kx += float64((bin[j] + float64(rg[j]*bhn[j]) + float64(eps*sign(a[j]))) * q[j])
		}
		kx = float64(kx * (bf / float64(h+cl.in)))
		var xt, dst []float64
		if k > 0 {
			dst, xt = run.below[t*dirs*h:(t+1)*dirs*h], r.layerInput(k, t, steps)
		} else {
			dst, xt = run.rel[t*s.in:(t+1)*s.in], run.x[t*s.in:(t+1)*s.in]
		}
		kernel.LRPLinear(dst, r.acc[:cl.in], xt, win, cl.in, q)
		for j := range dst {
			dst[j] += kx
		}
		clear(rh)
		kernel.LRPLinear(rh, acc, hPrev, whn, h, qr)
		for j := range rh {
			rh[j] += kx + rd[j]
		}
	}
	initial := 0.0
	for _, v := range rh {
		initial += v
	}
	return initial
}

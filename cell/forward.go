package cell

import (
	"context"
	"fmt"
	"math"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// Forward runs x through the network, keeps the trace in ws and returns the
// logits ŷ = W_y h⁽ᵀ⁾ + b_y. The returned slice belongs to ws and is
// overwritten by the next call.
func (n *Network) Forward(ws *Workspace, x Input) ([]float64, error) {
	if err := ws.reserve(n, x); err != nil {
		return nil, err
	}
	n.forward(ws, x)
	return ws.logits, nil
}

// ForwardContext is Forward that ends soon after ctx is done (it looks
// every fraction of a millisecond of work, stop.go) with an error wrapping ctx.Err().
func (n *Network) ForwardContext(ctx context.Context, ws *Workspace, x Input) ([]float64, error) {
	if ws == nil {
		return n.Forward(ws, x)
	}
	ws.stop = ws.stopBuf.start(ctx)
	defer func() { ws.stop = nil }()
	logits, err := n.Forward(ws, x)
	if err := ws.stop.err(); err != nil {
		return nil, err
	}
	return logits, err
}

// ForwardFrom is Forward started from the state h⁽⁰⁾ = h0, c⁽⁰⁾ = c0 instead of
// zero: it continues a sequence whose prefix was run before (see Final).
// Both must have H values, all finite.
// Gradient, LRP and GradientSum always start from the zero state.
func (n *Network) ForwardFrom(ws *Workspace, x Input, h0, c0 []float64) ([]float64, error) {
	if err := ws.reserve(n, x); err != nil {
		return nil, err
	}
	if len(h0) != n.h || len(c0) != n.h {
		return nil, fmt.Errorf("cell: initial state has %d and %d values, want H = %d each", len(h0), len(c0), n.h)
	}
	for _, s := range []struct {
		name string
		v    []float64
	}{{"h0", h0}, {"c0", c0}} {
		for j, v := range s.v {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("cell: initial state %s[%d] is %v; it must be finite", s.name, j, v)
			}
		}
	}
	ws.h0, ws.c0 = h0, c0
	n.forward(ws, x)
	ws.h0, ws.c0 = ws.zero, ws.zero
	return ws.logits, nil
}

// Final returns h⁽ᵀ⁾ and c⁽ᵀ⁾ of the last forward pass. The slices belong to
// ws and are overwritten by the next call.
func (ws *Workspace) Final() (h, c []float64) {
	c, h = ws.state(ws.last)
	return h, c
}

// Predict returns the index of the largest logit; ties go to the first class.
// NaN never wins: a NaN logit is passed over (+Inf beats every finite one),
// and 0 is returned when every logit is NaN or there are none.
func Predict(logits []float64) int {
	best := -1
	for k, v := range logits {
		if v == v && (best < 0 || v > logits[best]) {
			best = k
		}
	}
	return max(best, 0)
}

func (n *Network) forward(ws *Workspace, x Input) {
	h, g := n.h, n.gates
	hPrev, cPrev := ws.h0, ws.c0
	ws.last = x.Len()
	if x.dense != nil {
		n.inputProducts(ws, x)
	}
	for t := range x.Len() {
		if ws.stop.spend(n.stepWork()) {
			return
		}
		z := ws.gates[t*g : (t+1)*g]
		if x.dense == nil {
			copy(z, n.p.B)
			if s := x.symbols[t]; s >= 0 && x.scale != 0 {
				kernel.Axpy(x.scale, n.wxT[s*g:(s+1)*g], z)
			}
		}
		kernel.AxpyRows(z, n.whT, g, hPrev)
		c, hh := ws.cs[t*h:(t+1)*h], ws.hs[t*h:(t+1)*h]
		kernel.GateStep(z, ws.zg[t*h:(t+1)*h], cPrev, c, ws.tc[t*h:(t+1)*h], hh)
		hPrev, cPrev = hh, c
	}
	n.decode(ws.logits, ws.lin, hPrev)
}

// decode is the decoder step: lin = W_y·h (LRP reads it) and the logits
// y = lin + b_y. lin may be y itself when only the logits are wanted.
func (n *Network) decode(y, lin, h []float64) {
	clear(lin)
	kernel.AxpyRows(lin, n.wyT, n.c, h)
	for k, b := range n.p.By {
		y[k] = lin[k] + b
	}
}

// inputBlock is the number of time steps whose input products forward
// computes in one kernel.MulAddRows call.
const inputBlock = 32

// inputProducts sets z_t = b + s·(W_x·x_t) in the trace for every step of the
// dense input x scaled by s, inputBlock steps at a time: one
// kernel.MulAddRows over the packed, transposed weights with the unscaled
// input rows as the coefficients, which is AxpyRows(u_t, wxT, 4H, x_t) from
// zero for each t, bit for bit, with the weights going by once per block
// instead of once per step; then scaleInput.
//
// The scale multiplies the product, not the input: the α-scaled copies of
// Integrated Gradients then share one input product per step, which a batch
// of them computes once instead of once per copy (W_x·(α·x) and α·(W_x·x)
// differ only in rounding). One-hot inputs were always computed this way:
// their product is one column of W_x.
func (n *Network) inputProducts(ws *Workspace, x Input) {
	g, d := n.gates, n.d
	steps := x.Len()
	for t0 := 0; t0 < steps; t0 += inputBlock {
		t1 := min(t0+inputBlock, steps)
		u := ws.gates[t0*g : t1*g]
		n.inputRows(u, x.dense[t0*d:t1*d])
		for t := range t1 - t0 {
			scaleInput(u[t*g:(t+1)*g], x.scale, n.p.B)
		}
	}
}

// inputRows writes u_t = W_x·x_t, from zero, to u (rows of 4H) for the
// unscaled input rows in xs (rows of D): one kernel.MulAddRows, which is
// AxpyRows(u_t, wxT, 4H, x_t) for each t, bit for bit.
func (n *Network) inputRows(u, xs []float64) {
	g, d := n.gates, n.d
	clear(u)
	kernel.MulAddRows(u, g, n.wxT, g, xs, d, d)
}

// scaleInput turns the input product u = W_x·x_t in z into
// z = b + s·u: fma(u_r, s, b_r) for each row r, as kernel.Axpy(u_r, s, ·)
// computes it over the lanes of a batch, and b_r alone where u_r = 0 (the
// batches skip those rows, as one-hot inputs skip zero weights).
func scaleInput(z []float64, s float64, b []float64) {
	b = b[:len(z)]
	for r, u := range z {
		if u != 0 {
			z[r] = math.FMA(u, s, b[r])
		} else {
			z[r] = b[r]
		}
	}
}

// inputRow returns row t of x as the network reads it.
func (ws *Workspace) inputRow(x Input, t int) []float64 {
	d := ws.d
	if x.dense == nil {
		clear(ws.row)
		if s := x.symbols[t]; s >= 0 {
			ws.row[s] = x.scale
		}
		return ws.row
	}
	r := x.dense[t*d : (t+1)*d]
	if x.scale == 1 {
		return r
	}
	for i, v := range r {
		ws.row[i] = float64(x.scale * v)
	}
	return ws.row
}

// state returns c⁽ᵗ⁾ and h⁽ᵗ⁾ of the trace, t counted from 1; t = 0 is the
// zero initial state.
func (ws *Workspace) state(t int) (c, h []float64) {
	if t == 0 {
		return ws.c0, ws.h0
	}
	n := ws.h
	return ws.cs[(t-1)*n : t*n], ws.hs[(t-1)*n : t*n]
}

func (n *Network) checkClass(class int) error { return checkClass(class, n.c) }

// checkClass is the one check of a class index against C classes.
func checkClass(class, c int) error {
	if class < 0 || class >= c {
		return fmt.Errorf("cell: class %d is out of range [0, %d)", class, c)
	}
	return nil
}

// ForwardBatch runs every input of xs through the network and writes the
// logits of xs[b] to logits[b*C : (b+1)*C]. The results are the same bits as
// Forward's for each input.
func (n *Network) ForwardBatch(ws *Workspace, xs []Input, logits []float64) error {
	if len(logits) != len(xs)*n.c {
		return fmt.Errorf("cell: logits has %d elements, want %d inputs × %d classes", len(logits), len(xs), n.c)
	}
	for b, x := range xs {
		y, err := n.Forward(ws, x)
		if err != nil {
			return fmt.Errorf("input %d: %w", b, err)
		}
		copy(logits[b*n.c:], y)
	}
	return nil
}

package cell

import (
	"context"
	"fmt"

	"github.com/whitebox-lstm/whitebox/kernel"
)

// Gradient writes ∂ŷ_class/∂x_{t,i} to grad[t*D+i] for every time step and
// every input feature (all D columns, also for one-hot input), by
// backpropagation through time along all gate paths. It returns the logits of
// x (owned by ws).
func (n *Network) Gradient(ws *Workspace, x Input, class int, grad []float64) ([]float64, error) {
	if err := n.checkGradient(ws, x, class, grad); err != nil {
		return nil, err
	}
	n.forward(ws, x)
	n.backward(ws, x.Len(), class, grad, 0, nil)
	return ws.logits, nil
}

// GradientContext is Gradient that ends soon after ctx is done (it looks
// every fraction of a millisecond of work, stop.go) with an error wrapping ctx.Err().
func (n *Network) GradientContext(ctx context.Context, ws *Workspace, x Input, class int, grad []float64) ([]float64, error) {
	if ws == nil {
		return n.Gradient(ws, x, class, grad)
	}
	ws.stop = ws.stopBuf.start(ctx)
	defer func() { ws.stop = nil }()
	logits, err := n.Gradient(ws, x, class, grad)
	if err := ws.stop.err(); err != nil {
		return nil, err
	}
	return logits, err
}

func (n *Network) checkGradient(ws *Workspace, x Input, class int, grad []float64) error {
	if err := ws.reserve(n, x); err != nil {
		return err
	}
	if err := n.checkClass(class); err != nil {
		return err
	}
	if want := x.Len() * n.d; len(grad) != want {
		return fmt.Errorf("cell: gradient buffer has %d elements, want T×D = %d×%d = %d", len(grad), x.Len(), n.d, want)
	}
	return nil
}

// backward runs BPTT over the trace of the last forward pass of length steps
// and writes the gradient of every input row to grad, or with dzSum not nil
// adds wt·dz_t to row t of dzSum (T×4H) instead.
func (n *Network) backward(ws *Workspace, steps, class int, grad []float64, wt float64, dzSum []float64) {
	h, d, g := n.h, n.d, n.gates
	dh, dc, dcPrev := ws.dh, ws.dc, ws.dcPrev
	copy(dh, n.p.Wy[class*h:(class+1)*h]) // ∂ŷ_c/∂h⁽ᵀ⁾
	clear(dc)
	for t := steps - 1; t >= 0; t-- {
		if ws.stop.spend(n.stepWork()) {
			return
		}
		cPrev, _ := ws.state(t)
		kernel.GateBackward(ws.dz, dcPrev, dh, dc, ws.gates[t*g:(t+1)*g], ws.tc[t*h:(t+1)*h], cPrev)
		if dzSum != nil {
			kernel.Axpy(wt, ws.dz, dzSum[t*g:(t+1)*g])
		} else {
			gt := grad[t*d : (t+1)*d]
			clear(gt)
			kernel.AxpyRows(gt, n.wx, d, ws.dz)
		}
		if t > 0 {
			clear(dh)
			kernel.AxpyRows(dh, n.wh, h, ws.dz)
		}
		dc, dcPrev = dcPrev, dc
	}
}

// sumBlock is the number of gradients a GradientSum adds up before it adds
// their partial sum to the total. The blocks are fixed by the step count
// alone, so that blocks can later be computed in parallel and still add up
// to the same bits.
const sumBlock = 16

// GradientSum writes Σ_k weights[k]·∇ŷ_class(alphas[k]·x) to acc (T×D): the
// weighted sum of gradients along the straight path from 0 to x that
// Integrated Gradients integrates. Terms are added in order within blocks of
// 16, and the blocks' partial sums in order.
//
// On dense inputs the gradient of row t is W_xᵀ·dz_t, linear in dz_t, so a
// block sums the weighted dz_t instead, in the same order, and multiplies
// each step's sum by W_xᵀ once: one product per block and step instead of
// one per gradient (a batch of 64 lanes computes 4 instead of 64; dense
// H = 256 IG spent a third of its products there). Σ_k w_k·(W_xᵀ·dz_k) and
// W_xᵀ·(Σ_k w_k·dz_k) differ only in rounding.
//
// GradientSum computes one gradient at a time and keeps the whole trace of
// one input; it is the reference. Batcher.GradientSum gives the same bits
// with batches, both cores, a memory budget and cancellation.
func (n *Network) GradientSum(ws *Workspace, x Input, class int, alphas, weights, acc []float64) error {
	if err := n.checkGradient(ws, x, class, acc); err != nil {
		return err
	}
	if len(alphas) != len(weights) {
		return fmt.Errorf("cell: %d alphas but %d weights", len(alphas), len(weights))
	}
	steps, d, g := x.Len(), n.d, n.gates
	dense := !x.IsOneHot()
	ws.reserveSums(steps, dense)
	size := steps * d
	grad, part, dzSum := ws.grad[:size], ws.part[:size], ws.dzSum[:0]
	if dense {
		dzSum = ws.dzSum[:steps*g]
	}
	clear(acc)
	for b0 := 0; b0 < len(alphas); b0 += sumBlock {
		clear(part)
		clear(dzSum)
		for k := b0; k < min(b0+sumBlock, len(alphas)); k++ {
			n.forward(ws, x.Scaled(alphas[k]))
			if dense {
				n.backward(ws, steps, class, nil, weights[k], dzSum)
			} else {
				n.backward(ws, steps, class, grad, 0, nil)
				kernel.Axpy(weights[k], grad, part)
			}
		}
		if dense {
			for t := range steps {
				kernel.AxpyRows(part[t*d:(t+1)*d], n.wx, d, dzSum[t*g:(t+1)*g])
			}
		}
		kernel.Axpy(1, part, acc)
	}
	return nil
}

package cell

import "fmt"

// Workspace holds the trace of a forward pass and the scratch space of the
// backward passes. It grows to the longest input it has seen and is reused
// afterwards, so calls on inputs no longer than that allocate nothing. A
// Workspace serves one goroutine at a time and networks of one shape.
type Workspace struct {
	h, d, c int
	steps   int      // capacity in time steps
	stop    *stopper // ends a pass early: set by the methods with a context
	stopBuf stopper  // what stop points to (none allocated per call)

	// The trace, one row per time step.
	gates      []float64 // T×4H activations i, f, g, o
	zg         []float64 // T×H pre-activation of g
	cs, tc, hs []float64 // T×H: c, tanh(c), h
	// The decoder: lin = W_y h_T (no bias), logits = lin + b_y.
	lin, logits []float64

	zero      []float64 // H zeros: the initial state
	h0, c0    []float64 // the initial state of the running pass (zero but in ForwardFrom)
	last      int       // the length of the last forward pass
	dh, dc    []float64 // H: gradients (or relevances) of h_t and c_t
	dcPrev    []float64 // H
	dz        []float64 // 4H
	accH      []float64 // H
	accD, row []float64 // D
	grad      []float64 // T×D: one gradient, for sums over many
	part      []float64 // T×D: a block's partial sum
	dzSum     []float64 // T×4H: a block's weighted sum of dz (dense inputs)
}

// TraceBytes is the memory of the trace a Workspace keeps for a traced
// pass over an input of steps steps (Forward, Gradient, LRP): gates (4H),
// z_g, c, tanh(c) and h (H each) per step, and the T×D gradient.
func (n *Network) TraceBytes(steps int) int64 {
	return 8 * int64(steps) * (8*int64(n.h) + int64(n.d))
}

// NewWorkspace returns an empty workspace for networks shaped like n.
func NewWorkspace(n *Network) *Workspace {
	h, d, c := n.h, n.d, n.c
	ws := &Workspace{
		h: h, d: d, c: c,
		lin: make([]float64, c), logits: make([]float64, c),
		zero: make([]float64, h), dh: make([]float64, h), dc: make([]float64, h),
		dcPrev: make([]float64, h), dz: make([]float64, 4*h), accH: make([]float64, h),
		accD: make([]float64, d), row: make([]float64, d),
	}
	ws.h0, ws.c0 = ws.zero, ws.zero
	return ws
}

// reserve checks that ws fits n and x, and grows the trace to x's length.
func (ws *Workspace) reserve(n *Network, x Input) error {
	if ws == nil {
		return fmt.Errorf("cell: nil workspace")
	}
	if ws.h != n.h || ws.d != n.d || ws.c != n.c {
		return fmt.Errorf("cell: workspace is for H=%d D=%d C=%d, network has H=%d D=%d C=%d", ws.h, ws.d, ws.c, n.h, n.d, n.c)
	}
	if err := x.check(n.d); err != nil {
		return err
	}
	if t := x.Len(); t > ws.steps {
		h := n.h
		ws.gates = make([]float64, t*4*h)
		ws.zg = make([]float64, t*h)
		ws.cs = make([]float64, t*h)
		ws.tc = make([]float64, t*h)
		ws.hs = make([]float64, t*h)
		ws.steps = t
	}
	return nil
}

// reserveSums grows the buffers of gradient sums to T×D, and to T×4H those
// of the sums of dz for dense inputs.
func (ws *Workspace) reserveSums(t int, dense bool) {
	if n := t * ws.d; len(ws.grad) < n {
		ws.grad = make([]float64, n)
		ws.part = make([]float64, n)
	}
	if n := t * 4 * ws.h; dense && len(ws.dzSum) < n {
		ws.dzSum = make([]float64, n)
	}
}

// Package bench holds the benchmark suite (in bench_test.go) and
// the workloads it measures, so that the suite, the tracking command
// (bench/cmd/benchreport) and the PyTorch baseline (bench/baseline) agree on
// what is measured.
//
// Workloads are fixed-seed: the same network weights and the same inputs on
// every run and every machine.
//
//   - counting, sp-counter, sp-fsa, bracket (k = 50): the white-box networks
//     with the paper's defaults; inputs are one-hot strings of the task's
//     domain drawn by Task.Generate with seed inputSeed.
//   - dense-h64 (H = 64, D = 32) and dense-h256 (H = 256, D = 128): random
//     LSTMs with C = 2 classes, weights and biases ~ N(0, 1/(H+D)) (the fan-in
//     of a gate pre-activation), decoder ~ N(0, 1/H), so the gates are not
//     saturated; inputs are dense T×D matrices with entries ~ N(0, 1), which
//     makes the input product a real matrix product (the PyTorch baseline
//     builds the same weights and inputs from the same rules, not the same
//     bits).
package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// Nets lists the networks of the suite, in table order (a new slice each
// call, as Lengths, Steps and Methods).
func Nets() []string {
	return []string{"counting", "sp-counter", "sp-fsa", "bracket", "dense-h64", "dense-h256"}
}

// Lengths are the input lengths T.
func Lengths() []int { return []int{16, 256, 4096} }

// Steps are the IG step counts.
func Steps() []int { return []int{50, 1000, 10000} }

// Methods are the measured methods with the names their benchmarks use
// (BenchmarkForward, BenchmarkSaliency, …).
func Methods() []string {
	return []string{"forward", "saliency", "gxi", "ig", "occlusion", "lrp", "deeplift", "cd"}
}

const (
	weightSeed = 1
	inputSeed  = 2
	// bracketK is the bracket network's stack size (H = 2k+2 = 102).
	bracketK = 50
)

// Workload is a network and an input of length T for it.
type Workload struct {
	Net     string
	Model   *cell.Model // one LSTM layer, head hn, one Linear decoder
	Input   cell.Input
	H, D    int
	Symbols []int     // the one-hot symbols (white-box nets)
	Dense   []float64 // the T×D values (dense nets)
}

// NewWorkload builds network name and a fixed-seed input of length t.
func NewWorkload(name string, t int) (*Workload, error) {
	if h, d, ok := denseShape(name); ok {
		net, err := cell.NewModel(DenseParams(h, d))
		if err != nil {
			return nil, err
		}
		x := DenseInput(t, d)
		return &Workload{Net: name, Model: net, Input: cell.Dense(x, t), H: h, D: d, Dense: x}, nil
	}
	cfg := whitebox.Config{}
	if name == "bracket" {
		cfg.K = new(bracketK)
	}
	net, err := whitebox.New(name, cfg)
	if err != nil {
		return nil, err
	}
	// One generator per (net, T), so that adding a length never changes the
	// others' inputs.
	s, err := net.Task.Generate(whitebox.NewRand(inputSeed*1_000_003+uint64(t)), t, t)
	if err != nil {
		return nil, err
	}
	sym, err := net.Task.Encode(s)
	if err != nil {
		return nil, fmt.Errorf("%s: generated input does not encode: %w", name, err)
	}
	n := net.Model
	return &Workload{Net: name, Model: n, Input: cell.OneHot(sym), H: n.Hidden(), D: n.Input(), Symbols: sym}, nil
}

// denseShape parses dense-h64 and dense-h256 (D = H/2).
func denseShape(name string) (h, d int, ok bool) {
	rest, ok := strings.CutPrefix(name, "dense-h")
	if !ok {
		return 0, 0, false
	}
	if _, err := fmt.Sscan(rest, &h); err != nil || h < 2 {
		return 0, 0, false
	}
	return h, h / 2, true
}

// DenseParams are the random dense LSTM with H units, D inputs and 2
// classes: one layer, head hn, one Linear decoder, with the white-box
// networks' LRP rule (cell.LRPHao), as the suite has measured them.
func DenseParams(h, d int) cell.Params {
	rng := rand.New(rand.NewPCG(weightSeed, uint64(h)))
	normal := func(n int, sd float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64() * sd
		}
		return v
	}
	sd := 1 / math.Sqrt(float64(h+d))
	const c = 2
	wx, wh, b := normal(4*h*d, sd), normal(4*h*h, sd), normal(4*h, sd)
	return cell.Params{Input: d, Hidden: h, Layers: 1, Classes: c,
		Cells: []cell.CellParams{{Wih: wx, Whh: wh, B: b}},
		Wy:    normal(c*h, 1/math.Sqrt(float64(h))), By: normal(c, 1/math.Sqrt(float64(h))),
		LRP: cell.LRPHao}
}

// DenseInput is a T×D matrix of N(0, 1) entries.
func DenseInput(t, d int) []float64 {
	rng := rand.New(rand.NewPCG(inputSeed, uint64(t*d)))
	x := make([]float64, t*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// ForwardFLOPs counts the floating-point operations of one forward pass of
// length t the way BLAS does (a multiply-add is 2): the gate pre-activations
// W_x x⁽ᵗ⁾ + W_h h⁽ᵗ⁻¹⁾ are 2·4H·(D+H) per step, the decoder 2·C·H once.
// The gate nonlinearities and elementwise products are not counted: their
// cost in FLOPs is not well defined (exp), and they are O(H) against O(H²).
func ForwardFLOPs(h, d, c, t int) float64 {
	return float64(t)*8*float64(h)*float64(h+d) + 2*float64(c)*float64(h)
}

// FLOPs counts one call of method on a network of that shape: the forward
// passes plus the transposed products of the backward passes, which have the
// same size (W_xᵀ dz and W_hᵀ dz: 2·4H·(D+H) per step).
//
//	forward:        F
//	saliency, gxi:  2F (forward + backprop)
//	ig:             (2·steps + 2)F (steps gradients, plus ŷ(x) and ŷ(0))
//	occlusion:      (T + 1)F (the input and its T occluded copies)
//	lrp:            1.25F (forward + the ε-rule through W_g only: 2H·(D+H) per step)
//	deeplift:       3F (the input's and the reference's forward passes + one backward)
//	cd:             (T + 1)F (token t's span runs W_h·β and W_h·γ from step t on: Σ_t 2(T−t)/T·F ≈ T·F, plus the shared pass)
func FLOPs(method string, h, d, c, t, steps int) float64 {
	f := ForwardFLOPs(h, d, c, t)
	switch method {
	case "forward":
		return f
	case "saliency", "gxi":
		return 2 * f
	case "ig":
		return float64(2*steps+2) * f
	case "occlusion":
		return float64(t+1) * f
	case "lrp":
		return f + float64(t)*2*float64(h)*float64(h+d)
	case "deeplift":
		return 3 * f
	case "cd":
		return float64(t+1) * f
	}
	panic("bench: unknown method " + method)
}

// IGRunFLOPs counts the products Integrated Gradients runs on a dense input,
// which share the input products among the α steps (cell.Model.GradientSum):
// W_h·h and W_hᵀ·dz per α step and time step (none at t = 0 backward),
// W_x·x once per time step, W_xᵀ once per block of 16 α steps and time step,
// and the forward passes of x and 0·x. FLOPs("ig", …) counts the same
// workload as a framework computes it.
func IGRunFLOPs(h, d, c, t, steps int) float64 {
	g := 4 * float64(h)
	T, k := float64(t), float64(steps)
	terms := g*float64(h)*(k*(2*T-1)+2*T) + g*float64(d)*T*float64(1+(steps+15)/16) + 2*float64(c*h)
	return 2 * terms
}

// Work estimates the cost of a case in units that track its run time for
// every network size: FLOPs plus unitOverhead per hidden unit and time step
// for the gate nonlinearities (five exp-based functions per unit), which
// dominate for the small white-box networks (H = 1 … 36), where FLOPs alone
// would promise a speed no call reaches.
func Work(method string, h, d, t, steps int) float64 {
	passes := FLOPs(method, h, d, 0, t, steps) / ForwardFLOPs(h, d, 0, t)
	return passes * float64(t) * (8*float64(h)*float64(h+d) + unitOverhead*float64(h))
}

// unitOverhead is calibrated on the pure-Go engine: ≈ 65 ns per unit and
// step at ≈ 3 GFLOP/s (sp-counter's forward pass, 650 ns a step, of which
// its 616 FLOPs take 200 ns).
const unitOverhead = 200

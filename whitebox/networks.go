package whitebox

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/kernel"
)

// Net is a white-box network together with the task it solves.
type Net struct {
	Name string // counting, sp-counter, sp-fsa or bracket
	Task *Task
	// Model is the network: a one-layer, one-direction LSTM classifier of
	// the engine (head hn, one Linear decoder), with the paper's LRP rule
	// (cell.LRPHao). Run it with attrib, or with a cell.Runner for
	// the raw passes (Forward, ForwardFrom and Final, Gradient, LRP).
	Model  *cell.Model
	Params Params // the parameters it was built with, defaults filled in
}

// Params are a network's parameters as built: m, and u or k where the
// network has one (0 where it has none).
type Params struct {
	M, U float64
	K    int
}

// Config holds the parameters of the white-box networks. The zero Config
// builds every network with its defaults: a nil field means the default;
// a value given is taken as it is (a zero too, given by a command-line
// flag, say) and New refuses one out of range with an error naming the
// parameter instead of replacing it with the default.
type Config struct {
	// M is the gate saturation constant m, positive and finite (and small
	// enough that no weight or pre-activation overflows). Nil: DefaultM
	// (50).
	M *float64
	// U is the counter scale u of counting, sp-counter and sp-fsa, positive
	// and finite. Nil: DefaultU(name) (counting 0.5, sp-counter 0.7, sp-fsa
	// 1). Bracket has no u: it refuses any U.
	U *float64
	// K is the bracket network's stack size k, in 1..MaxStackSize. Nil:
	// DefaultStackSize (50). The other networks have no k: they refuse
	// any K.
	K *int
	// Unchecked builds sp-fsa even when, with these M and U, it does not
	// simulate its automaton (New otherwise refuses it): for experiments on
	// a broken network, such as the authors' ablation script's u = 0.5
	// (Table 5's footnote). The other networks have no such check.
	Unchecked bool
}

// Names lists the white-box networks.
var allNames = []string{"counting", "sp-counter", "sp-fsa", "bracket"}

// Names returns the list above, a new slice each call.
func Names() []string { return slices.Clone(allNames) }

// Default parameters.
const (
	// DefaultM is the gate saturation constant m a zero Config.M stands for.
	DefaultM = 50
	// DefaultStackSize is the bracket network's stack size k a zero
	// Config.K stands for.
	DefaultStackSize = 50
	// MaxStackSize keeps the bracket network's weights (up to 2^(k+1)·m)
	// finite and its size reasonable.
	MaxStackSize = 500
	// BracketExactDepth is the deepest nesting (open brackets at once) the
	// bracket network with the default k and m answers correctly in
	// float64, measured by TestBracketExactDepth: the top-of-stack unit
	// reads the stack through weights scaled by 2^(j+1), and from depth 39
	// rounding loses the bottom brackets (a larger k loses them sooner: at
	// k = 100 from depth 4). Deeper prefixes, up to k, are accepted and
	// may be misclassified; a result says so (Task.Label gives the answer).
	BracketExactDepth = 38
	// CheckedLength is the length up to which the tests check long
	// strings of several shapes on counting, sp-counter and sp-fsa with
	// their default parameters (no failure; every string up to length 10
	// is checked too).
	CheckedLength = 1 << 14
)

// DefaultU returns the default u of a network (0 for bracket, which has none).
func DefaultU(name string) float64 {
	switch name {
	case "counting":
		return 0.5
	case "sp-counter":
		return 0.7
	case "sp-fsa":
		return 1
	}
	return 0
}

// New builds the white-box network called name. Its weights use
// kernel.Tanh, not math.Tanh, whose bits differ between amd64 and arm64
// (the compiler fuses its polynomial differently), so that every platform
// builds the same network. Errors begin "whitebox: NAME:" and name the
// parameter at fault; see Config for what each field's zero means.
func New(name string, cfg Config) (*Net, error) {
	net, err := newNet(name, cfg)
	if err != nil {
		if !slices.Contains(allNames, name) {
			return nil, fmt.Errorf("whitebox: %w", err)
		}
		return nil, fmt.Errorf("whitebox: %s: %w", name, err)
	}
	return net, nil
}

func newNet(name string, cfg Config) (*Net, error) {
	if !slices.Contains(allNames, name) {
		return nil, fmt.Errorf("unknown network %q (networks: %s)", name, strings.Join(allNames, ", "))
	}
	p := Params{M: DefaultM}
	if cfg.M != nil {
		p.M = *cfg.M
	}
	if err := checkParam("m", p.M); err != nil {
		return nil, err
	}
	var (
		net  *cell.Model
		task *Task
		err  error
	)
	switch name {
	case "counting", "sp-counter", "sp-fsa":
		if cfg.K != nil {
			return nil, fmt.Errorf("%s has no stack size k (k = %d given)", name, *cfg.K)
		}
		p.U = DefaultU(name)
		if cfg.U != nil {
			p.U = *cfg.U
		}
		if err := checkParam("u", p.U); err != nil {
			return nil, err
		}
	case "bracket":
		if cfg.U != nil {
			return nil, fmt.Errorf("bracket has no parameter u (u = %v given)", *cfg.U)
		}
		p.K = DefaultStackSize
		if cfg.K != nil {
			p.K = *cfg.K
		}
		if p.K < 1 || p.K > MaxStackSize {
			return nil, fmt.Errorf("stack size k = %d must be in 1..%d (at least 1)", p.K, MaxStackSize)
		}
	}
	// The largest weight or gate pre-activation, as a multiple of m.
	scale := map[string]float64{"counting": 2, "sp-counter": 4, "bracket": math.Ldexp(1, p.K+4)}[name]
	if maxM := math.MaxFloat64 / scale; name != "sp-fsa" && p.M > maxM {
		return nil, fmt.Errorf("parameter m = %v is too large: weights and pre-activations reach %g·m, so m must be at most %.4g", p.M, scale, maxM)
	}
	switch name {
	case "counting":
		net, err = counting(p.M, p.U)
		task = CountingTask()
	case "sp-counter":
		net, err = spCounter(p.M, p.U)
		task = SPTask()
	case "sp-fsa":
		net, err = compileDFA(SPAutomaton(), p.M, p.U, !cfg.Unchecked)
		task = SPTask()
	case "bracket":
		net, err = bracket(p.M, p.K)
		task = BracketTask(p.K)
	}
	if err != nil {
		return nil, err
	}
	return &Net{Name: name, Task: task, Model: net, Params: p}, nil
}

// counting: one counter, g = tanh(u·(x_a − x_b)), all gates open (σ(m));
// ŷ_True = h₀, ŷ_False = tanh(v)/2 with v = tanh(u).
func counting(m, u float64) (*cell.Model, error) {
	w := newParams(1, 2, 2)
	w.setWx(gateG, 0, 0, u)
	w.setWx(gateG, 0, 1, -u)
	w.setB(gateI, 0, m)
	w.setB(gateF, 0, m)
	w.setB(gateO, 0, m)
	w.p.Wy[1] = 1
	w.p.By[0] = kernel.Tanh(kernel.Tanh(u)) / 2
	return w.build()
}

// spCounter: units 0–3 count a, b, c, d; unit 4 counts b's after an a,
// unit 5 c's after a b or d, unit 6 d's after a c (the input gate opens on
// the earlier symbol's counter). ŷ_True = h₄ + h₅ + h₆; ŷ_False = tanh(v)/20.
func spCounter(m, u float64) (*cell.Model, error) {
	w := newParams(7, 4, 2)
	for j := range 4 {
		w.setWx(gateG, j, j, u)
	}
	w.setWx(gateG, 4, 1, u)
	w.setWx(gateG, 5, 2, u)
	w.setWx(gateG, 6, 3, u)
	w.setWh(gateI, 4, 0, 2*m)
	w.setWh(gateI, 5, 1, 2*m)
	w.setWh(gateI, 5, 3, 2*m)
	w.setWh(gateI, 6, 2, 2*m)
	for j := range 7 {
		bi := m
		if j >= 4 {
			bi = -m
		}
		w.setB(gateI, j, bi)
		w.setB(gateF, j, m)
		w.setB(gateO, j, m)
	}
	for j := 4; j < 7; j++ {
		w.p.Wy[1*7+j] = 1
	}
	w.p.By[0] = kernel.Tanh(kernel.Tanh(u)) / 20
	return w.build()
}

// bracket is the authors' released PDA construction, which produced the
// published heatmaps (the paper's appendix describes a 2k+1-unit variant
// whose printed matrices contain typos): stack slots
// S_j = j, unary height U_j = k+j, top of stack T = 2k, empty flag E = 2k+1.
func bracket(m float64, k int) (*cell.Model, error) {
	h := 2*k + 2
	w := newParams(h, 4, 3)
	S := func(j int) int { return j }
	U := func(j int) int { return k + j }
	T, E := 2*k, 2*k+1
	mu := m / kernel.Tanh(1)
	// A[j][j] = 1, A[j][j+1] = −1; A↑[j] = A[j+1]; A↓[j] = A[j−1].
	a := func(r, c int) float64 {
		switch {
		case r < 0 || r >= k:
			return 0
		case c == r:
			return 1
		case c == r+1:
			return -1
		}
		return 0
	}
	for j := range k {
		for l := range k {
			// forget gate: −2m·A↑ from U to S, −2m·A from U to U.
			w.setWh(gateF, S(j), U(l), -2*m*a(j+1, l))
			w.setWh(gateF, U(j), U(l), -2*m*a(j, l))
			// input gate: 2m·A from U to S, 2m·A↓ from U to U.
			w.setWh(gateI, S(j), U(l), 2*m*a(j, l))
			w.setWh(gateI, U(j), U(l), 2*m*a(j-1, l))
		}
		for _, unit := range []int{S(j), U(j)} {
			w.setWx(gateF, unit, OpenParen, 2*m)
			w.setWx(gateF, unit, OpenSquare, 2*m)
			w.setB(gateF, unit, m)
			w.setB(gateI, unit, -m)
		}
		w.setWh(gateG, S(j), T, mu)
		w.setWh(gateG, T, S(j), mu*math.Ldexp(1, j+1))
		w.setWh(gateG, E, U(j), -m)
		w.setWx(gateG, U(j), OpenParen, m)
		w.setWx(gateG, U(j), OpenSquare, m)
		w.setWx(gateI, S(j), CloseParen, -2*m)
		w.setWx(gateI, S(j), CloseSquare, -2*m)
	}
	w.setWx(gateI, U(0), OpenParen, 2*m)
	w.setWx(gateI, U(0), OpenSquare, 2*m)
	w.setWx(gateG, T, OpenParen, math.Ldexp(m, k+1))
	w.setWx(gateG, T, OpenSquare, -math.Ldexp(m, k+1))
	w.setWx(gateG, E, OpenParen, -2*m)
	w.setWx(gateG, E, OpenSquare, -2*m)
	w.setB(gateG, E, 1.5*m)
	for _, unit := range []int{T, E} {
		w.setB(gateF, unit, -m)
		w.setB(gateI, unit, m)
	}
	for j := range h {
		w.setB(gateO, j, m)
	}
	w.p.Wy[0*h+T] = 1  // ŷ_) = h_T
	w.p.Wy[1*h+T] = -1 // ŷ_] = −h_T
	w.p.Wy[2*h+E] = 1  // ŷ_None = h_E
	return w.build()
}

package faithfulness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/evaluate"
	"github.com/whitebox-lstm/whitebox/kernel"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// Defaults of Config.
const (
	DefaultInfidelitySamples  = 50
	DefaultSensitivitySamples = 10
	DefaultRadius             = 0.02
)

// Config sets a Run. Zero fields mean the defaults; negative ones are errors.
type Config struct {
	Seed               uint64  // the perturbations' seed
	InfidelitySamples  int     // token subsets per input (zero: 50)
	SensitivitySamples int     // noisy copies per input (zero: 10)
	Radius             float64 // max-sensitivity's noise radius r (zero: 0.02)
	Workers            int     // goroutines (zero: runtime.GOMAXPROCS(0))
}

func (c Config) resolve() (Config, error) {
	if c.InfidelitySamples < 0 || c.SensitivitySamples < 0 || c.Workers < 0 {
		return c, fmt.Errorf("faithfulness: sample counts %d, %d and workers %d must not be negative (0: the defaults)", c.InfidelitySamples, c.SensitivitySamples, c.Workers)
	}
	if !(c.Radius >= 0 && c.Radius <= 1) {
		return c, fmt.Errorf("faithfulness: radius %v must be in [0, 1] (0: the default)", c.Radius)
	}
	if c.InfidelitySamples == 0 {
		c.InfidelitySamples = DefaultInfidelitySamples
	}
	if c.SensitivitySamples == 0 {
		c.SensitivitySamples = DefaultSensitivitySamples
	}
	if c.Radius == 0 {
		c.Radius = DefaultRadius
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c, nil
}

// Metric is one faithfulness metric: a row of the ranking table.
type Metric struct {
	Name         string
	HigherBetter bool
}

// Metrics lists the metrics in table order (the package doc defines them).
var metricList = []Metric{
	{"comp-del", true}, {"comp-zero", true},
	{"suff-del", false}, {"suff-zero", false},
	{"morf-del", false}, {"morf-zero", false},
	{"lerf-del", true}, {"lerf-zero", true},
	{"ins-del", true}, {"ins-zero", true},
	{"infidelity", false}, {"max-sens", false},
}

// Metrics returns the list above, a new slice each call.
func Metrics() []Metric { return slices.Clone(metricList) }

// Table is the outcome of a Run on one network.
type Table struct {
	Net        string
	Inputs     int      // inputs given
	Applicable int      // inputs the ground truth applies to: every mean is over them
	Criteria   []string // the ground-truth criteria averaged
	Methods    []string
	// Truth is each method's mean over Criteria of the percentage of the
	// applicable inputs meeting it.
	Truth []float64
	// CriterionTruth[j][m] is the percentage of the applicable inputs on
	// which method m meets criterion j.
	CriterionTruth [][]float64
	// Means[k][m] is metric k's mean on method m over the applicable inputs.
	Means [][]float64
	// Tau[k] is Kendall's τ-b of metric k's ranking of the methods with
	// Truth's (NaN when either ranks every method equal).
	Tau []float64
	// Agree[k] is metric k's per-input agreement with the ground truth.
	Agree []Agreement
	// CriterionTau[k][j] is Kendall's τ-b of metric k's ranking with the
	// ranking by CriterionTruth[j].
	CriterionTau [][]float64
}

// perInput is one input's outcome.
type perInput struct {
	applies bool
	truth   []float64   // per method: the fraction of criteria met
	met     [][]bool    // [criterion][method]
	values  [][]float64 // [metric][method]
}

// Run computes every metric of every method on every input (strings of
// net's task) and compares each metric's ranking of the methods with the
// ground truth of package evaluate. The result is the same bits for every
// number of workers.
func Run(ctx context.Context, net *whitebox.Net, inputs []string, methods []Method, cfg Config) (*Table, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	if len(methods) == 0 {
		return nil, errors.New("faithfulness: no methods")
	}
	ev, err := evaluate.New(net)
	if err != nil {
		return nil, err
	}
	sym := make([][]int, len(inputs))
	for i, s := range inputs {
		if sym[i], err = net.Task.Encode(s); err != nil {
			return nil, fmt.Errorf("input %d: %w", i+1, err)
		}
	}
	var criteria []int
	for k, c := range ev.Criteria() {
		if c != "ablation-optimal" { // the optimum: met by every explanation
			criteria = append(criteria, k)
		}
	}
	out := make([]perInput, len(sym))
	var next atomic.Int64
	workers := min(cfg.Workers, max(len(sym), 1))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk := newWorker(net, ev, criteria, methods, cfg)
			for {
				i := int(next.Add(1)) - 1
				if i >= len(sym) {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[w] = err
					next.Store(int64(len(sym)))
					return
				}
				o, err := wk.input(ctx, i, sym[i])
				if err != nil {
					errs[w] = fmt.Errorf("input %d (%.40q): %w", i+1, inputs[i], err)
					next.Store(int64(len(sym)))
					return
				}
				out[i] = o
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	t := &Table{Net: net.Name, Inputs: len(sym)}
	for _, k := range criteria {
		t.Criteria = append(t.Criteria, ev.Criteria()[k])
	}
	for _, m := range methods {
		t.Methods = append(t.Methods, m.Name)
	}
	t.aggregate(out)
	if t.Applicable == 0 {
		return nil, fmt.Errorf("faithfulness: %s: none of the %d inputs has a ground truth to compare with", net.Name, len(sym))
	}
	return t, nil
}

// aggregate fills the means, τ and agreements, in input order.
func (t *Table) aggregate(out []perInput) {
	nm := len(t.Methods)
	t.Truth = make([]float64, nm)
	t.CriterionTruth = make([][]float64, len(t.Criteria))
	for j := range t.CriterionTruth {
		t.CriterionTruth[j] = make([]float64, nm)
	}
	t.Means = make([][]float64, len(metricList))
	t.Agree = make([]Agreement, len(metricList))
	for k := range t.Means {
		t.Means[k] = make([]float64, nm)
	}
	oriented := make([]float64, nm)
	for _, o := range out {
		if !o.applies {
			continue
		}
		t.Applicable++
		for m := range nm {
			t.Truth[m] += o.truth[m]
			for j := range t.Criteria {
				if o.met[j][m] {
					t.CriterionTruth[j][m]++
				}
			}
		}
		for k, mt := range metricList {
			for m := range nm {
				t.Means[k][m] += o.values[k][m]
				oriented[m] = orient(mt, o.values[k][m])
			}
			t.Agree[k].Add(o.truth, oriented)
		}
	}
	t.Tau = make([]float64, len(metricList))
	n := float64(t.Applicable)
	for m := range nm {
		t.Truth[m] *= 100 / n
		for j := range t.Criteria {
			t.CriterionTruth[j][m] *= 100 / n
		}
	}
	t.CriterionTau = make([][]float64, len(metricList))
	for k, mt := range metricList {
		for m := range nm {
			t.Means[k][m] /= n
			oriented[m] = orient(mt, t.Means[k][m])
		}
		t.Tau[k] = KendallTauB(t.Truth, oriented)
		for j := range t.Criteria {
			t.CriterionTau[k] = append(t.CriterionTau[k], KendallTauB(t.CriterionTruth[j], oriented))
		}
	}
}

func orient(m Metric, v float64) float64 {
	if m.HigherBetter {
		return v
	}
	return -v
}

// worker holds one goroutine's explainers and buffers.
type worker struct {
	net      *whitebox.Net
	ev       *evaluate.Evaluator
	criteria []int
	explain  []Explain
	cfg      Config
	run      *cell.Runner // the raw forward passes
	empty    []float64    // the logits of the empty input: the decoder's bias
}

func newWorker(net *whitebox.Net, ev *evaluate.Evaluator, criteria []int, methods []Method, cfg Config) *worker {
	run, _ := cell.NewRunner(net.Model) // an error for a nil model only: whitebox.New always builds one
	w := &worker{net: net, ev: ev, criteria: criteria, cfg: cfg, run: run,
		empty: net.Model.Params().By}
	for _, m := range methods {
		w.explain = append(w.explain, m.New(net.Model))
	}
	return w
}

// Softmax returns the probability of class c under logits y.
func Softmax(y []float64, c int) float64 {
	s := 0.0
	for _, v := range y {
		s += kernel.Exp(v - y[c]) // the same bits on every architecture
	}
	return 1 / s
}

// output returns the Output of the input symbols for class c, remembering
// every value it computed (the methods often remove the same tokens).
func (w *worker) output(symbols []int, c int) Output {
	memo := map[string]float64{}
	key := make([]byte, len(symbols)+1)
	buf := make([]int, 0, len(symbols))
	return func(keep []bool, r Removal) (float64, error) {
		key[0] = byte(r)
		for i, k := range keep {
			key[i+1] = 0
			if k {
				key[i+1] = 1
			}
		}
		if v, ok := memo[string(key)]; ok {
			return v, nil
		}
		buf = buf[:0]
		for i, k := range keep {
			switch {
			case k:
				buf = append(buf, symbols[i])
			case r == Zero:
				buf = append(buf, -1)
			}
		}
		y := w.empty // Delete of every token: h⁽⁰⁾ = 0, so ŷ = b_y
		if len(buf) > 0 {
			var err error
			if y, err = w.run.Forward(cell.OneHot(buf)); err != nil {
				return 0, err
			}
		}
		v := Softmax(y, c)
		memo[string(key)] = v
		return v, nil
	}
}

// perturbations draws input i's infidelity subsets (each position in with
// probability ½) and sensitivity noise (uniform in [−r, r] on every entry
// of the T×D one-hot matrix), the same for every method and worker count.
func (w *worker) perturbations(i int, symbols []int) (subsets [][]bool, noisy [][]float64) {
	rng := rand.New(rand.NewPCG(w.cfg.Seed, uint64(i)))
	t, d := len(symbols), w.net.Model.Input()
	for range w.cfg.InfidelitySamples {
		s := make([]bool, t)
		for p := range s {
			s[p] = rng.IntN(2) == 1
		}
		subsets = append(subsets, s)
	}
	for range w.cfg.SensitivitySamples {
		x := make([]float64, t*d)
		for p := range x {
			x[p] = w.cfg.Radius * float64(2*rng.Float64()-1)
		}
		for p, k := range symbols {
			x[p*d+k] += 1
		}
		noisy = append(noisy, x)
	}
	return subsets, noisy
}

// input computes everything of input i.
func (w *worker) input(ctx context.Context, i int, symbols []int) (perInput, error) {
	y, err := w.run.Forward(cell.OneHot(symbols))
	if err != nil {
		return perInput{}, err
	}
	c := cell.Predict(y)
	nm := len(w.explain)
	o := perInput{truth: make([]float64, nm), values: make([][]float64, len(metricList)), met: make([][]bool, len(w.criteria))}
	for j := range o.met {
		o.met[j] = make([]bool, nm)
	}
	for k := range o.values {
		o.values[k] = make([]float64, nm)
	}
	f := w.output(symbols, c)
	subsets, noisy := w.perturbations(i, symbols)
	for m, explain := range w.explain {
		scores, err := explain(ctx, cell.OneHot(symbols), c)
		if err != nil {
			return o, err
		}
		if len(scores) != len(symbols) {
			return o, fmt.Errorf("method %d gave %d scores for %d tokens", m+1, len(scores), len(symbols))
		}
		v, err := w.ev.Score(symbols, c, scores)
		if err != nil {
			return o, err
		}
		met, applies := 0, 0
		for j, k := range w.criteria {
			if v[k].Applies {
				applies++
				if v[k].Met {
					met++
					o.met[j][m] = true
				}
			}
		}
		if applies == 0 {
			return perInput{}, nil // no ground truth: the metrics are not needed
		}
		o.applies = true
		o.truth[m] = float64(met) / float64(applies)
		if err := w.metrics(ctx, o.values, m, scores, f, subsets, noisy, explain, c); err != nil {
			return o, err
		}
	}
	return o, nil
}

// metrics fills column m of values with every metric of one explanation.
func (w *worker) metrics(ctx context.Context, values [][]float64, m int, scores []float64, f Output,
	subsets [][]bool, noisy [][]float64, explain Explain, c int) error {
	k := 0
	put := func(v float64, err error) error {
		values[k][m] = v
		k++
		return err
	}
	for _, suff := range []bool{false, true} {
		for _, r := range removalList {
			if err := put(AOPC(scores, f, r, suff)); err != nil {
				return err
			}
		}
	}
	morf, lerf := MostRelevantFirst(scores), LeastRelevantFirst(scores)
	for _, curve := range []struct {
		order     []int
		insertion bool
	}{{morf, false}, {lerf, false}, {morf, true}} {
		for _, r := range removalList {
			if err := put(Curve(curve.order, f, r, curve.insertion)); err != nil {
				return err
			}
		}
	}
	if err := put(Infidelity(scores, f, subsets)); err != nil {
		return err
	}
	perturbed := make([][]float64, len(noisy))
	for j, x := range noisy {
		var err error
		if perturbed[j], err = explain(ctx, cell.Dense(x, len(scores)), c); err != nil {
			return err
		}
	}
	return put(MaxSensitivity(scores, perturbed))
}

// Package reproduce recomputes the four experiments of "Evaluating
// Attribution Methods using White-Box LSTMs" (Hao, 2020) — the heatmap
// table, the saturation sweep, the LRP saturation test and the ablation test
// — sets them beside the paper's published values and renders them for
// terminals, Markdown, HTML, LaTeX and JSON.
package reproduce

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/whitebox-lstm/whitebox/ablation"
	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/heatmap"
	"github.com/whitebox-lstm/whitebox/kernel"
	"github.com/whitebox-lstm/whitebox/record"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// Config chooses the data and the resources of a run. The zero Config
// reproduces the paper's tables as the command does by default: generated
// data with DefaultSeed (2020), 10 Random seeds, one worker per CPU.
type Config struct {
	// Seed seeds the generated data sets (Tables 4 and 5) and the Random
	// baseline (seeds Seed+1, Seed+2, …), as given, zero included (the
	// command gives an explicit -seed). Nil: DefaultSeed (2020), the seed
	// the published comparison uses.
	Seed *uint64
	// Table4Data is Table 4's data. Nil: 1000 strings generated with
	// Seed. Non-nil but empty is an error.
	Table4Data []Labeled
	// Table5Data is Table 5's data. Nil: 100 strings generated with Seed.
	// Non-nil but empty is an error.
	Table5Data []string
	// RandomSeeds is the number of seeds the Random baseline of Table 5
	// averages over. Zero: 10. Negative is an error.
	RandomSeeds int
	// Workers is the number of goroutines of Tables 4 and 5; results do
	// not depend on it. Zero: GOMAXPROCS. Negative is an error.
	Workers int
	// FSAFootnote also runs Table 5's FSA column with u = 0.5, as the
	// authors' released script did. False: only the paper's columns.
	FSAFootnote bool
	// Progress, if not nil, is called as work completes. Nil: no reports.
	Progress func(stage string, done, total int)

	seed uint64 // Seed or DefaultSeed (fill)
}

// fill puts the documented defaults in the place of zero fields and
// refuses values that have no meaning.
func (c *Config) fill() error {
	if c.RandomSeeds < 0 {
		return fmt.Errorf("reproduce: Config.RandomSeeds = %d must not be negative", c.RandomSeeds)
	}
	if c.Workers < 0 {
		return fmt.Errorf("reproduce: Config.Workers = %d must not be negative", c.Workers)
	}
	c.seed = DefaultSeed
	if c.Seed != nil {
		c.seed = *c.Seed
	}
	if c.RandomSeeds == 0 {
		c.RandomSeeds = 10
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return nil
}

func (c *Config) progress(stage string, done, total int) {
	if c.Progress != nil {
		c.Progress(stage, done, total)
	}
}

// Heatmap is one of Table 2's heatmaps: ours, and the paper's levels.
type Heatmap struct {
	Row    Table2Row
	Method attrib.Method
	Record record.Record
	Levels []int // our colormap levels
	Paper  []int // the paper's; nil for the methods the paper did not run (DeepLIFT, CD)
}

// MaxLevelDiff is the largest |our level − the paper's| over the tokens
// (0 for a heatmap the paper has none of).
func (h Heatmap) MaxLevelDiff() int {
	if h.Paper == nil {
		return 0
	}
	d := 0
	for i, l := range h.Levels {
		d = max(d, abs(l-h.Paper[i]))
	}
	return d
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Table2Methods are Table 2's columns: the paper's five methods, whose
// heatmaps are set beside its published levels, then DeepLIFT and
// contextual decomposition, the paper's future work, on the same inputs
// (no published levels). Tables 3 to 5 keep the paper's methods: they
// reproduce its published numbers.
var table2MethodList = attrib.AllMethods()

// Table2Methods returns the list above, a new slice each call.
func Table2Methods() []attrib.Method { return slices.Clone(table2MethodList) }

// Table2 computes the paper's 25 heatmap rows with every method of
// Table2Methods, row by row in its order.
func Table2(ctx context.Context) ([]Heatmap, error) {
	nets := map[string]*whitebox.Net{}
	var out []Heatmap
	for i, row := range table2RowList {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		net := nets[row.Net]
		if net == nil {
			var err error
			if net, err = whitebox.New(row.Net, whitebox.Config{}); err != nil {
				return nil, err
			}
			nets[row.Net] = net
		}
		for k, m := range table2MethodList {
			rec, err := attribute(net, m, row.Input, row.Class, attrib.DefaultOptions())
			if err != nil {
				return nil, fmt.Errorf("table 2 row %d: %w", row.Row, err)
			}
			rec.Row = row.Row
			levels := heatmap.Heatmap{Tokens: rec.Tokens, Scores: rec.Scores}.Levels()
			var paper []int
			if k < len(paperTable2[i]) {
				paper = paperTable2[i][k]
			}
			out = append(out, Heatmap{Row: row, Method: m, Record: rec, Levels: levels, Paper: paper})
		}
	}
	return out, nil
}

// attribute scores s with method m for the named class, as a record.
func attribute(net *whitebox.Net, m attrib.Method, s, class string, opt attrib.Options) (record.Record, error) {
	sym, err := net.Task.Encode(s)
	if err != nil {
		return record.Record{}, err
	}
	k, err := net.Task.Class(class)
	if err != nil {
		return record.Record{}, err
	}
	opt.Class = attrib.ClassIndex(k)
	res, err := attrib.Attribute(context.Background(), net.Model, m, cell.OneHot(sym), opt)
	if err != nil {
		return record.Record{}, err
	}
	classes := net.Task.Classes
	rec := record.Record{Net: net.Name, Method: m.String(), Input: s, Class: classes[res.Class.Int()],
		Prediction: classes[res.Prediction], Classes: classes, Logits: res.Logits, Scores: res.Scores}
	for _, k := range sym {
		rec.Tokens = append(rec.Tokens, net.Task.Alphabet[k])
	}
	if m == attrib.IntegratedGradients || m == attrib.DeepLIFT {
		d := res.Delta
		rec.Delta = &d
	}
	return rec, nil
}

// Table3Input is the input of the saturation sweep.
const Table3Input = "accb"

// Table3Methods are the gradient methods of the saturation sweep.
var table3MethodList = []attrib.Method{attrib.Saliency, attrib.GradientXInput, attrib.IntegratedGradients}

// Table3Methods returns the list above, a new slice each call.
func Table3Methods() []attrib.Method { return slices.Clone(table3MethodList) }

// Table3Row is one network of the saturation sweep.
type Table3Row struct {
	U, V, YTrue float64
	Scores      [3][]float64 // saliency, G×I, IG token scores for class True
	Levels      [3][]int
	Paper       [3][]int
	PaperV      float64
	PaperYTrue  float64
}

// Table3 runs the saturation sweep: sp-counter with u from 0.6 to 64 on accb.
func Table3(ctx context.Context) ([]Table3Row, error) {
	var out []Table3Row
	for _, p := range paperTable3 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		net, err := whitebox.New("sp-counter", whitebox.Config{U: new(p.U)})
		if err != nil {
			return nil, err
		}
		row := Table3Row{U: p.U, V: kernel.Tanh(p.U), Paper: p.Levels, PaperV: p.V, PaperYTrue: p.Y}
		for k, m := range table3MethodList {
			rec, err := attribute(net, m, Table3Input, "True", attrib.DefaultOptions())
			if err != nil {
				return nil, err
			}
			row.YTrue = rec.Logits[1]
			row.Scores[k] = rec.Scores
			row.Levels[k] = heatmap.Heatmap{Tokens: rec.Tokens, Scores: rec.Scores}.Levels()
		}
		out = append(out, row)
	}
	return out, nil
}

// Table4Row is one network of the LRP saturation test.
type Table4Row struct {
	M        int     `json:"m"`
	Sigma    float64 `json:"sigma"`         // σ(m)
	MeanC    float64 `json:"mean_c"`        // mean c⁽ᵗ⁾ at the first prefix with as many a's as b's
	Accuracy float64 `json:"accuracy"`      // percent of strings classified correctly
	Blank    float64 `json:"blank_percent"` // percent whose first token's LRP score (class True) is below 1e−5
}

// Table4 runs the LRP saturation test for m = 4 … 12.
func Table4(ctx context.Context, cfg Config) ([]Table4Row, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	data := cfg.Table4Data
	if data == nil {
		data, _ = GenerateTable4(whitebox.NewRand(cfg.seed), 1000) // no error: a generator and n ≥ 0
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("table 4: no data")
	}
	var out []Table4Row
	for m := 4; m <= 12; m++ {
		net, err := whitebox.New("counting", whitebox.Config{M: new(float64(m))})
		if err != nil {
			return nil, err
		}
		type result struct {
			correct, blank bool
			c              float64
		}
		results := make([]result, len(data))
		err = parallel(ctx, cfg.Workers, len(data), func() func(i int) error {
			r, _ := cell.NewRunner(net.Model) // an error for a nil model only
			var rel []float64
			h, c := make([]float64, net.Model.Hidden()), make([]float64, net.Model.Hidden())
			return func(i int) error {
				sym, err := net.Task.Encode(data[i].Input)
				if err != nil {
					return err
				}
				logits, err := r.Forward(cell.OneHot(sym))
				if err != nil {
					return err
				}
				results[i].correct = (cell.Predict(logits) == 1) == data[i].True
				rel = grow(rel, len(sym)*2)
				// The paper's LRP: the model's rule is cell.LRPHao.
				if _, err := r.LRP(cell.OneHot(sym), 1, cell.DefaultEpsilon, 0, rel); err != nil {
					return err
				}
				results[i].blank = math.Abs(rel[0]+rel[1]) < heatmap.BlankThreshold
				if z := zeroPoint(sym); z >= 0 {
					if _, err := r.Forward(cell.OneHot(sym[:z+1])); err != nil {
						return err
					}
					if err := r.Final(h, c); err != nil {
						return err
					}
					results[i].c = c[0]
				}
				return nil
			}
		}, func(done int) { cfg.progress(fmt.Sprintf("table 4, m = %d", m), done, len(data)) })
		if err != nil {
			return nil, err
		}
		row := Table4Row{M: m, Sigma: kernel.Sigmoid(float64(m))}
		var correct, blank int
		for _, r := range results {
			row.MeanC += r.c
			if r.correct {
				correct++
			}
			if r.blank {
				blank++
			}
		}
		n := float64(len(data))
		row.MeanC /= n
		row.Accuracy = 100 * float64(correct) / n
		row.Blank = 100 * float64(blank) / n
		out = append(out, row)
	}
	return out, nil
}

// zeroPoint returns the index of the end of the first non-empty prefix with
// as many a's (0) as b's (1), or −1.
func zeroPoint(sym []int) int {
	balance := 0
	for i, k := range sym {
		balance += 1 - 2*k
		if balance == 0 {
			return i
		}
	}
	return -1
}

// Table5Row is one method of the ablation test: the mean and population
// standard deviation of the percentage of each string deleted.
type Table5Row struct {
	Method      string  `json:"method"`
	CounterMean float64 `json:"sp_counter_mean"`
	CounterStd  float64 `json:"sp_counter_std"`
	FSAMean     float64 `json:"sp_fsa_mean"`
	FSAStd      float64 `json:"sp_fsa_std"`
}

// Table5Result is the ablation test, plus the FSA column with the authors'
// script's u = 0.5 when asked for.
type Table5Result struct {
	Rows     []Table5Row
	Footnote []Table5Row // FSA with u = 0.5 in the FSA fields (nil unless Config.FSAFootnote)
	Strings  int
}

// Table5 runs the ablation test on both SP networks.
func Table5(ctx context.Context, cfg Config) (*Table5Result, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	data := cfg.Table5Data
	if data == nil {
		data, _ = GenerateTable5(whitebox.NewRand(cfg.seed), 100) // no error: a generator and n ≥ 0
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("table 5: no data")
	}
	task := whitebox.SPTask()
	symbols := make([][]int, len(data))
	for i, s := range data {
		var err error
		if symbols[i], err = task.Encode(s); err != nil {
			return nil, fmt.Errorf("table 5: %w", err)
		}
	}
	stop := ablation.Stop{DFA: whitebox.SPAutomaton(), Class: 0}
	columns := []whitebox.Config{{}, {}}
	names := []string{"sp-counter", "sp-fsa"}
	if cfg.FSAFootnote {
		names = append(names, "sp-fsa")
		columns = append(columns, whitebox.Config{U: new(0.5), Unchecked: true}) // it does not simulate the automaton: that is the footnote's point
	}
	percent := make([][][]float64, len(names)) // [column][method][string]
	for col, name := range names {
		var err error
		if percent[col], err = table5Column(ctx, cfg, name, columns[col], stop, symbols); err != nil {
			return nil, err
		}
	}
	res := &Table5Result{Strings: len(data)}
	for m, method := range attrib.Methods() {
		c, cs := meanStd(percent[0][m])
		f, fs := meanStd(percent[1][m])
		res.Rows = append(res.Rows, Table5Row{method.String(), c, cs, f, fs})
		if cfg.FSAFootnote {
			f, fs := meanStd(percent[2][m])
			res.Footnote = append(res.Footnote, Table5Row{Method: method.String(), FSAMean: f, FSAStd: fs})
		}
	}
	rm, rs, err := table5Random(cfg, stop, symbols)
	if err != nil {
		return nil, err
	}
	res.Rows = append(res.Rows, Table5Row{"random", rm, rs, rm, rs})
	om, os, err := table5Optimal(stop, symbols)
	if err != nil {
		return nil, err
	}
	res.Rows = append(res.Rows, Table5Row{"optimal", om, os, om, os})
	return res, nil
}

// table5Column runs the ablation test of every method on the network name
// (with cfg): for each method, the percentage of each string's symbols
// removed before the prediction changes.
func table5Column(ctx context.Context, cfg Config, name string, netCfg whitebox.Config, stop ablation.Stop, symbols [][]int) ([][]float64, error) {
	net, err := whitebox.New(name, netCfg)
	if err != nil {
		return nil, err
	}
	percent := make([][]float64, len(attrib.Methods()))
	for m := range attrib.Methods() {
		percent[m] = make([]float64, len(symbols))
	}
	stage := fmt.Sprintf("table 5, %s", name)
	if netCfg.U != nil {
		stage += fmt.Sprintf(" (u = %g)", *netCfg.U)
	}
	jobs := len(attrib.Methods()) * len(symbols)
	err = parallel(ctx, cfg.Workers, jobs, func() func(j int) error {
		evals := make([]*ablation.Evaluator, len(attrib.Methods()))
		return func(j int) error {
			m, i := j/len(symbols), j%len(symbols)
			if evals[m] == nil {
				var err error
				if evals[m], err = ablation.New(net.Model, attrib.Methods()[m], attrib.DefaultOptions(), stop); err != nil {
					return err
				}
			}
			n, err := evals[m].Run(ctx, symbols[i])
			percent[m][i] = 100 * float64(n) / float64(len(symbols[i]))
			return err
		}
	}, func(done int) { cfg.progress(stage, done, jobs) })
	return percent, err
}

// table5Random is the random baseline: the mean over cfg.RandomSeeds seeds
// of each seed's mean and deviation of the percentage removed.
func table5Random(cfg Config, stop ablation.Stop, symbols [][]int) (mean, std float64, err error) {
	for seed := range cfg.RandomSeeds {
		rng := whitebox.NewRand(cfg.seed + 1 + uint64(seed))
		p := make([]float64, len(symbols))
		for i, s := range symbols {
			n, err := ablation.Random(rng, stop, s)
			if err != nil {
				return 0, 0, fmt.Errorf("table 5: %w", err)
			}
			p[i] = 100 * float64(n) / float64(len(s))
		}
		m, s := meanStd(p)
		mean += m / float64(cfg.RandomSeeds)
		std += s / float64(cfg.RandomSeeds)
	}
	return mean, std, nil
}

// table5Optimal is the optimum by dynamic programming: the mean and
// deviation of the fewest symbols' percentage whose removal flips the
// prediction.
func table5Optimal(stop ablation.Stop, symbols [][]int) (mean, std float64, err error) {
	opt := make([]float64, len(symbols))
	for i, s := range symbols {
		n, err := ablation.Optimal(stop, s)
		if err != nil {
			return 0, 0, fmt.Errorf("table 5: %w", err)
		}
		opt[i] = 100 * float64(n) / float64(len(s))
	}
	mean, std = meanStd(opt)
	return mean, std, nil
}

// meanStd returns the mean and the population standard deviation.
func meanStd(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += float64((x - mean) * (x - mean)) // no FMA: the same digits on every CPU
	}
	return mean, math.Sqrt(std / float64(len(v)))
}

// parallel runs job(i) for i in [0, n) on workers goroutines, each with the
// state newWorker makes, and reports progress. Jobs write their own results,
// so the outcome does not depend on the number of workers.
func parallel(ctx context.Context, workers, n int, newWorker func() func(i int) error, progress func(done int)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		next     int
		done     int
		firstErr error
		wg       sync.WaitGroup
	)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job := newWorker()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n || ctx.Err() != nil {
					return
				}
				err := job(i)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				done++
				if progress != nil {
					progress(done)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

func grow(v []float64, n int) []float64 {
	if cap(v) < n {
		return make([]float64, n)
	}
	return v[:n]
}

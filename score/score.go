// Package score is the per-input work of `whitebox attribute`: a Config
// that mirrors its flags, and a Scorer that turns one input line into the
// JSON line the command writes (package record), byte for byte. The command
// and the Beam pipeline (module github.com/whitebox-lstm/whitebox/beam)
// both use it, so that there is one implementation.
//
//	cfg := score.DefaultConfig()
//	cfg.Net, cfg.Method = "sp-counter", "ig"
//	s, err := score.New(cfg)
//	var b bytes.Buffer
//	err = s.Line(ctx, "accb", &b) // {"net":"sp-counter","method":"ig","input":"accb",…}\n
//
// A Scorer is for one goroutine at a time; Clone gives another one that
// shares the read-only classifier.
package score

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/corpus"
	"github.com/whitebox-lstm/whitebox/onnx"
	"github.com/whitebox-lstm/whitebox/record"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// Config is what `whitebox attribute` reads from its flags, one field per
// flag (the flag's name is in each comment) except -format, which is the
// command's. The zero values of the numbers are not the flags' defaults:
// start from DefaultConfig. A Config is plain data (it encodes to JSON), so
// that a pipeline can ship it to its workers.
type Config struct {
	Net    string  // -net: a white-box network (whitebox.Names()); exactly one of Net and Model
	M      float64 // -m: the gate saturation constant
	U      float64 // -u: the counter scale (0: the network's default unless Set["u"])
	K      int     // -k: the bracket network's stack size (0: the default unless Set["k"])
	Method string  // -method: occlusion, saliency, gxi, ig, lrp, deeplift or cd
	Class  string  // -class: the relevance class by name or index ("": the predicted class), or AllClasses
	Span   string  // -span: with -method cd, also score the tokens i…j ("i:j", ParseSpan; "": none)

	Steps      string  // -steps: IG's quadrature steps, or "auto"
	Tol        float64 // -tol: IG's completeness gap allowed, relative
	MaxSteps   int     // -max-steps: the largest rule of -steps auto
	Quadrature string  // -quadrature: IG's rule
	Eps        float64 // -eps: LRP's stabilizer ε ≥ 0
	Budget     string  // -budget: scratch memory shared by Workers Scorers (e.g. 256MiB)

	Model     string // -model: an imported model's file
	Embedding string // -embedding: the embedding's name in the file
	LSTM      string // -lstm: the LSTM's name in the file
	Decoder   string // -decoder: the decoder's name in the file
	Attention string // -attention: the attention head's scoring layers' name in the file
	Vocab     string // -vocab: a file of one token per line
	Unk       string // -unk: the -vocab token of unknown words
	Classes   string // -classes: a file of class names
	Head      string // -head: hn, hn-bf, last, mean, max, or auto with Verify ("": the file's metadata, else hn)
	Act       string // -act: relu or tanh, for a classifier of two Linear layers ("": the file's metadata)
	Verify    string // -verify: a file of JSON lines {"ids", "logits"} recorded from the user's model
	Baseline  string // -baseline: zero (or "" when not given) or id:N, the embedding row of token N (IG, occlusion and DeepLIFT)
	Pad       string // -pad: the padding token id whose trailing run is removed, or none ("": the file's metadata, else none)
	// ModelName is the name of the model in the records ("model"); the
	// default is Model. A program that reads the model from a local copy
	// sets it to the name the user gave.
	ModelName string
	Features  bool    // -features: write the per-dimension scores
	LRPBias   float64 // -lrp-bias: Arras et al.'s bias_factor in [0, 1]
	// CaptumWeights (-captum-weights) rounds IG's weights to float32; it is
	// turned on for a Model unless Set["captum-weights"].
	CaptumWeights bool

	// Workers is the number of Scorers that work at once and share
	// Budget: each gets Budget/Workers (0: GOMAXPROCS), half for the
	// engine (its trace, IG's and occlusion's batches) and half for the
	// input's own memory (its rows, scores and output), so that the
	// budget bounds the whole; it decides which inputs are too long, the
	// scores never depend on it.
	Workers int
	// Set names the flags given explicitly, as flag.FlagSet.Visit reports
	// them: an explicit -m, -u or -k of 0 is refused rather than replaced
	// by the default, as is an explicit empty string (-head ""), flags of
	// the other kind of classifier are refused, and an explicit
	// -captum-weights is kept for a model.
	Set map[string]bool
}

// DefaultConfig is a Config with the flags' defaults; Net or Model and
// Method remain to be set.
func DefaultConfig() Config {
	return Config{M: whitebox.DefaultM, Steps: strconv.Itoa(attrib.DefaultSteps), Tol: attrib.DefaultTolerance,
		MaxSteps: attrib.DefaultMaxAutoSteps, Quadrature: attrib.GaussLegendre.String(), Eps: attrib.DefaultEpsilon,
		Budget: "256MiB"}
}

// RegisterFlags defines attribute's flags on fs, each with prefix before
// its name, writing into c (whose values are the defaults shown). After
// fs.Parse, c.MarkSet(fs, prefix) records which were given.
func (c *Config) RegisterFlags(fs *flag.FlagSet, prefix string) {
	p := func(name string) string { return prefix + name }
	fs.StringVar(&c.Net, p("net"), c.Net, "the network: "+strings.Join(whitebox.Names(), ", "))
	fs.StringVar(&c.Method, p("method"), c.Method, "the attribution method: occlusion, saliency, gxi, ig, lrp, deeplift (against -baseline), cd (contextual decomposition)")
	fs.StringVar(&c.Span, p("span"), c.Span, "cd: also score the tokens i through j as one span, i:j (positions from 0, both included, as the authors' CD(start, stop)); the records say \"span\":{\"start\":i,\"stop\":j,\"score\":…}")
	fs.StringVar(&c.Class, p("class"), c.Class, "the relevance class, by name or by index from 0 (default: the predicted class), or all: every class from one forward pass per input, the same numbers as one run per class (JSON: \"classes\" names them, \"scores\" and \"delta\" have one entry per class; text, html and latex: one heatmap per class; a class named all is then chosen by its index)")
	fs.Float64Var(&c.M, p("m"), c.M, fmt.Sprintf("the gate saturation constant m (with the defaults, bracket is exact in float64 up to depth %d and counting, sp-counter and sp-fsa were checked on strings up to length %d; each record says whether its prediction is \"correct\")", whitebox.BracketExactDepth, whitebox.CheckedLength))
	fs.Float64Var(&c.U, p("u"), c.U, "the counter scale u (default: counting 0.5, sp-counter 0.7, sp-fsa 1)")
	fs.IntVar(&c.K, p("k"), c.K, fmt.Sprintf("the bracket network's stack size (default %d): deeper prefixes are refused; with k = %d and the default -m it is exact in float64 up to depth %d (a larger k, sooner: from depth 4 at k = 100), and a deeper prefix's record says \"correct\":false", whitebox.DefaultStackSize, whitebox.DefaultStackSize, whitebox.BracketExactDepth))
	fs.StringVar(&c.Steps, p("steps"), c.Steps, "IG: the number of quadrature steps, or auto: the smallest Gauss–Legendre rule (8, 16, 32, …) whose completeness gap is within -"+p("tol"))
	fs.Float64Var(&c.Tol, p("tol"), c.Tol, "IG: the completeness gap allowed, relative to |ŷ_c(x) − ŷ_c(0)|; a larger gap is a warning on standard error")
	fs.IntVar(&c.MaxSteps, p("max-steps"), c.MaxSteps, "IG with -"+p("steps")+" auto: the largest rule tried")
	fs.StringVar(&c.Quadrature, p("quadrature"), c.Quadrature, "IG: gauss-legendre, riemann-left, riemann-right, riemann-middle or riemann-trapezoid")
	fs.Float64Var(&c.Eps, p("eps"), c.Eps, "LRP: the stabilizer ε ≥ 0 (0: none; a zero denominator is then an error)")
	fs.StringVar(&c.Budget, p("budget"), c.Budget, "memory of every method (e.g. 16MiB, 1GiB): the process stays within it plus 64 MiB, refusing an input that needs more; results do not depend on it")
	fs.StringVar(&c.Model, p("model"), c.Model, "an imported model: a PyTorch state_dict (torch.save), .safetensors or ONNX export (.onnx) of Embedding → LSTM → Linear")
	fs.StringVar(&c.Embedding, p("embedding"), c.Embedding, "-"+p("model")+": the embedding's name in the file (default: detected; none: the model reads features)")
	fs.StringVar(&c.LSTM, p("lstm"), c.LSTM, "-"+p("model")+": the LSTM's name in the file (default: detected)")
	fs.StringVar(&c.Decoder, p("decoder"), c.Decoder, "-"+p("model")+": the decoder's name in the file (default: detected)")
	fs.StringVar(&c.Attention, p("attention"), c.Attention, "-"+p("model")+": the attention head's scoring layers' name in the file (default: detected by name: attention, attn, att)")
	fs.StringVar(&c.Vocab, p("vocab"), c.Vocab, "-"+p("model")+": a file of one token per line (id = line number from 0); inputs are then words")
	fs.StringVar(&c.Unk, p("unk"), c.Unk, "-"+p("model")+": the -"+p("vocab")+" token that stands for unknown words (default: an unknown word is an error)")
	fs.StringVar(&c.Classes, p("classes"), c.Classes, "-"+p("model")+": a file of one class name per line, in logit order (default: 0, 1, ...)")
	fs.StringVar(&c.Head, p("head"), c.Head, "-"+p("model")+": how the LSTM's outputs reach the classifier: hn (h_n), hn-bf (h_n, backward first), last (output[:, -1]), mean, max, or auto with -"+p("verify")+" (default: the file's metadata, else hn)")
	fs.StringVar(&c.Act, p("act"), c.Act, "-"+p("model")+": the activation between a classifier's two Linear layers: relu or tanh")
	fs.StringVar(&c.Verify, p("verify"), c.Verify, "-"+p("model")+": a file of JSON lines {\"ids\": [...], \"logits\": [...]} from your own model: its logits must match (relative 1e-4), or the run stops naming the head that matches")
	fs.StringVar(&c.Baseline, p("baseline"), c.Baseline, "-"+p("model")+", IG, occlusion and DeepLIFT: the baseline (DeepLIFT's reference) row at every position: zero (the zero embedding) or id:N (the embedding row of token N, as Captum's LayerIntegratedGradients with baselines=N; its default is id:0)")
	fs.StringVar(&c.Pad, p("pad"), c.Pad, "-"+p("model")+": the padding token id: an input's trailing pad tokens are removed, as pack_padded_sequence removes them, and the records say \"padding\": their number (their scores are 0); a pad inside an input is a warning; none: no padding (default: the file's metadata whitebox.pad, else none)")
	fs.BoolVar(&c.Features, p("features"), c.Features, "-"+p("model")+": also write the per-dimension scores (\"features\": T lists of E)")
	fs.Float64Var(&c.LRPBias, p("lrp-bias"), c.LRPBias, "-"+p("model")+", LRP: Arras et al.'s bias_factor in [0, 1] (0: bias and stabilizer absorb their share; 1: relevance is conserved)")
	fs.BoolVar(&c.CaptumWeights, p("captum-weights"), c.CaptumWeights, "IG: round the quadrature weights to float32 as Captum does, for Captum's numbers to the last digit (default: true with -"+p("model")+", false with -"+p("net")+")")
}

// MarkSet records in c.Set the flags of RegisterFlags (same prefix) that
// fs.Parse saw, without their prefix.
func (c *Config) MarkSet(fs *flag.FlagSet, prefix string) {
	if c.Set == nil {
		c.Set = map[string]bool{}
	}
	fs.Visit(func(fl *flag.Flag) {
		if name, ok := strings.CutPrefix(fl.Name, prefix); ok {
			c.Set[name] = true
		}
	})
}

// shared is what the Scorers of one New share: read-only once built.
type shared struct {
	cfg    Config
	subj   subject
	method attrib.Method
	opt    attrib.Options // Budget: one Scorer's share
	all    bool           // -class all: every class (Options.Class unused)
	// inputBytes bounds the memory of one input: its row, scores, output.
	inputBytes int64
	// budgetShare says how an input's share of -budget (opt.Budget)
	// comes from the flag, for the errors that name it (budgetHint).
	budgetShare string
	// pool runs every Scorer's calls: the cores of the process and the
	// budget's half for the engine, shared by all Scorers; sizer is an
	// Explainer of the model that runs nothing (AllBytes).
	pool  *attrib.Pool
	sizer *attrib.Explainer
	// allOutput is what every class adds to an input's output with
	// -class all besides its scores: its logit, delta and steps, its
	// place in the record's lists, its name (twice in JSON, and a text
	// line names the predicted class).
	allOutput float64
}

// A Scorer scores inputs with its own buffers: one goroutine at a time.
type Scorer struct {
	*shared
	res   attrib.Result
	multi attrib.MultiResult // -class all
	opt   attrib.Options
	// truth is the task's true class of the last input, −1 when the
	// classifier does not know it.
	truth int
	// padWarn is the last input's warning about its pads (PadWarning).
	padWarn string
	// attn is the last input's attention weights (attention.go).
	attn attnState
}

// MinBudget is the least Budget per Scorer: an engine's smallest batch of
// a short input (half) and its output (half).
const MinBudget = 512 << 10

// New checks cfg as `whitebox attribute` checks its flags (the errors are
// its messages) and loads the classifier: Load, then Classifier.Scorer.
func New(cfg Config) (*Scorer, error) {
	c, err := Load(cfg)
	if err != nil {
		return nil, err
	}
	return c.Scorer(cfg, nil)
}

// A Classifier is a classifier loaded once (-net, or -model and its
// flags), from which Scorers of any scoring options are made (Scorer),
// as a server makes one per request: the model is read and -verify runs
// once. It is read-only, for any number of goroutines.
type Classifier struct {
	cfg  Config // the loading flags (and the rest of the Config given to Load)
	subj subject
	// sizer is an Explainer of the model that runs nothing (AllBytes).
	sizer *attrib.Explainer
}

// Load checks the classifier's flags of cfg (-net or -model and theirs,
// -budget), as `whitebox attribute` checks them, and loads the
// classifier. The scoring flags (-method, -class, -steps, …) are
// checked by Scorer.
func Load(cfg Config) (*Classifier, error) {
	f := cfg
	set := func(name string) bool { return f.Set[name] }
	for _, fl := range f.stringFlags() {
		if set(fl[0]) && fl[1] == "" { // given, and empty: not the default
			return nil, EmptyValue(fl[0], ValueHint(fl[0]))
		}
	}
	if (f.Net == "") == (f.Model == "") || f.Method == "" {
		return nil, errors.New("-method and one of -net and -model are required (see whitebox help attribute)")
	}
	budget, err := ParseSize(f.Budget)
	if err != nil {
		return nil, fmt.Errorf("-budget: %v", err)
	}
	if err := checkBudget("-budget", f.Budget, budget); err != nil {
		return nil, err
	}
	if least := MinBudget * int64(runtime.GOMAXPROCS(0)); budget < least {
		return nil, fmt.Errorf("-budget %s is less than %d bytes (%d per core): too little to score anything", f.Budget, least, MinBudget)
	}
	var subj subject
	if f.Net != "" {
		if err := otherKind(f, true); err != nil {
			return nil, err
		}
		// An explicit zero is refused by the network, never replaced by
		// the default.
		wc := NetConfig(f.M, f.U, f.K, set)
		net, err := whitebox.New(f.Net, wc)
		if err != nil {
			return nil, withFlags(err)
		}
		subj = whiteboxSubject{net}
	} else {
		if err := otherKind(f, false); err != nil {
			return nil, err
		}
		mf := modelFlags{path: f.Model, name: f.ModelName, embedding: f.Embedding, lstm: f.LSTM, decoder: f.Decoder, attention: f.Attention,
			vocab: f.Vocab, unk: f.Unk, classes: f.Classes, head: f.Head, act: f.Act, pad: f.Pad, verify: f.Verify, budget: budget}
		if subj, err = newModelSubject(mf); err != nil {
			return nil, withFlags(err)
		}
	}
	c := &Classifier{cfg: cfg, subj: subj}
	if c.sizer, err = attrib.NewExplainer(subj.model()); err != nil {
		return nil, err
	}
	return c, nil
}

// otherKind refuses the flags of the other kind of classifier: those of
// -model with -net (net), those of -net with -model.
func otherKind(f Config, net bool) error {
	if net {
		for _, name := range []string{"embedding", "lstm", "decoder", "attention", "vocab", "unk", "classes", "features", "lrp-bias", "head", "act", "verify", "baseline", "pad"} {
			if f.Set[name] {
				return fmt.Errorf("-%s applies to -model only", name)
			}
		}
		return nil
	}
	for _, name := range []string{"m", "u", "k"} {
		if f.Set[name] {
			return fmt.Errorf("-%s applies to -net only", name)
		}
	}
	return nil
}

// Scorer returns a Scorer of the classifier with the scoring options of
// cfg: -method, -class, -span, -steps, -tol, -max-steps, -quadrature,
// -eps, -lrp-bias, -baseline, -features, -captum-weights, and its Set
// for them. The classifier's flags, -budget and Workers are the
// Classifier's (Load's Config), whatever cfg says. The errors are
// attribute's messages.
//
// pool, when not nil, runs the Scorer's calls: one pool shared by the
// Scorers of every Classifier (a server's), so that one set of cores and
// one budget bound them all. Each call asks it for the Scorer's share of
// -budget (-budget / Workers / 2), so its PoolOptions.Budget must be at
// least that (-budget / 2 runs Workers calls at once). nil: a pool of
// the Scorer's own (-budget / 2 on every core), shared by its Clones.
func (c *Classifier) Scorer(cfg Config, pool *attrib.Pool) (*Scorer, error) {
	f := c.cfg
	f.Method, f.Class, f.Span = cfg.Method, cfg.Class, cfg.Span
	f.Steps, f.Tol, f.MaxSteps, f.Quadrature, f.Eps = cfg.Steps, cfg.Tol, cfg.MaxSteps, cfg.Quadrature, cfg.Eps
	f.LRPBias, f.Baseline, f.Features, f.CaptumWeights = cfg.LRPBias, cfg.Baseline, cfg.Features, cfg.CaptumWeights
	if len(cfg.Set) > 0 {
		set := make(map[string]bool, len(c.cfg.Set)+len(cfg.Set))
		for k, v := range c.cfg.Set {
			set[k] = v
		}
		for k, v := range cfg.Set {
			set[k] = v
		}
		f.Set = set
	}
	for _, fl := range f.stringFlags() {
		if f.Set[fl[0]] && fl[1] == "" {
			return nil, EmptyValue(fl[0], ValueHint(fl[0]))
		}
	}
	if f.Method == "" {
		return nil, errors.New("-method and one of -net and -model are required (see whitebox help attribute)")
	}
	_, isNet := c.subj.(whiteboxSubject)
	if err := otherKind(f, isNet); err != nil {
		return nil, err
	}
	if !isNet && !f.Set["captum-weights"] {
		f.CaptumWeights = true
	}
	subj := c.subj
	budget, err := ParseSize(f.Budget)
	if err != nil {
		return nil, fmt.Errorf("-budget: %v", err)
	}
	workers := f.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if !(f.LRPBias >= 0 && f.LRPBias <= 1) {
		return nil, fmt.Errorf("-lrp-bias %v must be in [0, 1]", f.LRPBias)
	}
	method, err := attrib.ParseMethod(f.Method)
	if err != nil {
		return nil, err
	}
	q, err := attrib.ParseQuadrature(f.Quadrature)
	if err != nil {
		return nil, err
	}
	steps := attrib.AutoSteps
	if f.Steps != "auto" {
		if steps, err = strconv.Atoi(f.Steps); err != nil || steps < 1 || steps > attrib.MaxSteps {
			return nil, fmt.Errorf("-steps %s must be auto or in 1..%d", f.Steps, attrib.MaxSteps)
		}
	}
	if !(f.Eps >= 0 && f.Eps <= cell.MaxEpsilon) {
		return nil, fmt.Errorf("-eps %v must be in [0, %g]", f.Eps, cell.MaxEpsilon)
	}
	if !(f.Tol > 0 && f.Tol <= 1) {
		return nil, fmt.Errorf("-tol %v must be in (0, 1]", f.Tol)
	}
	if f.MaxSteps < 8 || f.MaxSteps > attrib.MaxSteps {
		return nil, fmt.Errorf("-max-steps %d must be in 8..%d", f.MaxSteps, attrib.MaxSteps)
	}
	opt := attrib.Options{Steps: steps, Tolerance: f.Tol, MaxAutoSteps: f.MaxSteps, Quadrature: q, Epsilon: new(f.Eps),
		LRPBias: f.LRPBias, Float32Weights: f.CaptumWeights, Budget: budget / int64(workers) / 2,
		Workers: max(1, runtime.GOMAXPROCS(0)/workers)} // a Scorer's share of the cores: one input alone gets them all
	k, all, err := parseClass(f.Class, subj)
	if err != nil {
		return nil, err
	}
	if k >= 0 {
		opt.Class = attrib.ClassIndex(k)
	}
	if opt.Baseline, err = baselineRow(f.Baseline, subj, method); err != nil {
		return nil, err
	}
	if st, ok := subj.model().(*cell.Model); ok && method == attrib.ContextualDecomposition {
		if err := cell.CDSupported(st); err != nil {
			return nil, err // a usage error: no input of this model can be scored
		}
	}
	if f.Span != "" {
		if method != attrib.ContextualDecomposition {
			return nil, fmt.Errorf("-span is for -method cd, not %v", method)
		}
		sp, err := ParseSpan(f.Span)
		if err != nil {
			return nil, err
		}
		opt.Span = &sp
	}
	sh := &shared{cfg: f, subj: subj, method: method, opt: opt, all: all, inputBytes: opt.Budget,
		budgetShare: fmt.Sprintf("-budget %s / %d worker(s) / 2 = %d bytes", f.Budget, workers, opt.Budget)}
	if all {
		longest := 0
		for _, name := range subj.classes() {
			longest = max(longest, len(name))
			sh.allOutput += 256 + 2*float64(len(name))
		}
		sh.allOutput += float64(longest) * float64(len(subj.classes()))
	}
	// Each Scorer's call asks for its share (opt.Budget, explicit), so
	// that the memory of an input does not depend on the others running.
	sh.sizer = c.sizer
	if pool != nil {
		if st := pool.Stats(); st.Budget < opt.Budget {
			return nil, fmt.Errorf("score: the pool's budget, %d bytes, is less than one input's share of -budget (%s)", st.Budget, sh.budgetShare)
		}
		sh.pool = pool
		return sh.scorer(), nil
	}
	sh.pool, err = attrib.NewPool(attrib.PoolOptions{Workers: runtime.GOMAXPROCS(0), Budget: opt.Budget * int64(workers)})
	if err != nil {
		return nil, err
	}
	return sh.scorer(), nil
}

// scorer returns a new Scorer of sh.
func (sh *shared) scorer() *Scorer {
	return &Scorer{shared: sh, opt: sh.opt, truth: -1}
}

// Clone returns a Scorer for another goroutine: the same classifier and
// options, its own buffers.
func (s *Scorer) Clone() *Scorer { return s.shared.scorer() }

// Config is the Config the Scorer was built from, with the defaults that
// New filled in (CaptumWeights for a model).
func (s *Scorer) Config() Config { return s.cfg }

// Method is the attribution method.
func (s *Scorer) Method() attrib.Method { return s.method }

// Span is the span -span scores (cd), or nil.
func (s *Scorer) Span() *attrib.Span { return s.opt.Span }

// Classes are the class names, in logit order.
func (s *Scorer) Classes() []string { return s.subj.classes() }

// Note is what the user should be told once per run, or "": that the
// model's head was assumed (no -head, no metadata, no -verify).
func (s *Scorer) Note() string { return s.subj.note() }

// Label names the classifier in titles: the network, or the model file's
// base name.
func (s *Scorer) Label() string { return s.subj.label() }

// InputBytes is the most memory one input may use (its rows, scores and
// output): half of the Scorer's share of the budget.
func (s *Scorer) InputBytes() int64 { return s.inputBytes }

// SetProgress sets the progress callback of the next inputs (nil: none).
func (s *Scorer) SetProgress(fn func(done, total int)) { s.opt.Progress = fn }

// SetPlan sets the callback told the schedule IG or occlusion chose for
// each of the next inputs (attrib.Options.Plan; nil: none).
func (s *Scorer) SetPlan(fn func(cell.Plan)) { s.opt.Plan = fn }

// Borrow lets the Scorer's next inputs run on the cores of n more
// Scorers, which have nothing to do (corpus.Lent; 0: its own share), and
// use their shares of the budget as far as the pool has them free
// (attrib.Options.Spare): one input alone on two cores plans with the
// memory it has on one. Whether an input is refused stays decided by the
// Scorer's own share; results do not depend on it.
func (s *Scorer) Borrow(n int) {
	n = max(0, n)
	s.opt.Workers = min(s.shared.opt.Workers*(1+n), s.pool.Stats().Workers) // at most the pool's cores
	s.opt.Spare = s.shared.opt.Budget * int64(n)
}

// Score attributes one input. It returns the token labels and the result,
// both valid until the next call; a bad input is an error, never a panic.
// With -class all it returns an error: use ScoreAll.
func (s *Scorer) Score(ctx context.Context, input string) ([]string, *attrib.Result, error) {
	if s.all {
		return nil, nil, errors.New("score: -class all: use ScoreAll")
	}
	x, tokens, err := s.parse(input)
	if err != nil {
		return nil, nil, err
	}
	if err := s.pool.Attribute(ctx, s.subj.model(), s.method, x, s.opt, &s.res); err != nil {
		return nil, nil, s.budgetHint(err)
	}
	if err := s.check(input, x, s.res.Logits); err != nil {
		return nil, nil, err
	}
	if err := s.attention(x, len(tokens)); err != nil {
		return nil, nil, err
	}
	s.pads(&s.res, len(tokens))
	if k, ok := s.subj.truth(x); ok {
		s.truth = k
	}
	return tokens, &s.res, nil
}

// ScoreAll attributes one input for every class (-class all, AllClasses):
// the token labels and one result per class, in class order, both valid
// until the next call. Without -class all it returns an error: use Score.
func (s *Scorer) ScoreAll(ctx context.Context, input string) ([]string, *attrib.MultiResult, error) {
	if !s.all {
		return nil, nil, errors.New("score: ScoreAll needs -class all")
	}
	x, tokens, err := s.parse(input)
	if err != nil {
		return nil, nil, err
	}
	if err := s.pool.AttributeAll(ctx, s.subj.model(), s.method, x, s.opt, &s.multi); err != nil {
		return nil, nil, s.budgetHint(err)
	}
	if err := s.check(input, x, s.multi.Results[0].Logits); err != nil {
		return nil, nil, err
	}
	if err := s.attention(x, len(tokens)); err != nil {
		return nil, nil, err
	}
	for k := range s.multi.Results {
		s.pads(&s.multi.Results[k], len(tokens))
	}
	if k, ok := s.subj.truth(x); ok {
		s.truth = k
	}
	return tokens, &s.multi, nil
}

// check proves that the model's file computes the logits the engine
// computed for this input (an ONNX graph, at the input's length), within
// the input's share of the budget.
func (s *Scorer) check(input string, x cell.Input, logits []float64) error {
	err := s.subj.check(input, x, logits, s.inputBytes)
	var be *onnx.EvalBudgetError
	if errors.As(err, &be) {
		return fmt.Errorf("%w (an input's share: %s; raise -budget)", err, s.budgetShare)
	}
	return err
}

// budgetHint adds to a refusal for want of memory (a cell.BudgetError)
// that the budget it names is this input's share of -budget, not the
// flag's value; a result that is not finite (an attrib.NonFiniteError)
// names its class as the records do.
func (s *Scorer) budgetHint(err error) error {
	var nf *attrib.NonFiniteError
	if classes := s.subj.classes(); errors.As(err, &nf) && nf.Class >= 0 && nf.Class < len(classes) {
		nf.ClassName = classes[nf.Class]
	}
	var be *cell.BudgetError
	if !errors.As(err, &be) {
		return err
	}
	return fmt.Errorf("%w (an input's share: %s; raise -budget)", err, s.budgetShare)
}

// AllClasses is the -class value that asks for every class.
const AllClasses = "all"

// parseClass reads -class: "" (k = −1: the predicted class), AllClasses
// (all; a class named "all" is then chosen by its index), or a class of
// subj by name or index.
func parseClass(spec string, subj subject) (k int, all bool, err error) {
	switch spec {
	case "":
		return -1, false, nil
	case AllClasses:
		return -1, true, nil
	}
	if k, err = subj.class(spec); err != nil {
		return -1, false, err
	}
	return k, false, nil
}

// All reports whether the Scorer scores every class (-class all).
func (s *Scorer) All() bool { return s.all }

// parse checks the input's size against the Scorer's share of the budget
// (every class's results and output with -class all) and reads it: the
// rows the model runs, the labels of all the tokens (the trailing pads
// -pad removed included).
func (s *Scorer) parse(input string) (cell.Input, []string, error) {
	s.truth, s.padWarn = -1, ""
	n := int64(s.subj.tokens(input))
	if need := s.inputNeed(n); need > float64(s.inputBytes) {
		what := "their rows, scores and output"
		if s.all {
			what = fmt.Sprintf("their rows and the results and output of %d classes", len(s.subj.classes()))
		}
		return cell.Input{}, nil, fmt.Errorf("%d tokens need about %.0f bytes for %s, more than the %d bytes an input may use (-budget / workers / 2): raise -budget", n, need, what, s.inputBytes)
	}
	x, tokens, warn, err := s.subj.parse(input)
	if err != nil {
		return cell.Input{}, nil, withFlags(err)
	}
	if sp := s.opt.Span; sp != nil && x.Len() < len(tokens) && sp.Stop >= x.Len() {
		return cell.Input{}, nil, fmt.Errorf("-span %v reaches the %d trailing pad tokens that -pad removed: the model runs on tokens 0 to %d", *sp, len(tokens)-x.Len(), x.Len()-1)
	}
	s.padWarn = warn
	return x, tokens, nil
}

// pads gives the trailing pad tokens that -pad removed, the last of the
// input's tokens, the score 0 (and 0 features): the packed model never
// reads them, and Captum's attributions of a padded batch are 0 there.
// res.Len stays the length the model ran on.
func (s *Scorer) pads(res *attrib.Result, tokens int) {
	n := res.Len
	if tokens <= n || len(res.Scores) != n {
		return
	}
	d := s.subj.model().Input()
	res.Scores = append(res.Scores, make([]float64, tokens-n)...)
	if len(res.Features) == n*d && n > 0 {
		res.Features = append(res.Features, make([]float64, (tokens-n)*d)...)
	}
}

// PadWarning is the last input's warning about its pads (-pad): a pad id
// inside it, which is not removed; "" when none.
func (s *Scorer) PadWarning() string { return s.padWarn }

// inputNeed is the memory of an input of n tokens besides the engine's
// scratch: its rows, scores and output (tokenBytes), and with -class all
// every class's results (attrib's AllBytes: scores, features and
// bookkeeping, the logits they share) and every class's part of the
// output: its scores (and features) as JSON, and its logit, delta, steps
// and name (allOutput). In float64: n·C·E may pass int64.
func (s *Scorer) inputNeed(n int64) float64 {
	need := float64(n) * float64(s.subj.tokenBytes(s.cfg.Features))
	if !s.all {
		return need
	}
	_, oneHot := s.subj.(whiteboxSubject)
	token := 48.0 // a score in JSON, as tokenBytes counts it
	if s.cfg.Features {
		token += 32*float64(s.subj.model().Input()) + 24 // each feature's JSON, the row's slice in the record
	}
	c := float64(len(s.subj.classes()))
	return need + float64(s.sizer.AllBytes(s.method, int(n), oneHot, s.opt)) + c*float64(n)*token + s.allOutput
}

// Line attributes one input and appends its JSON line, newline included,
// to out: the bytes `whitebox attribute` writes for it. On error out is
// unchanged. The result's warning (IG's completeness gap), if any, is
// Warning's until the next call.
func (s *Scorer) Line(ctx context.Context, input string, out *bytes.Buffer) error {
	if s.all {
		tokens, multi, err := s.ScoreAll(ctx, input)
		if err != nil {
			return err
		}
		s.WriteJSONAll(out, multi, input, tokens)
		return nil
	}
	tokens, res, err := s.Score(ctx, input)
	if err != nil {
		return err
	}
	s.WriteJSON(out, res, input, tokens)
	return nil
}

// Warning is the warning of the last result (IG's completeness gap), or "";
// with -class all, those of the classes that have one, each named.
func (s *Scorer) Warning() string {
	if !s.all {
		return flagNames.Replace(s.res.Warning())
	}
	var b strings.Builder
	classes := s.subj.classes()
	for k := range s.multi.Results {
		if w := s.multi.Results[k].Warning(); w != "" {
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "class %s: %s", strconv.Quote(classes[k]), w)
		}
	}
	return flagNames.Replace(b.String())
}

// prediction is the predicted class of the last result.
func (s *Scorer) prediction() int {
	if s.all && len(s.multi.Results) > 0 {
		return s.multi.Results[0].Prediction
	}
	return s.res.Prediction
}

// Truth returns the task's true class of the last input (its name) and
// whether the classifier predicted it; known is false for classifiers
// without a task (imported models) and after a failed input.
func (s *Scorer) Truth() (truth string, correct, known bool) {
	if s.truth < 0 {
		return "", false, false
	}
	classes := s.subj.classes()
	return classes[s.truth], s.truth == s.prediction(), true
}

// WriteJSON appends the record of one result (package record) to b as one
// line.
func (s *Scorer) WriteJSON(b *bytes.Buffer, res *attrib.Result, input string, tokens []string) {
	classes := s.subj.classes()
	rec := record.Record{Method: s.method.String(), Input: input, Tokens: tokens, Padding: max(0, len(tokens)-res.Len),
		Class: classes[res.Class.Int()], Prediction: classes[res.Prediction], Classes: classes,
		Logits: res.Logits, Scores: res.Scores}
	if res == &s.res && s.truth >= 0 {
		rec.Truth = classes[s.truth]
	}
	if res == &s.res {
		rec.Attention = s.attn.alpha
	}
	s.subj.stamp(&rec)
	if s.opt.Baseline != nil {
		rec.Baseline = s.cfg.Baseline
	}
	if s.method == attrib.DeepLIFT {
		rec.Delta = &res.Delta // the summation-to-delta residual
	}
	if sp := s.opt.Span; sp != nil {
		rec.Span = &record.Span{Start: sp.Start, Stop: sp.Stop, Score: res.SpanScore}
	}
	if s.method == attrib.IntegratedGradients {
		rec.Delta = &res.Delta
		if s.opt.Steps == attrib.AutoSteps {
			rec.IGSteps = res.IGSteps
		}
	}
	d := s.subj.model().Input()
	if s.cfg.Features && len(res.Features) == len(tokens)*d {
		for t := range tokens {
			rec.Features = append(rec.Features, res.Features[t*d:(t+1)*d])
		}
	}
	line, _ := rec.MarshalJSON() // it never fails
	b.Write(line)
	b.WriteByte('\n')
}

// WriteJSONAll appends the record of every class's result of one input
// (package record's AllClasses) to b as one line.
func (s *Scorer) WriteJSONAll(b *bytes.Buffer, multi *attrib.MultiResult, input string, tokens []string) {
	classes := s.subj.classes()
	if len(multi.Results) != len(classes) {
		return // not a result of this Scorer's model
	}
	first := &multi.Results[0]
	all := &record.AllClasses{}
	rec := record.Record{Method: s.method.String(), Input: input, Tokens: tokens, Padding: max(0, len(tokens)-first.Len),
		Prediction: classes[first.Prediction], Classes: classes, Logits: first.Logits, AllClasses: all}
	if multi == &s.multi && s.truth >= 0 {
		rec.Truth = classes[s.truth]
	}
	if multi == &s.multi {
		rec.Attention = s.attn.alpha
	}
	s.subj.stamp(&rec)
	if s.opt.Baseline != nil {
		rec.Baseline = s.cfg.Baseline
	}
	d := s.subj.model().Input()
	for k := range multi.Results {
		res := &multi.Results[k]
		all.Scores = append(all.Scores, res.Scores)
		if s.method == attrib.IntegratedGradients || s.method == attrib.DeepLIFT {
			all.Delta = append(all.Delta, res.Delta) // IG's gap, DeepLIFT's summation-to-delta residual
		}
		if s.method == attrib.IntegratedGradients {
			if s.opt.Steps == attrib.AutoSteps {
				all.IGSteps = append(all.IGSteps, res.IGSteps)
			}
		}
		if s.cfg.Features && len(res.Features) == len(tokens)*d {
			rows := make([][]float64, len(tokens))
			for t := range tokens {
				rows[t] = res.Features[t*d : (t+1)*d]
			}
			all.Features = append(all.Features, rows)
		}
	}
	line, _ := rec.MarshalJSON() // it never fails
	b.Write(line)
	b.WriteByte('\n')
}

// EachInput calls fn with each input of r, one per line, and its line
// number (from 1), until fn returns false: the line without its newline
// and a trailing "\r"; blank lines are skipped. A line longer than the
// Scorer's InputBytes (or 64 KiB, whichever is more) is not read whole:
// fn gets its start and an error that gives its length. The error
// returned is r's.
func (s *Scorer) EachInput(r io.Reader, fn func(line int, input string, err error) bool) error {
	return corpus.EachLine(r, int(min(1<<30, max(64*1024, s.inputBytes))), func(line int, in string, long int64) bool {
		if long > 0 {
			return fn(line, in, fmt.Errorf("the line has %d bytes, more than the %d an input may use (-budget / workers / 2): raise -budget", long, s.inputBytes))
		}
		in = strings.TrimRight(in, "\r")
		if strings.TrimSpace(in) == "" {
			return true // blank lines separate nothing
		}
		return fn(line, in, nil)
	})
}

// ParseSize reads a byte count: a number with an optional unit B, K/KiB,
// M/MiB, G/GiB, T/TiB (powers of 1024; KB, MB, GB, TB are powers of 1000),
// at most 2^50 bytes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRightFunc(t, func(r rune) bool { return r >= 'A' && r <= 'z' })
	unit := strings.ToLower(strings.TrimSpace(t[len(num):]))
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20,
		"g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12}[unit]
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || mult == 0 || !(v > 0) || v*mult > 1<<50 {
		return 0, fmt.Errorf("bad size %q (want e.g. 256MiB, 1GiB or a byte count)", s)
	}
	return int64(v * mult), nil
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/heatmap"
	"github.com/whitebox-lstm/whitebox/record"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// attributeFlags are the options of "whitebox attribute".
type attributeFlags struct {
	net, method, class, quadrature, format, budget string
	steps                                          string
	m, u, eps, lrpBias, tol                        float64
	k, maxSteps                                    int
	mf                                             modelFlags
	features, captumWeights                        bool
	set                                            map[string]bool // the flags given
}

// exitInterrupted is the exit status after Ctrl-C (128 + SIGINT).
const exitInterrupted = 130

func attribute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f attributeFlags
	fs := flag.NewFlagSet("whitebox attribute", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.net, "net", "", "the network: "+strings.Join(whitebox.Names, ", "))
	fs.StringVar(&f.method, "method", "", "the attribution method: occlusion, saliency, gxi, ig, lrp")
	fs.StringVar(&f.class, "class", "", "the relevance class by name (default: the predicted class)")
	fs.Float64Var(&f.m, "m", whitebox.DefaultM, "the gate saturation constant m")
	fs.Float64Var(&f.u, "u", 0, "the counter scale u (default: counting 0.5, sp-counter 0.7, sp-fsa 1)")
	fs.IntVar(&f.k, "k", 0, fmt.Sprintf("the bracket network's stack size (default %d)", whitebox.DefaultStackSize))
	fs.StringVar(&f.steps, "steps", fmt.Sprint(attrib.DefaultSteps), "IG: the number of quadrature steps, or auto: the smallest Gauss–Legendre rule (8, 16, 32, …) whose completeness gap is within -tol")
	fs.Float64Var(&f.tol, "tol", attrib.DefaultTolerance, "IG: the completeness gap allowed, relative to |ŷ_c(x) − ŷ_c(0)|; a larger gap is a warning on standard error")
	fs.IntVar(&f.maxSteps, "max-steps", attrib.DefaultMaxAutoSteps, "IG with -steps auto: the largest rule tried")
	fs.StringVar(&f.quadrature, "quadrature", attrib.GaussLegendre.String(), "IG: gauss-legendre, riemann-left, riemann-right, riemann-middle or riemann-trapezoid")
	fs.Float64Var(&f.eps, "eps", attrib.DefaultEpsilon, "LRP: the stabilizer ε ≥ 0 (0: none; a zero denominator is then an error)")
	fs.StringVar(&f.format, "format", "json", "output: json (one object per line), text (a heatmap; coloured on a terminal), html or latex")
	fs.StringVar(&f.budget, "budget", "256MiB", "scratch memory for IG and occlusion (e.g. 16MiB, 1GiB); results do not depend on it")
	fs.StringVar(&f.mf.path, "model", "", "an imported model: a PyTorch state_dict (torch.save) or .safetensors file of Embedding → LSTM → Linear")
	fs.StringVar(&f.mf.embedding, "embedding", "", "-model: the embedding's name in the file (default: detected; none: the model reads features)")
	fs.StringVar(&f.mf.lstm, "lstm", "", "-model: the LSTM's name in the file (default: detected)")
	fs.StringVar(&f.mf.decoder, "decoder", "", "-model: the decoder's name in the file (default: detected)")
	fs.StringVar(&f.mf.vocab, "vocab", "", "-model: a file of one token per line (id = line number from 0); inputs are then words")
	fs.StringVar(&f.mf.unk, "unk", "", "-model: the -vocab token that stands for unknown words (default: an unknown word is an error)")
	fs.StringVar(&f.mf.classes, "classes", "", "-model: a file of one class name per line, in logit order (default: 0, 1, ...)")
	fs.BoolVar(&f.features, "features", false, "-model: also write the per-dimension scores (\"features\": T lists of E)")
	fs.Float64Var(&f.lrpBias, "lrp-bias", 0, "-model, LRP: Arras et al.'s bias_factor in [0, 1] (0: bias and stabilizer absorb their share; 1: relevance is conserved)")
	fs.BoolVar(&f.captumWeights, "captum-weights", false, "IG: round the quadrature weights to float32 as Captum does, for Captum's numbers to the last digit (default: true with -model, false with -net)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: whitebox attribute -net NET -method METHOD [flags] [INPUT ...]
       whitebox attribute -model FILE -method METHOD [flags] [INPUT ...]

Scores every token of each INPUT (or of each line of standard input) for
the relevance class. A bad input is reported on standard error, the other
inputs are still scored, and the exit status is 1. Inputs are scored in
parallel and written in input order; the results do not depend on the
number of cores or on -budget. On a terminal, long runs show a progress
bar on standard error; Ctrl-C stops the run (exit status 130). Flags may
come before or after the inputs; "--" ends the flags.

With -net, an input is a string over the network's alphabet. With -model,
an input is whitespace-separated token ids (or words, with -vocab), which
the model's embedding turns into the rows that are scored (the baseline is
the zero embedding); a model without an embedding reads a JSON array of
rows of features. "whitebox inspect -model FILE" shows what was read.

Exit status: 0 success; 1 some input failed; 2 a usage error (bad flag or
value, unreadable model); 130 interrupted.

Flags:
`)
		fs.PrintDefaults()
	}
	inputs, status, ok := parseInterleaved(fs, args)
	if !ok {
		return status
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	job, err := newAttributeJob(f, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "whitebox attribute: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return job.run(ctx, inputs, stdin, stderr)
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments (which it returns), until "--".
func parseInterleaved(fs *flag.FlagSet, args []string) (positional []string, status int, ok bool) {
	for {
		if status, ok := parseFlags(fs, args); !ok {
			return nil, status, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, 0, true
		}
		// flag.Parse stops at the first positional argument, or consumes a
		// "--" and stops after it.
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), 0, true
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// attributeJob scores inputs and writes them in its format.
type attributeJob struct {
	f      attributeFlags
	subj   subject
	method attrib.Method
	opt    attrib.Options
	out    io.Writer
	color  bool
	rows   []heatmap.Row // html: written at the end, as one page
	// inputBytes bounds the memory of one input: its row, scores, output.
	inputBytes int64
}

func newAttributeJob(f attributeFlags, out io.Writer) (*attributeJob, error) {
	if (f.net == "") == (f.mf.path == "") || f.method == "" {
		return nil, errors.New("-method and one of -net and -model are required (see whitebox help attribute)")
	}
	budget, err := parseSize(f.budget)
	if err != nil {
		return nil, fmt.Errorf("-budget: %v", err)
	}
	if least := minBudget * int64(runtime.GOMAXPROCS(0)); budget < least {
		return nil, fmt.Errorf("-budget %s is less than %d bytes (%d per core): too little to score anything", f.budget, least, minBudget)
	}
	var subj subject
	if f.net != "" {
		for _, name := range []string{"embedding", "lstm", "decoder", "vocab", "unk", "classes", "features", "lrp-bias"} {
			if f.set[name] {
				return nil, fmt.Errorf("-%s applies to -model only", name)
			}
		}
		// An explicit zero is refused by the network, never replaced by
		// the default.
		cfg := whitebox.Config{M: f.m, U: f.u, K: f.k, MSet: f.set["m"], USet: f.set["u"], KSet: f.set["k"]}
		net, err := whitebox.New(f.net, cfg)
		if err != nil {
			return nil, err
		}
		subj = whiteboxSubject{net}
	} else {
		for _, name := range []string{"m", "u", "k"} {
			if f.set[name] {
				return nil, fmt.Errorf("-%s applies to -net only", name)
			}
		}
		if subj, err = newModelSubject(f.mf); err != nil {
			return nil, err
		}
		if !f.set["captum-weights"] {
			f.captumWeights = true
		}
	}
	if !(f.lrpBias >= 0 && f.lrpBias <= 1) {
		return nil, fmt.Errorf("-lrp-bias %v must be in [0, 1]", f.lrpBias)
	}
	method, err := attrib.ParseMethod(f.method)
	if err != nil {
		return nil, err
	}
	q, err := attrib.ParseQuadrature(f.quadrature)
	if err != nil {
		return nil, err
	}
	steps := attrib.AutoSteps
	if f.steps != "auto" {
		if steps, err = strconv.Atoi(f.steps); err != nil || steps < 1 || steps > attrib.MaxSteps {
			return nil, fmt.Errorf("-steps %s must be auto or in 1..%d", f.steps, attrib.MaxSteps)
		}
	}
	if !(f.eps >= 0) || math.IsInf(f.eps, 0) {
		return nil, fmt.Errorf("-eps %v must be finite and non-negative", f.eps)
	}
	if !(f.tol > 0 && f.tol <= 1) {
		return nil, fmt.Errorf("-tol %v must be in (0, 1]", f.tol)
	}
	if f.maxSteps < 8 || f.maxSteps > attrib.MaxSteps {
		return nil, fmt.Errorf("-max-steps %d must be in 8..%d", f.maxSteps, attrib.MaxSteps)
	}
	opt := attrib.Options{Steps: steps, Tolerance: f.tol, MaxAutoSteps: f.maxSteps, Quadrature: q, Epsilon: f.eps, EpsilonSet: true,
		LRPBias: f.lrpBias, Float32Weights: f.captumWeights, Budget: budget}
	if f.class != "" {
		k, err := subj.class(f.class)
		if err != nil {
			return nil, err
		}
		opt.Class = attrib.ClassIndex(k)
	}
	switch f.format {
	case "json", "text", "html", "latex":
	default:
		return nil, fmt.Errorf("unknown -format %q (formats: json, text, html, latex)", f.format)
	}
	j := &attributeJob{f: f, subj: subj, method: method, opt: opt, out: out}
	if file, ok := out.(*os.File); ok {
		j.color = heatmap.IsTerminal(file)
	}
	return j, nil
}

// minBudget is the least -budget per worker: an engine's smallest batch of
// a short input and its output.
const minBudget = 256 << 10

// parseSize reads a byte count: a number with an optional unit B, K/KiB,
// M/MiB, G/GiB (powers of 1024; KB, MB, GB are powers of 1000).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRightFunc(t, func(r rune) bool { return r >= 'A' && r <= 'z' })
	unit := strings.ToLower(strings.TrimSpace(t[len(num):]))
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20,
		"g": 1 << 30, "gib": 1 << 30, "kb": 1e3, "mb": 1e6, "gb": 1e9}[unit]
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || mult == 0 || !(v > 0) || v*mult > 1<<50 {
		return 0, fmt.Errorf("bad size %q (want e.g. 256MiB, 1GiB or a byte count)", s)
	}
	return int64(v * mult), nil
}

// An item is one input on its way through the pipeline.
type item struct {
	where, input string
	out          bytes.Buffer // the formatted result
	row          heatmap.Row  // html
	err          error
	warn         string // a result's warning (IG's completeness gap)
	done         chan struct{}
}

// run scores the inputs (args, else the lines of stdin) on GOMAXPROCS
// workers, each with its own Explainer, and writes the results in input
// order. At most a few inputs per worker are in flight, so memory stays
// bounded whatever the number of inputs.
func (j *attributeJob) run(ctx context.Context, args []string, stdin io.Reader, stderr io.Writer) int {
	workers := runtime.GOMAXPROCS(0)
	if len(args) > 0 {
		workers = min(workers, len(args))
	}
	opt := j.opt
	opt.Budget = opt.Budget / int64(workers)
	// An input's own memory (its row, scores and output) comes out of the
	// same budget: at most half a worker's share, the rest for the engine.
	j.inputBytes = opt.Budget / 2

	bar := newProgressBar(stderr)
	defer bar.finish()

	order := make(chan *item, 2*workers) // in input order, to the writer
	todo := make(chan *item, workers)    // to the workers
	readErr := make(chan error, 1)
	go func() { // the reader
		defer close(order)
		defer close(todo)
		send := func(where, s string) bool {
			it := &item{where: where, input: s, done: make(chan struct{})}
			select {
			case order <- it:
			case <-ctx.Done():
				return false
			}
			todo <- it
			return true
		}
		if len(args) > 0 {
			for _, s := range args {
				if !send("", s) {
					return
				}
			}
			return
		}
		readErr <- eachLine(stdin, int(min(1<<30, max(64*1024, j.inputBytes))), func(line int, s string, long int64) bool {
			where := fmt.Sprintf("line %d: ", line)
			if long > 0 {
				it := &item{where: where, input: s, done: make(chan struct{}),
					err: fmt.Errorf("the line has %d bytes, more than the %d an input may use (-budget / workers / 2): raise -budget", long, j.inputBytes)}
				close(it.done)
				select {
				case order <- it:
					return true
				case <-ctx.Done():
					return false
				}
			}
			s = strings.TrimRight(s, "\r")
			if strings.TrimSpace(s) == "" {
				return true // blank lines separate nothing
			}
			return send(where, s)
		})
	}()
	for range workers {
		go func() {
			w := worker{job: j, ex: attrib.NewExplainer(j.subj.model()), opt: opt}
			for it := range todo {
				w.opt.Progress = bar.callback()
				if ctx.Err() == nil {
					it.err = w.do(ctx, it)
				}
				close(it.done)
				bar.itemDone()
			}
		}()
	}

	status := 0
	for it := range order {
		select {
		case <-it.done:
		case <-ctx.Done():
			bar.finish()
			fmt.Fprintln(stderr, "whitebox attribute: interrupted")
			return exitInterrupted
		}
		if ctx.Err() != nil {
			break
		}
		if it.err != nil {
			bar.printf(stderr, "whitebox attribute: %s%s: %v\n", it.where, quoteInput(it.input), it.err)
			status = 1
			continue
		}
		if it.warn != "" {
			bar.printf(stderr, "whitebox attribute: %s%s: warning: %s\n", it.where, quoteInput(it.input), it.warn)
		}
		if j.f.format == "html" {
			j.rows = append(j.rows, it.row)
			continue
		}
		if _, err := j.out.Write(it.out.Bytes()); err != nil {
			bar.printf(stderr, "whitebox attribute: %s%s: %v\n", it.where, quoteInput(it.input), err)
			status = 1
		}
	}
	if ctx.Err() != nil {
		bar.finish()
		fmt.Fprintln(stderr, "whitebox attribute: interrupted")
		return exitInterrupted
	}
	bar.finish()
	if len(args) == 0 {
		if err := <-readErr; err != nil {
			fmt.Fprintf(stderr, "whitebox attribute: reading standard input: %v\n", err)
			return 1
		}
	}
	if err := j.finish(); err != nil {
		fmt.Fprintf(stderr, "whitebox attribute: %v\n", err)
		return 1
	}
	return status
}

// worker scores one input at a time with its own Explainer.
type worker struct {
	job *attributeJob
	ex  *attrib.Explainer
	res attrib.Result
	opt attrib.Options
}

func (w *worker) do(ctx context.Context, it *item) error {
	j, s := w.job, it.input
	if n := int64(j.subj.tokens(s)); n*j.subj.tokenBytes(j.f.features) > j.inputBytes {
		return fmt.Errorf("%d tokens need about %d bytes for their rows, scores and output, more than the %d bytes an input may use (-budget / workers / 2): raise -budget", n, n*j.subj.tokenBytes(j.f.features), j.inputBytes)
	}
	x, tokens, err := j.subj.parse(s)
	if err != nil {
		return err
	}
	if err := w.ex.AttributeContext(ctx, j.method, x, w.opt, &w.res); err != nil {
		return err
	}
	it.warn = w.res.Warning()
	h := heatmap.Heatmap{Tokens: tokens, Scores: w.res.Tokens}
	classes := j.subj.classes()
	b := &it.out
	switch j.f.format {
	case "json":
		j.writeJSON(b, &w.res, s, tokens)
	case "text":
		fmt.Fprintf(b, "%s\t%s (class %s, predicted %s)\t", s, j.method, classes[w.res.Class], classes[w.res.Prediction])
		if j.color {
			heatmap.WriteANSI(b, h)
		} else {
			heatmap.WritePlain(b, h)
		}
		if j.method == attrib.IntegratedGradients {
			fmt.Fprintf(b, "\tdelta=%.3g", w.res.Delta)
		}
		b.WriteByte('\n')
	case "latex":
		heatmap.WriteLaTeX(b, h)
		b.WriteString(" % " + strings.ReplaceAll(s, "%", `\%`) + "\n")
	case "html":
		label := fmt.Sprintf("%s · %s · class %s (predicted %s)", j.subj.label(), j.method, classes[w.res.Class], classes[w.res.Prediction])
		it.row = heatmap.Row{Label: label, Heatmap: heatmap.Heatmap{Tokens: tokens, Scores: append([]float64(nil), w.res.Tokens...)}}
	}
	return nil
}

func (j *attributeJob) finish() error {
	if j.f.format != "html" {
		return nil
	}
	return heatmap.HTMLPage(j.out, fmt.Sprintf("whitebox attribute %s -method %s", j.subj.label(), j.method), j.rows)
}

// writeJSON writes the record of one input (package record) as one line.
func (j *attributeJob) writeJSON(b *bytes.Buffer, res *attrib.Result, input string, tokens []string) {
	classes := j.subj.classes()
	rec := record.Record{Method: j.method.String(), Input: input, Tokens: tokens,
		Class: classes[res.Class], Prediction: classes[res.Prediction], Classes: classes,
		Logits: res.Logits, Scores: res.Tokens}
	j.subj.stamp(&rec)
	if j.method == attrib.IntegratedGradients {
		rec.Delta = &res.Delta
		if j.opt.Steps == attrib.AutoSteps {
			rec.IGSteps = res.IGSteps
		}
	}
	if j.f.features && len(res.Features) == len(tokens)*j.subj.model().Input() {
		d := j.subj.model().Input()
		for t := range tokens {
			rec.Features = append(rec.Features, res.Features[t*d:(t+1)*d])
		}
	}
	line, _ := rec.MarshalJSON() // it never fails
	b.Write(line)
	b.WriteByte('\n')
}

// quoteInput quotes an input for a message: whole when short, else its
// start and its length, so that a long bad line does not flood the
// terminal (the error itself names the position).
func quoteInput(s string) string {
	const most = 80
	if len(s) <= most {
		return strconv.Quote(s)
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// eachLine calls fn with each line of r (without its newline) and its
// number, until fn returns false. A line longer than most bytes is not
// kept whole: fn gets its first most bytes and its length in long (0 for
// the other lines), so that no line drives an allocation past most.
func eachLine(r io.Reader, most int, fn func(line int, s string, long int64) bool) error {
	br := bufio.NewReaderSize(r, 64*1024)
	var buf []byte
	for line := 1; ; line++ {
		buf = buf[:0]
		var n int64
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			chunk = bytes.TrimSuffix(chunk, []byte{'\n'})
			n += int64(len(chunk))
			if room := most - len(buf); room > 0 {
				buf = append(buf, chunk[:min(len(chunk), room)]...)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return err
		}
		if n > 0 || err == nil {
			long := int64(0)
			if n > int64(most) {
				long = n
			}
			if !fn(line, string(buf), long) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

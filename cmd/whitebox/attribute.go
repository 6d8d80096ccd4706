package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/corpus"
	"github.com/whitebox-lstm/whitebox/heatmap"
	"github.com/whitebox-lstm/whitebox/internal/visible"
	"github.com/whitebox-lstm/whitebox/score"
)

// attributeFlags are the options of "whitebox attribute": the scoring
// options (package score) and the output format.
type attributeFlags struct {
	cfg     score.Config
	format  string
	verbose bool // -v: each input's plan on standard error
}

// exitInterrupted is the exit status after Ctrl-C (128 + SIGINT).
const exitInterrupted = 130

func attribute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := attributeFlags{cfg: score.DefaultConfig()}
	fs := flag.NewFlagSet("whitebox attribute", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.cfg.RegisterFlags(fs, "")
	fs.StringVar(&f.format, "format", "json", "output: json (one object per line), text (a heatmap; coloured on a terminal), html or latex")
	fs.BoolVar(&f.verbose, "v", false, "say on standard error, for each input, the schedule IG or occlusion chose: workers, lanes a batch, checkpoints, memory")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: whitebox attribute -net NET -method METHOD [flags] [INPUT ...]
       whitebox attribute -model FILE -method METHOD [flags] [INPUT ...]

Scores every token of each INPUT (or of each line of standard input) for
the relevance class. A bad input is reported on standard error, the other
inputs are still scored, and the exit status is 1. Inputs are scored in
parallel and written in input order, one input alone (or the last ones)
on the cores the others leave idle; the results do not depend on the
number of cores or on -budget. On a terminal, long runs show a progress
bar on standard error; Ctrl-C stops the run (exit status 130). Flags may
come before or after the inputs; "--" ends the flags.

With -net, an input is a string over the network's alphabet. With -model,
an input is whitespace-separated token ids (or words, with -vocab), which
the model's embedding turns into the rows that are scored (IG's baseline and
occlusion's replacement: -baseline, the zero embedding by default); a
model without an embedding reads a JSON array of rows of features.
"whitebox inspect -model FILE" shows what was read. -head says how the
LSTM's outputs reach the classifier (else the file's metadata, else hn,
said on standard error); -verify FILE checks it against your model's
logits, and -head auto with -verify finds it. -pad ID removes an input's
trailing pad tokens, as pack_padded_sequence does for a model trained on
padded batches ("padding" in the records).

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
	f.cfg.MarkSet(fs, "")
	// The budget is shared by the workers: one per core, or per input
	// when there are fewer.
	f.cfg.Workers = runtime.GOMAXPROCS(0)
	if len(inputs) > 0 {
		f.cfg.Workers = min(f.cfg.Workers, len(inputs))
	}
	limitMemory(f.cfg.Budget) // from the start: -verify's lines run while the job is made
	job, err := newAttributeJob(f, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "whitebox attribute: %s\n", errText(err))
		return 2
	}
	if note := job.sc.Note(); note != "" {
		fmt.Fprintln(stderr, note)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return job.run(ctx, inputs, stdin, stderr)
}

// limitMemory sets the Go runtime's soft memory limit to the budget plus
// score.MemoryOverhead (unless GOMEMLIMIT is set), so that the garbage
// collector keeps the heap within what -budget promises rather than
// letting it grow to twice the live memory.
func limitMemory(budget string) {
	b, err := score.ParseSize(budget)
	if err != nil || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(b + score.MemoryOverhead)
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
	f     attributeFlags
	sc    *score.Scorer // cloned for each worker
	out   io.Writer
	color bool
	rows  []heatmap.Row // html: written at the end, as one page
	warns warnings      // the writer's counts, summarized at the end
}

func newAttributeJob(f attributeFlags, out io.Writer) (*attributeJob, error) {
	sc, err := score.New(f.cfg)
	if err != nil {
		return nil, err
	}
	switch f.format {
	case "json", "text", "html", "latex":
	default:
		return nil, fmt.Errorf("unknown -format %q (formats: json, text, html, latex)", f.format)
	}
	j := &attributeJob{f: f, sc: sc, out: out}
	if file, ok := out.(*os.File); ok {
		j.color = heatmap.IsTerminal(file)
	}
	return j, nil
}

// parseSize reads a byte count (score.ParseSize).
func parseSize(s string) (int64, error) { return score.ParseSize(s) }

// An item is one input on its way through the loop.
type item struct {
	where, input string
	err          error         // why it could not be read (too long)
	out          bytes.Buffer  // the formatted result
	rows         []heatmap.Row // html: one, or one per class with -class all
	warn         string        // a result's warning (IG's completeness gap)
	padWarn      string        // a pad inside the input (-pad)
	wrong        string        // a white-box network's wrong prediction, in words
	plans        []string      // -v: the schedules chosen for it, in order, each once
}

// run scores the inputs (args, else the lines of stdin) on the workers,
// each with its own Scorer, and writes the results in input order
// (package corpus: a few inputs per worker in flight, so memory stays
// bounded whatever the number of inputs).
func (j *attributeJob) run(ctx context.Context, args []string, stdin io.Reader, stderr io.Writer) int {
	bar := corpus.NewProgress(stderr)
	defer bar.Finish()
	status := 0
	err := corpus.Run(ctx, corpus.Options{Workers: j.f.cfg.Workers, Progress: bar}, // each with its share of the budget
		func(yield func(*item) bool) error { return j.read(args, stdin, yield) },
		func(int) (func(context.Context, *item) error, error) {
			w := &worker{job: j, sc: j.sc.Clone(), bar: bar}
			return w.score, nil
		},
		func(it *item, err error) error {
			if !j.write(it, err, bar, stderr) {
				status = 1
			}
			return nil
		})
	if ctx.Err() != nil {
		bar.Finish()
		fmt.Fprintln(stderr, "whitebox attribute: interrupted")
		return exitInterrupted
	}
	bar.Finish()
	j.warns.summarize(stderr)
	if err != nil { // reading stdin: the only error write and the workers leave
		fmt.Fprintf(stderr, "whitebox attribute: %v\n", err)
		return 1
	}
	if err := j.finish(); err != nil {
		fmt.Fprintf(stderr, "whitebox attribute: %v\n", err)
		return 1
	}
	return status
}

// read yields the inputs (args, else the lines of stdin); a line too long
// to read whole comes with its error.
func (j *attributeJob) read(args []string, stdin io.Reader, yield func(*item) bool) error {
	if len(args) > 0 {
		for _, s := range args {
			if !yield(&item{input: s}) {
				return nil
			}
		}
		return nil
	}
	err := j.sc.EachInput(stdin, func(line int, s string, err error) bool {
		return yield(&item{where: fmt.Sprintf("line %d: ", line), input: s, err: err})
	})
	if err != nil {
		return fmt.Errorf("reading standard input: %v", err)
	}
	return nil
}

// write writes a scored item: its result to the output, its error and
// warnings to stderr. It reports whether the item succeeded.
func (j *attributeJob) write(it *item, err error, bar *corpus.Progress, stderr io.Writer) bool {
	for _, p := range it.plans {
		bar.Printf(stderr, "whitebox attribute: %s%s: plan: %s\n", it.where, quoteInput(it.input), p)
	}
	if err != nil {
		bar.Printf(stderr, "whitebox attribute: %s%s: %s\n", it.where, quoteInput(it.input), errText(err))
		return false
	}
	if line := j.warns.add(it); line != "" {
		bar.Printf(stderr, "%s", line)
	}
	if j.f.format == "html" {
		j.rows = append(j.rows, it.rows...)
		return true
	}
	if _, err := j.out.Write(it.out.Bytes()); err != nil {
		bar.Printf(stderr, "whitebox attribute: %s%s: %s\n", it.where, quoteInput(it.input), errText(err))
		return false
	}
	return true
}

// worker scores one input at a time with its own Scorer.
type worker struct {
	job *attributeJob
	sc  *score.Scorer
	bar *corpus.Progress
}

// score formats an item's result into it, unless it could not be read.
func (w *worker) score(ctx context.Context, it *item) error {
	if it.err != nil {
		return it.err
	}
	w.sc.SetProgress(w.bar.Callback())
	if w.job.f.verbose {
		w.sc.SetPlan(func(p cell.Plan) {
			if line := p.String(); !slices.Contains(it.plans, line) {
				it.plans = append(it.plans, line)
			}
		})
	}
	w.sc.Borrow(corpus.Lent(ctx)) // one input alone, or the last ones, on every core
	return w.do(ctx, it)
}

func (w *worker) do(ctx context.Context, it *item) error {
	if w.sc.All() {
		return w.doAll(ctx, it)
	}
	j, s := w.job, it.input
	tokens, res, err := w.sc.Score(ctx, s)
	if err != nil {
		return err
	}
	it.warn, it.padWarn = w.sc.Warning(), w.sc.PadWarning()
	classes := w.sc.Classes()
	if truth, correct, known := w.sc.Truth(); known && !correct {
		it.wrong = fmt.Sprintf("the network predicts %q, the task's true answer is %q", classes[res.Prediction], truth)
	}
	if j.f.format == "json" {
		w.sc.WriteJSON(&it.out, res, s, tokens)
		return nil
	}
	w.heatmap(it, tokens, res)
	w.attention(it, tokens)
	return nil
}

// doAll is do with -class all: one JSON line with every class, or one
// heatmap per class (text and latex lines, html rows) in class order.
func (w *worker) doAll(ctx context.Context, it *item) error {
	s := it.input
	tokens, multi, err := w.sc.ScoreAll(ctx, s)
	if err != nil {
		return err
	}
	it.warn, it.padWarn = w.sc.Warning(), w.sc.PadWarning()
	classes := w.sc.Classes()
	pred := multi.Results[0].Prediction
	if truth, correct, known := w.sc.Truth(); known && !correct {
		it.wrong = fmt.Sprintf("the network predicts %q, the task's true answer is %q", classes[pred], truth)
	}
	if w.job.f.format == "json" {
		w.sc.WriteJSONAll(&it.out, multi, s, tokens)
		return nil
	}
	for k := range multi.Results {
		w.heatmap(it, tokens, &multi.Results[k])
	}
	w.attention(it, tokens)
	return nil
}

// attention appends, for a model with an attention head, the heatmap of
// the input's attention weights α after its attributions (text and latex:
// one line; html: a row), so that the two can be read side by side. The
// weights do not depend on the class: one map an input, also with -class
// all. JSON records carry them as "attention".
func (w *worker) attention(it *item, tokens []string) {
	alpha := w.sc.Attention()
	if alpha == nil {
		return
	}
	h := heatmap.Heatmap{Tokens: tokens, Scores: alpha}
	b := &it.out
	switch w.job.f.format {
	case "text":
		fmt.Fprintf(b, "%s	attention weights α	", heatmap.Visible(it.input))
		if w.job.color {
			heatmap.WriteANSI(b, h)
		} else {
			heatmap.WritePlain(b, h)
		}
		b.WriteByte('\n')
	case "latex":
		heatmap.WriteLaTeX(b, h)
		b.WriteString(" % attention weights: " + heatmap.LaTeXText(it.input) + "\n")
	case "html":
		label := fmt.Sprintf("%s · attention weights α (the model's own, not an attribution)", w.sc.Label())
		it.rows = append(it.rows, heatmap.Row{Label: label, Heatmap: heatmap.Heatmap{Tokens: tokens, Scores: append([]float64(nil), alpha...)}})
	}
}

// heatmap appends the heatmap of one result of it in the job's format
// (text, latex; html: a row).
func (w *worker) heatmap(it *item, tokens []string, res *attrib.Result) {
	j, s := w.job, it.input
	classes := w.sc.Classes()
	method := w.sc.Method()
	h := heatmap.Heatmap{Tokens: tokens, Scores: res.Scores}
	b := &it.out
	switch j.f.format {
	case "text":
		// Visible: the input and the class names never write a control
		// character (an ESC sequence would reach the terminal).
		fmt.Fprintf(b, "%s\t%s (class %s, predicted %s)\t", heatmap.Visible(s), method, heatmap.Visible(classes[res.Class.Int()]), heatmap.Visible(classes[res.Prediction]))
		if j.color {
			heatmap.WriteANSI(b, h)
		} else {
			heatmap.WritePlain(b, h)
		}
		if method == attrib.IntegratedGradients {
			fmt.Fprintf(b, "\tdelta=%.3g", res.Delta)
		}
		if sp := w.sc.Span(); sp != nil {
			fmt.Fprintf(b, "\tspan %v=%.3g", *sp, res.SpanScore)
		}
		b.WriteByte('\n')
	case "latex":
		heatmap.WriteLaTeX(b, h)
		// Escaped even in the comment: a bare \r would end the comment
		// and make the rest of the line LaTeX code.
		b.WriteString(" % ")
		if w.sc.All() { // which class this line is
			b.WriteString("class " + heatmap.LaTeXText(classes[res.Class.Int()]) + ": ")
		}
		b.WriteString(heatmap.LaTeXText(s) + "\n")
	case "html":
		label := fmt.Sprintf("%s · %s · class %s (predicted %s)", w.sc.Label(), method, classes[res.Class.Int()], classes[res.Prediction])
		it.rows = append(it.rows, heatmap.Row{Label: label, Heatmap: heatmap.Heatmap{Tokens: tokens, Scores: append([]float64(nil), res.Scores...)}})
	}
}

func (j *attributeJob) finish() error {
	if j.f.format != "html" {
		return nil
	}
	return heatmap.HTMLPage(j.out, fmt.Sprintf("whitebox attribute %s -method %s", j.sc.Label(), j.sc.Method()), j.rows)
}

// quoteInput quotes an input for a message: whole when short, else its
// start and its length, so that a long bad line does not flood the
// terminal (the error itself names the position).
func quoteInput(s string) string { return visible.QuoteN(s, 80) }

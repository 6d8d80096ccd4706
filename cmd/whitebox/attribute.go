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
	"strconv"
	"unicode/utf8"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/heatmap"
	"github.com/whitebox-lstm/whitebox/score"
)

// attributeFlags are the options of "whitebox attribute": the scoring
// options (package score) and the output format.
type attributeFlags struct {
	cfg    score.Config
	format string
}

// exitInterrupted is the exit status after Ctrl-C (128 + SIGINT).
const exitInterrupted = 130

func attribute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f := attributeFlags{cfg: score.DefaultConfig()}
	fs := flag.NewFlagSet("whitebox attribute", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.cfg.RegisterFlags(fs, "")
	fs.StringVar(&f.format, "format", "json", "output: json (one object per line), text (a heatmap; coloured on a terminal), html or latex")
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
the model's embedding turns into the rows that are scored (IG's baseline and
occlusion's replacement: -baseline, the zero embedding by default); a
model without an embedding reads a JSON array of rows of features.
"whitebox inspect -model FILE" shows what was read. -head says how the
LSTM's outputs reach the classifier (else the file's metadata, else hn,
said on standard error); -verify FILE checks it against your model's
logits, and -head auto with -verify finds it.

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
	job, err := newAttributeJob(f, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "whitebox attribute: %v\n", err)
		return 2
	}
	limitMemory(f.cfg.Budget)
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

// An item is one input on its way through the pipeline.
type item struct {
	where, input string
	out          bytes.Buffer  // the formatted result
	rows         []heatmap.Row // html: one, or one per class with -class all
	err          error
	warn         string // a result's warning (IG's completeness gap)
	wrong        string // a white-box network's wrong prediction, in words
	done         chan struct{}
}

// run scores the inputs (args, else the lines of stdin) on GOMAXPROCS
// workers, each with its own Explainer, and writes the results in input
// order. At most a few inputs per worker are in flight, so memory stays
// bounded whatever the number of inputs.
func (j *attributeJob) run(ctx context.Context, args []string, stdin io.Reader, stderr io.Writer) int {
	workers := j.f.cfg.Workers // each with its share of the budget

	bar := newProgressBar(stderr)
	defer bar.finish()

	order := make(chan *item, 2*workers) // in input order, to the writer
	todo := make(chan *item, workers)    // to the workers
	readErr := make(chan error, 1)
	go j.read(ctx, args, stdin, order, todo, readErr)
	for range workers {
		go j.work(ctx, todo, bar)
	}
	status, interrupted := j.write(ctx, order, bar, stderr)
	if interrupted || ctx.Err() != nil {
		bar.finish()
		fmt.Fprintln(stderr, "whitebox attribute: interrupted")
		return exitInterrupted
	}
	bar.finish()
	j.warns.summarize(stderr)
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

// read sends the inputs (args, else the lines of stdin) to the writer in
// order and to the workers; a line too long to read whole goes to the
// writer as a failed item. It closes both channels at the end, and reports
// stdin's read error on readErr.
func (j *attributeJob) read(ctx context.Context, args []string, stdin io.Reader, order, todo chan<- *item, readErr chan<- error) {
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
	readErr <- j.sc.EachInput(stdin, func(line int, s string, err error) bool {
		where := fmt.Sprintf("line %d: ", line)
		if err != nil { // too long to read whole
			it := &item{where: where, input: s, done: make(chan struct{}), err: err}
			close(it.done)
			select {
			case order <- it:
				return true
			case <-ctx.Done():
				return false
			}
		}
		return send(where, s)
	})
}

// work scores the items of todo with a Scorer of its own.
func (j *attributeJob) work(ctx context.Context, todo <-chan *item, bar *progressBar) {
	w := worker{job: j, sc: j.sc.Clone()}
	for it := range todo {
		w.sc.SetProgress(bar.callback())
		if ctx.Err() == nil {
			it.err = w.do(ctx, it)
		}
		close(it.done)
		bar.itemDone()
	}
}

// write writes the items in input order as they are done: results to the
// output, errors and warnings to stderr. It returns the exit status so far
// and whether ctx ended the run.
func (j *attributeJob) write(ctx context.Context, order <-chan *item, bar *progressBar, stderr io.Writer) (status int, interrupted bool) {
	for it := range order {
		select {
		case <-it.done:
		case <-ctx.Done():
			return status, true
		}
		if ctx.Err() != nil {
			return status, true
		}
		if it.err != nil {
			bar.printf(stderr, "whitebox attribute: %s%s: %v\n", it.where, quoteInput(it.input), it.err)
			status = 1
			continue
		}
		if line := j.warns.add(it); line != "" {
			bar.printf(stderr, "%s", line)
		}
		if j.f.format == "html" {
			j.rows = append(j.rows, it.rows...)
			continue
		}
		if _, err := j.out.Write(it.out.Bytes()); err != nil {
			bar.printf(stderr, "whitebox attribute: %s%s: %v\n", it.where, quoteInput(it.input), err)
			status = 1
		}
	}
	return status, false
}

// worker scores one input at a time with its own Scorer.
type worker struct {
	job *attributeJob
	sc  *score.Scorer
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
	it.warn = w.sc.Warning()
	classes := w.sc.Classes()
	if truth, correct, known := w.sc.Truth(); known && !correct {
		it.wrong = fmt.Sprintf("the network predicts %q, the task's true answer is %q", classes[res.Prediction], truth)
	}
	if j.f.format == "json" {
		w.sc.WriteJSON(&it.out, res, s, tokens)
		return nil
	}
	w.heatmap(it, tokens, res)
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
	it.warn = w.sc.Warning()
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
	return nil
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
		fmt.Fprintf(b, "%s\t%s (class %s, predicted %s)\t", heatmap.Visible(s), method, heatmap.Visible(classes[res.Class]), heatmap.Visible(classes[res.Prediction]))
		if j.color {
			heatmap.WriteANSI(b, h)
		} else {
			heatmap.WritePlain(b, h)
		}
		if method == attrib.IntegratedGradients {
			fmt.Fprintf(b, "\tdelta=%.3g", res.Delta)
		}
		b.WriteByte('\n')
	case "latex":
		heatmap.WriteLaTeX(b, h)
		// Escaped even in the comment: a bare \r would end the comment
		// and make the rest of the line LaTeX code.
		b.WriteString(" % ")
		if w.sc.All() { // which class this line is
			b.WriteString("class " + heatmap.LaTeXText(classes[res.Class]) + ": ")
		}
		b.WriteString(heatmap.LaTeXText(s) + "\n")
	case "html":
		label := fmt.Sprintf("%s · %s · class %s (predicted %s)", w.sc.Label(), method, classes[res.Class], classes[res.Prediction])
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

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/whitebox-lstm/whitebox/ablation"
	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/corpus"
	"github.com/whitebox-lstm/whitebox/evaluate"
	"github.com/whitebox-lstm/whitebox/internal/regfile"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// evalFlags are the options of "whitebox evaluate".
type evalFlags struct {
	nf             netFlags
	gf             genFlags
	scores, class  string
	format, method string
	worst          int
	set            map[string]bool
}

func evaluateCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f evalFlags
	fs := flag.NewFlagSet("whitebox evaluate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.nf.register(fs)
	f.gf.register(fs)
	fs.StringVar(&f.scores, "scores", "", "a file of JSON lines {\"input\": ..., \"scores\": [...]} from any tool (- : standard input); default: run our methods on generated inputs")
	fs.StringVar(&f.class, "class", "", "without -scores: the class our methods explain (default: the predicted class)")
	fs.StringVar(&f.method, "method", "", "without -scores: one method only (occlusion, saliency, gxi, ig, lrp, deeplift, cd; default: all)")
	fs.StringVar(&f.format, "format", "text", "output: text, json, markdown or html (a page with heatmaps of the worst cases)")
	fs.IntVar(&f.worst, "worst", 5, "the number of worst explanations kept per method for the report")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: whitebox evaluate -net NET [-scores FILE] [-n N -len L -seed S] [-format F]

Scores explanations against the ground truth of the network's task (the
criteria are defined in EXPERIMENTS.md and package evaluate): counting
sign and spread; SP precision, recall, pointing game and ablation;
bracket last-unclosed. For each method it prints the mean, the standard
deviation and the percentage of inputs meeting the expectation.

With -scores, the explanations are JSON lines from any tool: "input" (a
string over the network's alphabet), "scores" (one per symbol) and
optionally "class" (the explained class; default: the predicted one),
"method" (lines of several methods are summarized per method) and
"attention" (an attention model's weights, one per symbol, as whitebox
attribute's records of such a model carry them: scored as one more
source, "attention weights", from the first method's lines).
"whitebox attribute" output works as is. Given -n, -len or -seed too,
the i-th line of each method must hold the i-th input "whitebox generate"
writes with them. A bad
line is reported on standard error with its number; the others are still
scored and the summary counts the skipped lines.

Without -scores, it generates the inputs ("whitebox generate" with the
same flags) and runs our methods on them (the paper's five, DeepLIFT and
contextual decomposition); for the SP networks it adds
Table 5's ablation test with the heatmap recomputed after each deletion.

Exit status: 0 success; 1 some line could not be scored; 2 a usage error;
130 interrupted (Ctrl-C).

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseFlagsOnly(fs, args); !ok {
		return status
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	job, err := newEvalJob(&f, fs)
	if err != nil {
		fmt.Fprintf(stderr, "whitebox evaluate: %s\n", errText(err))
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var rep *evaluate.Report
	failed := false
	if f.scores != "" {
		in := stdin
		if f.scores != "-" {
			if err := regfile.Flag("-scores", f.scores); err != nil {
				fmt.Fprintf(stderr, "whitebox evaluate: %v\n", err)
				return 2
			}
			file, err := os.Open(f.scores)
			if err != nil {
				fmt.Fprintf(stderr, "whitebox evaluate: -scores: %v\n", err)
				return 2
			}
			defer file.Close()
			in = file
		}
		job.bar = corpus.NewProgress(stderr)
		rep, failed, err = job.scoresFile(ctx, in, stderr)
	} else {
		job.bar = corpus.NewProgress(stderr)
		rep, err = job.ours(ctx)
	}
	job.bar.Finish()
	if err != nil {
		fmt.Fprintf(stderr, "whitebox evaluate: %v\n", err)
		if errors.Is(err, context.Canceled) {
			return exitInterrupted
		}
		return 1
	}
	if err := rep.Write(stdout, f.format); err != nil {
		fmt.Fprintf(stderr, "whitebox evaluate: %v\n", err)
		return 1
	}
	if failed {
		return 1
	}
	return 0
}

// evalJob is one evaluation.
type evalJob struct {
	f        *evalFlags
	net      *whitebox.Net
	ev       *evaluate.Evaluator
	expected []string // the inputs line i must hold (nil: any)
	methods  []attrib.Method
	class    attrib.Class
	bar      *corpus.Progress // on a terminal, the inputs done
}

func newEvalJob(f *evalFlags, fs *flag.FlagSet) (*evalJob, error) {
	switch f.format {
	case "text", "json", "markdown", "html":
	default:
		return nil, fmt.Errorf("-format %q: want text, json, markdown or html", f.format)
	}
	if f.worst < 0 {
		return nil, fmt.Errorf("-worst %d must not be negative", f.worst)
	}
	net, err := f.nf.build(fs)
	if err != nil {
		return nil, err
	}
	ev, err := evaluate.New(net)
	if err != nil {
		return nil, err
	}
	j := &evalJob{f: f, net: net, ev: ev, methods: attrib.AllMethods(), class: attrib.Predicted}
	if f.scores != "" {
		for _, name := range []string{"class", "method"} {
			if f.set[name] {
				return nil, fmt.Errorf("-%s applies without -scores only (a scores line names its class)", name)
			}
		}
		if !f.set["n"] && !f.set["len"] && !f.set["seed"] {
			return j, nil
		}
	}
	if j.expected, err = f.gf.inputs(net); err != nil {
		return nil, err
	}
	if f.method != "" {
		m, err := attrib.ParseMethod(f.method)
		if err != nil {
			return nil, fmt.Errorf("-method: %v", err)
		}
		j.methods = []attrib.Method{m}
	}
	if f.class != "" {
		k, err := net.Task.Class(f.class)
		if err != nil {
			return nil, fmt.Errorf("-class: %v", err)
		}
		j.class = attrib.ClassIndex(k)
	}
	return j, nil
}

func (j *evalJob) report(data string) *evaluate.Report {
	class := "predicted"
	if k, ok := j.class.Index(); ok {
		class = j.net.Task.Classes[k]
	}
	return &evaluate.Report{Net: j.net.Name, Class: class, Data: data}
}

func (j *evalJob) data() string {
	return fmt.Sprintf("%d generated inputs (-len %s -seed %d)", len(j.expected), j.f.gf.length, j.f.gf.seed)
}

// tokens spells the symbols of an input.
func (j *evalJob) tokens(sym []int) []string {
	out := make([]string, len(sym))
	for i, k := range sym {
		out[i] = j.net.Task.Alphabet[k]
	}
	return out
}

// attentionSource names the explanations made of the lines' "attention"
// (an attention model's weights α), judged beside the lines' scores.
const attentionSource = "attention weights"

// maxScoresLine is the longest line of a scores file read whole (a
// variable so that a test need not make a 64 MiB line).
var maxScoresLine = 64 << 20

// A scoresLine is one line of a scores file: its number, its text, and its
// length when it is longer than maxScoresLine.
type scoresLine struct {
	n    int
	text string
	long int64
}

// A parsedLine is what a worker made of a scoresLine: the line, or why it
// could not be parsed, and the values of its explanation, or why not.
type parsedLine struct {
	l          evaluate.Line
	unreadable error
	values     []evaluate.Value
	err        error
	// The line's attention weights judged as one more explanation.
	attnValues []evaluate.Value
	attnErr    error
}

// parse parses and judges a line, with a runner of the worker's own.
func (j *evalJob) parse(run *cell.Runner, in scoresLine) parsedLine {
	if in.long > 0 {
		return parsedLine{unreadable: fmt.Errorf("the line has %d bytes, more than the %d a line may have", in.long, maxScoresLine)}
	}
	l, err := evaluate.ParseLine(j.net.Task, []byte(strings.TrimSuffix(in.text, "\r")))
	if err != nil {
		return parsedLine{unreadable: err}
	}
	if l.Class < 0 {
		y, err := run.Forward(cell.OneHot(l.Symbols))
		if err != nil {
			return parsedLine{l: l, err: err}
		}
		l.Class = cell.Predict(y)
	}
	v, err := j.ev.Score(l.Symbols, l.Class, l.Scores)
	pl := parsedLine{l: l, values: v, err: err}
	if l.Attention != nil {
		pl.attnValues, pl.attnErr = j.ev.Score(l.Symbols, l.Class, l.Attention)
	}
	return pl
}

// scoresFile evaluates the lines of a scores file, one source per
// "method" the lines name (the file's name for lines that name none), the
// lines parsed and judged in parallel and gathered in order (package
// corpus); failed reports a line that could not be scored, err an
// interruption. With expected inputs, the k-th line of each source must
// hold the k-th input.
func (j *evalJob) scoresFile(ctx context.Context, in io.Reader, stderr io.Writer) (rep *evaluate.Report, failed bool, err error) {
	name, base := "standard input", "scores"
	if j.f.scores != "-" {
		name, base = j.f.scores, filepath.Base(j.f.scores)
	}
	data := "the lines of " + name
	if j.expected != nil {
		data = fmt.Sprintf("%s, checked against %s", data, j.data())
	}
	rep = j.report(data)
	rep.Class = "as each line names it (default: predicted)"
	sources := map[string]*evaluate.Collector{}
	seen := map[string]int{} // the lines of each source
	var order []string
	source := func(method string) (string, *evaluate.Collector) {
		if method == "" {
			method = base
		}
		c, ok := sources[method]
		if !ok {
			c = evaluate.NewCollector(method, j.ev.Criteria(), j.f.worst)
			sources[method] = c
			order = append(order, method)
		}
		return method, c
	}
	last := "" // the source of the previous line, which an unreadable line is counted against
	n := 0     // the line being gathered
	bad := func(c *evaluate.Collector, err error) {
		j.bar.Printf(stderr, "whitebox evaluate: %s:%d: %s\n", name, n, errText(err))
		c.Skip(1)
		failed = true
	}
	attnFrom := "" // the method whose lines' attention weights are judged
	// add judges one explanation of line l (its scores, or its attention
	// weights) as source m's next line.
	add := func(m string, c *evaluate.Collector, l evaluate.Line, scores []float64, values []evaluate.Value, err error) {
		if j.expected != nil {
			k := seen[m]
			seen[m] = k + 1
			if k >= len(j.expected) {
				bad(c, fmt.Errorf("more lines than the %d generated inputs", len(j.expected)))
				return
			}
			if want := j.expected[k]; l.Input != want {
				bad(c, fmt.Errorf("input %.40q is not generated input %d, %.40q", l.Input, k+1, want))
				return
			}
		}
		if err == nil {
			err = c.Add(evaluate.Example{Line: n, Input: l.Input, Tokens: j.tokens(l.Symbols), Scores: scores}, values)
		}
		if err != nil {
			bad(c, err)
		}
	}
	gather := func(in scoresLine, p parsedLine) error {
		n = in.n
		if p.unreadable != nil {
			m, c := source(last)
			seen[m]++
			bad(c, p.unreadable)
			return nil
		}
		l := p.l
		m, c := source(l.Method)
		last = m
		add(m, c, l, l.Scores, p.values, p.err)
		// An attention model's weights, from the lines of the first
		// method that carries them (every method's records of an input
		// carry the same α): one more source.
		if l.Attention != nil && (attnFrom == "" || attnFrom == m) {
			attnFrom = m
			am, ac := source(attentionSource)
			err := p.err
			if err == nil && p.attnErr != nil {
				err = fmt.Errorf("its attention weights: %w", p.attnErr)
			}
			add(am, ac, l, l.Attention, p.attnValues, err)
		}
		return nil
	}
	err = corpus.Run(ctx, corpus.Options{Progress: j.bar},
		func(yield func(scoresLine) bool) error {
			return corpus.EachLine(in, maxScoresLine, func(n int, s string, long int64) bool {
				return yield(scoresLine{n, s, long})
			})
		},
		func(int) (func(context.Context, scoresLine) parsedLine, error) {
			run, err := cell.NewRunner(j.net.Model)
			if err != nil {
				return nil, err
			}
			return func(_ context.Context, in scoresLine) parsedLine { return j.parse(run, in) }, nil
		}, gather)
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	if err != nil { // reading: the only error gather and the workers leave
		n++
		_, c := source(last)
		bad(c, fmt.Errorf("stopped reading: %v", err))
	}
	if len(order) == 0 {
		source("")
	}
	for _, m := range order {
		if k := seen[m]; j.expected != nil && k < len(j.expected) {
			j.bar.Printf(stderr, "whitebox evaluate: %s: %s: %d of the %d generated inputs are missing (lines for inputs %d..%d)\n", name, m, len(j.expected)-k, len(j.expected), k+1, len(j.expected))
			sources[m].Skip(len(j.expected) - k)
			failed = true
		}
		rep.Sources = append(rep.Sources, sources[m].Source())
	}
	return rep, failed, nil
}

// ours runs our methods on the generated inputs.
func (j *evalJob) ours(ctx context.Context) (*evaluate.Report, error) {
	rep := j.report(j.data())
	sym := make([][]int, len(j.expected))
	for i, s := range j.expected {
		var err error
		if sym[i], err = j.net.Task.Encode(s); err != nil {
			return nil, fmt.Errorf("generated input %d: %v", i+1, err)
		}
	}
	criteria := j.ev.Criteria()
	if j.net.Task.Name == "sp" {
		criteria = append(criteria, "ablation-recomputed")
	}
	for _, m := range j.methods {
		out, err := j.method(ctx, m, sym)
		if err != nil {
			return nil, err
		}
		c := evaluate.NewCollector(m.String(), criteria, j.f.worst)
		for i, o := range out {
			if err := c.Add(evaluate.Example{Line: i + 1, Input: j.expected[i], Tokens: j.tokens(sym[i]), Scores: o.scores}, o.values); err != nil {
				return nil, err
			}
		}
		rep.Sources = append(rep.Sources, c.Source())
	}
	return rep, nil
}

// judged is one input's explanation and its values, or why not.
type judged struct {
	scores []float64
	values []evaluate.Value
	err    error
}

// method explains every input with m and judges it, on one worker per
// core (package corpus; each with its own Explainer, one worker inside);
// the results, in input order, are the same bits whatever the number of
// cores. The first input that fails, in input order, stops the run.
func (j *evalJob) method(ctx context.Context, m attrib.Method, sym [][]int) ([]judged, error) {
	out := make([]judged, 0, len(sym))
	workers := min(runtime.GOMAXPROCS(0), max(len(sym), 1))
	err := corpus.Run(ctx, corpus.Options{Workers: workers},
		func(yield func(int) bool) error {
			for i := range sym {
				if !yield(i) {
					break
				}
			}
			return nil
		},
		func(int) (func(context.Context, int) judged, error) { return j.judge(m, sym) },
		func(i int, r judged) error {
			if r.err != nil {
				return fmt.Errorf("%s, input %d: %w", m, i+1, r.err)
			}
			out = append(out, r)
			j.bar.Set("evaluate "+m.String(), len(out), len(sym))
			return nil
		})
	return out, err
}

// judge returns a worker's function that explains input i with m and
// judges it.
func (j *evalJob) judge(m attrib.Method, sym [][]int) (func(context.Context, int) judged, error) {
	opt := attrib.DefaultOptions()
	opt.Workers = 1
	ex, err := attrib.NewExplainer(j.net.Model)
	if err != nil {
		return nil, err
	}
	stop := ablation.Stop{DFA: whitebox.SPAutomaton(), Class: 0}
	var abl *ablation.Evaluator
	if j.net.Task.Name == "sp" {
		if abl, err = ablation.New(j.net.Model, m, opt, stop); err != nil {
			return nil, err
		}
	}
	opt.Class = j.class
	var res attrib.Result
	return func(ctx context.Context, i int) judged {
		s := sym[i]
		opt.Workers = 1 + corpus.Lent(ctx) // the last inputs on the idle workers' cores
		if err := ex.Attribute(ctx, m, cell.OneHot(s), opt, &res); err != nil {
			return judged{err: err}
		}
		v, err := j.ev.Score(s, res.Class.Int(), res.Scores)
		if err == nil && abl != nil {
			var r evaluate.Value
			r, err = recomputed(ctx, abl, stop, s, v[0].Applies)
			v = append(v, r)
		}
		return judged{scores: slices.Clone(res.Scores), values: v, err: err}
	}, nil
}

// recomputed is Table 5's ablation test (package ablation) on one input:
// the percentage deleted, met when it is the optimum. It applies where the
// SP criteria do.
func recomputed(ctx context.Context, abl *ablation.Evaluator, stop ablation.Stop, s []int, applies bool) (evaluate.Value, error) {
	if !applies {
		return evaluate.Value{}, nil
	}
	n, err := abl.Run(ctx, s)
	if err != nil {
		return evaluate.Value{}, err
	}
	best, err := ablation.Optimal(stop, s)
	if err != nil {
		return evaluate.Value{}, err
	}
	return evaluate.Value{Applies: true, Defined: true, Value: 100 * float64(n) / float64(len(s)), Met: n == best}, nil
}

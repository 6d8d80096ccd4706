package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/heatmap"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// attributeFlags are the options of "whitebox attribute".
type attributeFlags struct {
	net, method, class, quadrature, format string
	m, u, eps                              float64
	k, steps                               int
}

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
	fs.IntVar(&f.steps, "steps", attrib.DefaultSteps, "IG: the number of quadrature steps")
	fs.StringVar(&f.quadrature, "quadrature", attrib.GaussLegendre.String(), "IG: gauss-legendre, riemann-left, riemann-right, riemann-middle or riemann-trapezoid")
	fs.Float64Var(&f.eps, "eps", attrib.DefaultEpsilon, "LRP: the stabilizer ε")
	fs.StringVar(&f.format, "format", "json", "output: json (one object per line), text (a heatmap; coloured on a terminal), html or latex")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: whitebox attribute -net NET -method METHOD [flags] [INPUT ...]

Scores every token of each INPUT (or of each line of standard input) for
the relevance class. A bad input is reported on standard error, the other
inputs are still scored, and the exit status is 1.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	job, err := newAttributeJob(f, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "whitebox attribute: %v\n", err)
		return 2
	}

	inputs := fs.Args()
	status := 0
	process := func(where, s string) {
		if err := job.do(s); err != nil {
			fmt.Fprintf(stderr, "whitebox attribute: %s%q: %v\n", where, s, err)
			status = 1
		}
	}
	if len(inputs) > 0 {
		for _, s := range inputs {
			process("", s)
		}
	} else {
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64*1024), 1<<30)
		for line := 1; sc.Scan(); line++ {
			s := strings.TrimRight(sc.Text(), "\r")
			if strings.TrimSpace(s) == "" {
				continue // blank lines separate nothing
			}
			process(fmt.Sprintf("line %d: ", line), s)
		}
		if err := sc.Err(); err != nil {
			fmt.Fprintf(stderr, "whitebox attribute: reading standard input: %v\n", err)
			return 1
		}
	}
	if err := job.finish(); err != nil {
		fmt.Fprintf(stderr, "whitebox attribute: %v\n", err)
		return 1
	}
	return status
}

// attributeJob scores inputs one at a time and writes them in its format.
type attributeJob struct {
	f      attributeFlags
	net    *whitebox.Net
	method attrib.Method
	opt    attrib.Options
	ex     *attrib.Explainer
	res    attrib.Result
	out    io.Writer
	color  bool
	rows   []heatmap.Row // html: written at the end, as one page
}

func newAttributeJob(f attributeFlags, out io.Writer) (*attributeJob, error) {
	if f.net == "" || f.method == "" {
		return nil, errors.New("-net and -method are required (see whitebox help attribute)")
	}
	cfg := whitebox.Config{M: f.m, U: f.u, K: f.k}
	if f.m == 0 {
		return nil, errors.New("parameter m = 0 must be positive")
	}
	net, err := whitebox.New(f.net, cfg)
	if err != nil {
		return nil, err
	}
	method, err := attrib.ParseMethod(f.method)
	if err != nil {
		return nil, err
	}
	q, err := attrib.ParseQuadrature(f.quadrature)
	if err != nil {
		return nil, err
	}
	if f.steps < 1 || f.steps > attrib.MaxSteps {
		return nil, fmt.Errorf("-steps %d must be in 1..%d", f.steps, attrib.MaxSteps)
	}
	if !(f.eps > 0) || math.IsInf(f.eps, 0) {
		return nil, fmt.Errorf("-eps %v must be positive and finite", f.eps)
	}
	opt := attrib.Options{Class: attrib.Predicted, Steps: f.steps, Quadrature: q, Epsilon: f.eps}
	if f.class != "" {
		if opt.Class, err = net.Task.Class(f.class); err != nil {
			return nil, err
		}
	}
	switch f.format {
	case "json", "text", "html", "latex":
	default:
		return nil, fmt.Errorf("unknown -format %q (formats: json, text, html, latex)", f.format)
	}
	j := &attributeJob{f: f, net: net, method: method, opt: opt, ex: attrib.NewExplainer(net.Network), out: out}
	if file, ok := out.(*os.File); ok {
		j.color = heatmap.IsTerminal(file)
	}
	return j, nil
}

func (j *attributeJob) do(s string) error {
	sym, err := j.net.Task.Encode(s)
	if err != nil {
		return err
	}
	if err := j.ex.Attribute(j.method, cell.OneHot(sym), j.opt, &j.res); err != nil {
		return err
	}
	tokens := make([]string, len(sym))
	for i, k := range sym {
		tokens[i] = j.net.Task.Alphabet[k]
	}
	h := heatmap.Heatmap{Tokens: tokens, Scores: j.res.Tokens}
	classes := j.net.Task.Classes
	var b bytes.Buffer
	switch j.f.format {
	case "json":
		j.writeJSON(&b, s, tokens)
	case "text":
		fmt.Fprintf(&b, "%s\t%s (class %s, predicted %s)\t", s, j.method, classes[j.res.Class], classes[j.res.Prediction])
		if j.color {
			heatmap.WriteANSI(&b, h)
		} else {
			heatmap.WritePlain(&b, h)
		}
		if j.method == attrib.IntegratedGradients {
			fmt.Fprintf(&b, "\tdelta=%.3g", j.res.Delta)
		}
		b.WriteByte('\n')
	case "latex":
		heatmap.WriteLaTeX(&b, h)
		b.WriteString(" % " + strings.ReplaceAll(s, "%", `\%`) + "\n")
	case "html":
		label := fmt.Sprintf("%s · %s · class %s (predicted %s)", j.net.Name, j.method, classes[j.res.Class], classes[j.res.Prediction])
		j.rows = append(j.rows, heatmap.Row{Label: label, Heatmap: heatmap.Heatmap{Tokens: tokens, Scores: append([]float64(nil), j.res.Tokens...)}})
		return nil
	}
	_, err = j.out.Write(b.Bytes())
	return err
}

func (j *attributeJob) finish() error {
	if j.f.format != "html" {
		return nil
	}
	return heatmap.HTMLPage(j.out, fmt.Sprintf("whitebox attribute -net %s -method %s", j.net.Name, j.method), j.rows)
}

// writeJSON writes SPEC §5's object, with the logits in class order.
func (j *attributeJob) writeJSON(b *bytes.Buffer, input string, tokens []string) {
	classes := j.net.Task.Classes
	b.WriteString(`{"net":`)
	writeString(b, j.net.Name)
	b.WriteString(`,"method":`)
	writeString(b, j.method.String())
	b.WriteString(`,"input":`)
	writeString(b, input)
	b.WriteString(`,"tokens":[`)
	for i, t := range tokens {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, t)
	}
	b.WriteString(`],"class":`)
	writeString(b, classes[j.res.Class])
	b.WriteString(`,"prediction":`)
	writeString(b, classes[j.res.Prediction])
	b.WriteString(`,"logits":{`)
	for k, c := range classes {
		if k > 0 {
			b.WriteByte(',')
		}
		writeString(b, c)
		b.WriteByte(':')
		writeNumber(b, j.res.Logits[k])
	}
	b.WriteString(`},"scores":[`)
	for i, v := range j.res.Tokens {
		if i > 0 {
			b.WriteByte(',')
		}
		writeNumber(b, v)
	}
	b.WriteByte(']')
	if j.method == attrib.IntegratedGradients {
		b.WriteString(`,"delta":`)
		writeNumber(b, j.res.Delta)
	}
	b.WriteString("}\n")
}

func writeString(b *bytes.Buffer, s string) {
	b.WriteString(strconv.Quote(s))
}

// writeNumber writes the shortest decimal that reads back as v; JSON has no
// NaN or infinity, so those become null.
func writeNumber(b *bytes.Buffer, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		b.WriteString("null")
		return
	}
	b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
}

package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/whitebox-lstm/whitebox/reproduce"
	"github.com/whitebox-lstm/whitebox/score"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// netFlags are the network flags of generate, evaluate and export, as
// attribute has them.
type netFlags struct {
	net  string
	m, u float64
	k    int
}

func (f *netFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.net, "net", "", "the network: "+strings.Join(whitebox.Names(), ", "))
	fs.Float64Var(&f.m, "m", whitebox.DefaultM, "the gate saturation constant m")
	fs.Float64Var(&f.u, "u", 0, "the counter scale u (default: counting 0.5, sp-counter 0.7, sp-fsa 1)")
	fs.IntVar(&f.k, "k", 0, fmt.Sprintf("the bracket network's stack size (default %d)", whitebox.DefaultStackSize))
}

// build makes the network; an explicit zero is refused, never replaced by
// the default.
func (f *netFlags) build(fs *flag.FlagSet) (*whitebox.Net, error) {
	if f.net == "" {
		return nil, fmt.Errorf("-net is required (networks: %s)", strings.Join(whitebox.Names(), ", "))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return whitebox.New(f.net, score.NetConfig(f.m, f.u, f.k, func(name string) bool { return set[name] }))
}

// genFlags choose the generated inputs of generate and evaluate.
type genFlags struct {
	n      int
	length string
	seed   uint64
}

func (g *genFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&g.n, "n", 1000, "the number of inputs")
	fs.StringVar(&g.length, "len", "1..20", "the input length L, or a range MIN..MAX drawn uniformly")
	fs.Uint64Var(&g.seed, "seed", reproduce.DefaultSeed, "the random seed")
}

// maxGenerate bounds -n and -len, and maxSymbols their product, so that
// a typo does not fill the memory or the disk.
const (
	maxGenerate = 10_000_000
	maxSymbols  = 1 << 28
)

// parseLen reads "L" or "MIN..MAX".
func parseLen(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		b = a
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || lo < 1 || hi < lo || hi > maxGenerate {
		return 0, 0, fmt.Errorf("-len %q: want a length L or a range MIN..MAX with 1 ≤ MIN ≤ MAX ≤ %d", s, maxGenerate)
	}
	return lo, hi, nil
}

// inputs draws the inputs: input i is the i-th string Task.Generate draws
// from whitebox.NewRand(seed), so the same flags give the same lines.
func (g *genFlags) inputs(net *whitebox.Net) ([]string, error) {
	if g.n < 0 || g.n > maxGenerate {
		return nil, fmt.Errorf("-n %d: want 0..%d", g.n, maxGenerate)
	}
	lo, hi, err := parseLen(g.length)
	if err != nil {
		return nil, err
	}
	if int64(g.n)*int64(hi) > maxSymbols {
		return nil, fmt.Errorf("-n %d inputs of up to -len %d symbols exceed %d symbols in all", g.n, hi, maxSymbols)
	}
	rng := whitebox.NewRand(g.seed)
	out := make([]string, 0, g.n)
	for range g.n {
		s, err := net.Task.Generate(rng, lo, hi)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func generateCmd(args []string, stdout, stderr io.Writer) int {
	var nf netFlags
	var gf genFlags
	fs := flag.NewFlagSet("whitebox generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nf.register(fs)
	gf.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: whitebox generate -net NET [-n N] [-len L|MIN..MAX] [-seed S] [-m M] [-u U] [-k K]

Writes N inputs of the network's task, one per line: the strings the
task's generator draws (uniform symbols; bracket: random valid prefixes
that end in every class), the same for the same flags on every machine.
Give them to any attribution tool, then score its output with
"whitebox evaluate -net NET -scores FILE".

Exit status: 0 success; 2 a usage error.

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseFlagsOnly(fs, args); !ok {
		return status
	}
	net, err := nf.build(fs)
	if err != nil {
		fmt.Fprintf(stderr, "whitebox generate: %v\n", err)
		return 2
	}
	inputs, err := gf.inputs(net)
	if err != nil {
		fmt.Fprintf(stderr, "whitebox generate: %v\n", err)
		return 2
	}
	w := bufio.NewWriter(stdout)
	for _, s := range inputs {
		w.WriteString(s)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "whitebox generate: %v\n", err)
		return 1
	}
	return 0
}

// groundTruth runs generate, evaluate or export, the commands that give
// outside tools the white-box networks' ground truth.
func groundTruth(cmd string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch cmd {
	case "generate":
		return generateCmd(args, stdout, stderr)
	case "evaluate":
		return evaluateCmd(args, stdin, stdout, stderr)
	}
	return exportCmd(args, stdout, stderr)
}

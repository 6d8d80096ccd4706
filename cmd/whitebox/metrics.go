package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/faithfulness"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// metricsCmd is "whitebox metrics": the faithfulness metrics measured
// against the white-box networks' ground truth.
func metricsCmd(args []string, stdout, stderr io.Writer) int {
	var gf genFlags
	var nets, format string
	var cfg faithfulness.Config
	var steps int
	fs := flag.NewFlagSet("whitebox metrics", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gf.register(fs)
	fs.StringVar(&nets, "net", "all", "the networks, comma-separated, or all: "+strings.Join(whitebox.Names(), ", "))
	fs.StringVar(&format, "format", "text", "output: text or markdown")
	fs.IntVar(&steps, "steps", attrib.DefaultSteps, "IG's Gauss-Legendre steps")
	fs.IntVar(&cfg.InfidelitySamples, "infidelity-samples", faithfulness.DefaultInfidelitySamples, "infidelity's random token subsets per input")
	fs.IntVar(&cfg.SensitivitySamples, "sensitivity-samples", faithfulness.DefaultSensitivitySamples, "max-sensitivity's noisy copies per input")
	fs.Float64Var(&cfg.Radius, "radius", faithfulness.DefaultRadius, "max-sensitivity's noise radius")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: whitebox metrics [-net NETS] [-n N -len L -seed S] [-format F]

Computes the standard faithfulness metrics (comprehensiveness and
sufficiency as AOPC, MoRF/LeRF deletion and insertion curves, each with
tokens deleted or replaced by the zero row; infidelity; max-sensitivity;
package faithfulness defines them) for our methods (the paper's five,
DeepLIFT and contextual decomposition) on the inputs
"whitebox generate" writes with the same flags (the networks with their
default parameters), and compares each metric's ranking of the methods
with the ranking by the ground-truth criteria of "whitebox evaluate":
Kendall's tau-b and the per-input agreement. The seed also draws the
perturbations. Each network runs its inputs on every core; the numbers
are the same on any machine.

Exit status: 0 success; 1 a failure at run time; 2 a usage error.

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseFlagsOnly(fs, args); !ok {
		return status
	}
	if format != "text" && format != "markdown" {
		fmt.Fprintf(stderr, "whitebox metrics: -format %q: want text or markdown\n", format)
		return 2
	}
	names := whitebox.Names()
	if nets != "all" {
		names = strings.Split(nets, ",")
	}
	var built []*whitebox.Net
	var inputs [][]string
	for _, name := range names {
		net, err := whitebox.New(name, whitebox.Config{})
		if err == nil {
			var in []string
			if in, err = gf.inputs(net); err == nil {
				built, inputs = append(built, net), append(inputs, in)
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "whitebox metrics: %v\n", err)
			return 2
		}
	}
	if steps < 1 || steps > attrib.MaxSteps {
		fmt.Fprintf(stderr, "whitebox metrics: -steps %d: want 1..%d\n", steps, attrib.MaxSteps)
		return 2
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"infidelity-samples", cfg.InfidelitySamples}, {"sensitivity-samples", cfg.SensitivitySamples}} {
		if c.v < 1 || c.v > 10000 {
			fmt.Fprintf(stderr, "whitebox metrics: -%s %d: want 1..10000\n", c.name, c.v)
			return 2
		}
	}
	if !(cfg.Radius > 0 && cfg.Radius <= 1) {
		fmt.Fprintf(stderr, "whitebox metrics: -radius %v: want (0, 1]\n", cfg.Radius)
		return 2
	}
	cfg.Seed = gf.seed
	opt := attrib.DefaultOptions()
	opt.Steps = steps
	methods := faithfulness.AttribMethodsOf(opt, attrib.AllMethods())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var tables []*faithfulness.Table
	for i, net := range built {
		start := time.Now()
		t, err := faithfulness.Run(ctx, net, inputs[i], methods, cfg)
		if err != nil {
			fmt.Fprintf(stderr, "whitebox metrics: %s: %v\n", net.Name, err)
			if errors.Is(err, context.Canceled) {
				return exitInterrupted
			}
			return 1
		}
		fmt.Fprintf(stderr, "whitebox metrics: %s: %d inputs in %.1fs\n", net.Name, len(inputs[i]), time.Since(start).Seconds())
		tables = append(tables, t)
	}
	if err := faithfulness.Write(stdout, tables, format == "markdown"); err != nil {
		fmt.Fprintf(stderr, "whitebox metrics: %v\n", err)
		return 1
	}
	return 0
}

// Command whitebox-beam attributes a corpus with an Apache Beam pipeline:
// the lines of files (or globs) scored as `whitebox attribute` scores them,
// written as sharded JSON lines, each with its input's "file" and "line".
//
// Usage:
//
//	whitebox-beam -net NET -method METHOD -out PREFIX [flags] FILE|GLOB ... [Beam flags]
//	whitebox-beam -model FILE -method METHOD -out PREFIX [flags] FILE|GLOB ... [Beam flags]
//
// Locally it runs on prism, in-process; --runner, --endpoint and the other
// Beam flags submit the same pipeline to Flink, Spark or Dataflow. Run
// "whitebox-beam -h" for the flags.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/whitebox-lstm/whitebox/beam/pipeline"
	"github.com/whitebox-lstm/whitebox/score"
)

func main() {
	ours, theirs := splitArgs(newFlags(new(options)), flag.CommandLine, os.Args[1:])
	flag.CommandLine.Usage = func() {
		fmt.Fprintln(os.Stderr, "whitebox-beam: a bad Beam flag (whitebox-beam -beam-help lists them)")
	}
	flag.CommandLine.Parse(theirs) // exits 2 on a bad Beam flag
	// In a worker (--worker, as a runner starts the binary), Init runs the
	// harness and never returns.
	beam.Init()
	if !slices.Contains(ours, "-v") && !slices.Contains(ours, "--v") && !slices.Contains(ours, "-v=true") {
		// prism's and the SDK's progress notes; -v shows them.
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, ours, os.Stdout, os.Stderr))
}

// options are whitebox-beam's own flags.
type options struct {
	score       score.Config
	out         string
	shards      int
	blockLines  int
	parallel    int
	chunk       string
	elementTime time.Duration
	beamHelp    bool
	verbose     bool
}

// newFlags defines our flags: attribute's (package score) and the
// pipeline's. None is one of Beam's (TestFlagsDoNotCollide).
func newFlags(o *options) *flag.FlagSet {
	o.score = score.DefaultConfig()
	fs := flag.NewFlagSet("whitebox-beam", flag.ContinueOnError)
	o.score.RegisterFlags(fs, "")
	fs.StringVar(&o.out, "out", "", "the output prefix: PREFIX-00000-of-0000N.jsonl and PREFIX-errors-00000-of-0000N.jsonl (a local path, or gs://…)")
	fs.IntVar(&o.shards, "shards", 4, "the number of output shards")
	fs.IntVar(&o.parallel, "element-workers", 0, "goroutines that score the lines of one element (0: GOMAXPROCS on prism in-process, 1 on other runners, which split bundles finely)")
	fs.IntVar(&o.blockLines, "block-lines", 1000, "consecutive blocks of this many lines of a file go to consecutive shards")
	fs.StringVar(&o.chunk, "chunk", "auto", "lines per element, or auto: as many as take -element-time, timed on the first lines")
	fs.DurationVar(&o.elementTime, "element-time", 300*time.Millisecond, "-chunk auto: the work of one element (prism splits the work of a slow bundle, not finer, across cores)")
	fs.BoolVar(&o.beamHelp, "beam-help", false, "list Beam's flags")
	fs.BoolVar(&o.verbose, "v", false, "show the runner's log (prism's progress notes)")
	return fs
}

// splitArgs sends the flags that Beam defines in beamFlags to Beam and the
// rest (ours, the inputs, and unknown flags, which ours then reports) to
// us. A flag takes the next argument as its value unless it is a boolean
// or is written -name=value; "--" ends the flags.
func splitArgs(ours, beamFlags *flag.FlagSet, args []string) (mine, theirs []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(mine, args[i:]...), theirs
		}
		if len(a) < 2 || a[0] != '-' {
			mine = append(mine, a)
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		name, _, hasValue := strings.Cut(name, "=")
		fl, to := ours.Lookup(name), &mine
		if fl == nil {
			if fl = beamFlags.Lookup(name); fl != nil {
				to = &theirs
			}
		}
		*to = append(*to, a)
		if fl != nil && !hasValue && !isBool(fl) && i+1 < len(args) {
			i++
			*to = append(*to, args[i])
		}
	}
	return mine, theirs
}

func isBool(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

const usage = `Usage: whitebox-beam -net NET -method METHOD -out PREFIX [flags] FILE|GLOB ... [Beam flags]
       whitebox-beam -model FILE -method METHOD -out PREFIX [flags] FILE|GLOB ... [Beam flags]

Attributes every line of the input files (token ids, words with -vocab, or
strings over a network's alphabet, as "whitebox attribute" reads standard
input) with an Apache Beam pipeline, and writes the JSON lines of
"whitebox attribute", each with "file" and "line" added at its end, to
-shards files PREFIX-SSSSS-of-NNNNN.jsonl, in input order within each
(blocks of -block-lines lines to consecutive shards). Bad
lines (and IG's completeness warnings) go to PREFIX-errors-SSSSS-of-NNNNN.jsonl
with their file and line; the others are still scored. A re-run writes the
same bytes (they depend on the inputs, the attribute flags, -shards and
-block-lines only); a shard file appears only when complete.

Locally the pipeline runs on prism, in-process, on all cores. The Beam
flags (-runner, -endpoint, -environment_type, -worker_binary, …;
-beam-help lists them) submit it to Flink, Spark or Dataflow: see the
README, "Beyond one machine". The model file, -vocab and -classes must be
readable at the same path by every worker.

Exit status: 0 success; 1 some input failed (see the errors files) or the
pipeline failed; 2 a usage error; 130 interrupted.

Flags:
`

// run is the command after Beam's flags: our flags and the inputs.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fs := newFlags(&o)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	var inputs []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			inputs = append(inputs, rest...)
			break
		}
		inputs, args = append(inputs, rest[0]), rest[1:]
	}
	if o.beamHelp {
		flag.CommandLine.SetOutput(stdout)
		flag.CommandLine.PrintDefaults()
		return 0
	}
	o.score.MarkSet(fs, "")
	fail := func(status int, err error) int {
		fmt.Fprintf(stderr, "whitebox-beam: %v\n", err)
		return status
	}
	if len(inputs) == 0 || o.out == "" {
		return fail(2, errors.New("give -out PREFIX and at least one input file or glob (see whitebox-beam -h)"))
	}
	if sc, err := score.New(o.score); err != nil {
		return fail(2, err)
	} else if note := sc.Note(); note != "" {
		fmt.Fprintln(stderr, note) // once, here, not on each worker
	}
	files, err := pipeline.Expand(ctx, inputs)
	if err != nil {
		return fail(2, err)
	}
	chunk := 0
	if o.chunk == "auto" {
		if !(o.elementTime > 0) {
			return fail(2, fmt.Errorf("-element-time %v must be positive", o.elementTime))
		}
		if chunk, err = pipeline.Calibrate(ctx, o.score, files, o.elementTime); err != nil {
			return fail(2, err)
		}
	} else if _, err := fmt.Sscan(o.chunk, &chunk); err != nil || chunk < 1 {
		return fail(2, fmt.Errorf("-chunk %s must be auto or a positive number of lines", o.chunk))
	}
	if o.parallel < 0 {
		return fail(2, fmt.Errorf("-element-workers %d must not be negative", o.parallel))
	}
	if o.parallel == 0 {
		o.parallel = 1
		if r := flag.CommandLine.Lookup("runner"); r == nil || r.Value.String() == "" || strings.EqualFold(r.Value.String(), "prism") || r.Value.String() == "PrismRunner" {
			o.parallel = runtime.GOMAXPROCS(0)
		}
	}
	p, s := beam.NewPipelineWithRoot()
	opt := pipeline.Options{Files: files, Output: o.out, Shards: o.shards, ChunkLines: chunk, BlockLines: o.blockLines, Parallel: o.parallel, Score: o.score}
	if err := pipeline.Build(s, opt); err != nil {
		return fail(2, err)
	}
	start := time.Now()
	if err := beamx.Run(ctx, p); err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "whitebox-beam: interrupted")
			return 130
		}
		return fail(1, err)
	}
	os.Remove(o.out + ".parts") // local: the empty folder of the parts
	lines, bad, err := count(ctx, o.out, o.shards)
	if err != nil {
		return fail(1, err)
	}
	fmt.Fprintf(stderr, "whitebox-beam: %d lines scored, %d failed, in %.1fs (%d lines per element): %s\n",
		lines, bad, time.Since(start).Seconds(), chunk, pipeline.ShardName(o.out, 0, o.shards, false)+"…")
	if bad > 0 {
		fmt.Fprintf(stderr, "whitebox-beam: the failed lines are in %s-errors-*\n", filepath.Base(o.out))
		return 1
	}
	return 0
}

// count counts the JSON lines and the failed lines of the shards.
func count(ctx context.Context, prefix string, shards int) (lines, bad int, err error) {
	for i := range shards {
		for _, errs := range []bool{false, true} {
			name := pipeline.ShardName(prefix, i, shards, errs)
			fs, err := filesystem.New(ctx, name)
			if err != nil {
				return 0, 0, err
			}
			r, err := fs.OpenRead(ctx, name)
			if err != nil {
				fs.Close()
				return 0, 0, err
			}
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64*1024), 1<<30)
			for sc.Scan() {
				switch {
				case !errs:
					lines++
				case strings.Contains(sc.Text(), `,"error":`):
					bad++
				}
			}
			r.Close()
			fs.Close()
			if err := sc.Err(); err != nil {
				return 0, 0, fmt.Errorf("%s: %v", name, err)
			}
		}
	}
	return lines, bad, nil
}

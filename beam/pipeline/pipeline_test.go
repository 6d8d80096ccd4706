package pipeline

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/whitebox-lstm/whitebox/score"
)

func TestMain(m *testing.M) {
	flag.Parse()
	beam.Init()
	os.Exit(m.Run())
}

// spCorpus writes n lines over abcd (every 97th with a bad symbol, every
// 89th blank) to files in dir, and returns their paths.
func spCorpus(t testing.TB, dir string, files, n, maxLen int) []string {
	rng := rand.New(rand.NewPCG(16, 17))
	var paths []string
	for f := range files {
		var b strings.Builder
		for i := range n / files {
			switch {
			case i%89 == 88:
				b.WriteString("\n")
				continue
			}
			s := make([]byte, 1+rng.IntN(maxLen))
			for k := range s {
				s[k] = "abcd"[rng.IntN(4)]
			}
			if i%97 == 5 {
				s[rng.IntN(len(s))] = 'x'
			}
			b.Write(s)
			b.WriteString("\n")
		}
		p := filepath.Join(dir, fmt.Sprintf("part-%d.txt", f))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// run runs the pipeline on prism and returns the output and error shards.
func run(t testing.TB, o Options) (outs, errs [][]byte) {
	p, s := beam.NewPipelineWithRoot()
	if err := Build(s, o); err != nil {
		t.Fatal(err)
	}
	if _, err := prism.Execute(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	for i := range o.Shards {
		out, err := os.ReadFile(ShardName(o.Output, i, o.Shards, false))
		if err != nil {
			t.Fatal(err)
		}
		e, err := os.ReadFile(ShardName(o.Output, i, o.Shards, true))
		if err != nil {
			t.Fatal(err)
		}
		outs, errs = append(outs, out), append(errs, e)
	}
	return outs, errs
}

// whitebox builds the root module's command.
func whitebox(t testing.TB) string {
	bin := filepath.Join(t.TempDir(), "whitebox")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/whitebox-lstm/whitebox/cmd/whitebox")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// attribute runs `whitebox attribute args` on the files, one after the
// other, and returns each file's standard output and standard error.
func attribute(t testing.TB, bin string, files []string, args ...string) (outs, errs []string) {
	for _, f := range files {
		in, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, append([]string{"attribute"}, args...)...)
		var o, e bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = in, &o, &e
		err = cmd.Run()
		in.Close()
		if x, ok := err.(*exec.ExitError); err != nil && !(ok && x.ExitCode() == 1) {
			t.Fatalf("whitebox attribute: %v\n%s", err, e.String())
		}
		outs, errs = append(outs, o.String()), append(errs, e.String())
	}
	return outs, errs
}

// The acceptance test: a pipeline on prism over a few thousand generated
// lines writes, once "file" and "line" are stripped, the bytes of
// `whitebox attribute` on the same lines, in input order within each shard;
// the bad lines are in the errors output with their file and line; a
// re-run writes the same bytes.
func TestPipelineIsAttribute(t *testing.T) {
	dir := t.TempDir()
	files := spCorpus(t, dir, 3, 3000, 40)
	args := []string{"-net", "sp-counter", "-method", "ig", "-steps", "20"}
	cfg := score.DefaultConfig()
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	cfg.RegisterFlags(fs, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	cfg.MarkSet(fs, "")
	ctx := context.Background()
	refs, err := Expand(ctx, []string{filepath.Join(dir, "part-*.txt")})
	if err != nil || len(refs) != 3 {
		t.Fatalf("Expand: %v, %v", refs, err)
	}
	o := Options{Files: refs, Output: filepath.Join(dir, "out", "scores"), Shards: 4, ChunkLines: 100, BlockLines: 150, Score: cfg}
	outs, errs := run(t, o)

	// Per file, the lines in order, from all shards.
	type key struct {
		file string
		line int
	}
	got := map[key]string{}
	last := map[string]int{}
	for i, shard := range outs {
		for _, l := range strings.SplitAfter(string(shard), "\n") {
			if l == "" {
				continue
			}
			j := strings.LastIndex(l, `,"file":`)
			if j < 0 {
				t.Fatalf("shard %d: no file in %q", i, l)
			}
			var file string
			var line int
			tail := l[j+len(`,"file":`):]
			k := strings.LastIndex(tail, `,"line":`)
			if _, err := fmt.Sscanf(tail[k:], `,"line":%d}`, &line); err != nil {
				t.Fatalf("%q: %v", tail, err)
			}
			file = strings.Trim(tail[:k], `"`)
			if line <= last[fmt.Sprint(i, file)] {
				t.Fatalf("shard %d: %s line %d after line %d", i, file, line, last[fmt.Sprint(i, file)])
			}
			last[fmt.Sprint(i, file)] = line
			got[key{file, line}] = l[:j] + "}\n"
		}
	}
	bin := whitebox(t)
	want, wantErr := attribute(t, bin, files, args...)
	n := 0
	for fi, f := range files {
		// attribute's lines in order; the pipeline's lines of f in line order.
		var mine strings.Builder
		for line := 1; line <= 3000; line++ {
			mine.WriteString(got[key{f, line}])
		}
		if mine.String() != want[fi] {
			t.Fatalf("%s: the pipeline's lines differ from whitebox attribute's", f)
		}
		n += strings.Count(want[fi], "\n")
	}
	if n != len(got) || n < 2500 {
		t.Fatalf("%d lines from attribute, %d from the pipeline", n, len(got))
	}
	// The errors: the same lines as attribute's standard error.
	var bad []string
	warnings := 0
	for _, e := range errs {
		for _, l := range strings.Split(strings.TrimSpace(string(e)), "\n") {
			if l != "" && strings.Contains(l, `"error":`) {
				bad = append(bad, l)
			}
			if strings.Contains(l, `"warning":`) {
				warnings++
			}
		}
	}
	var wantBad, wantWarnings int
	for fi, f := range files {
		shown, counted := 0, -1
		for _, l := range strings.Split(wantErr[fi], "\n") {
			// attribute shows the first few warnings, then counts them all
			// in one line; whitebox-beam writes every one.
			if _, after, ok := strings.Cut(l, "completeness gap exceeds -tol on "); ok {
				fmt.Sscanf(after, "%d of", &counted)
			}
			var line int
			if _, err := fmt.Sscanf(l, "whitebox attribute: line %d:", &line); err != nil {
				continue
			}
			if strings.Contains(l, ": warning: ") {
				shown++
				continue
			}
			wantBad++
			found := false
			for _, b := range bad {
				found = found || strings.HasPrefix(b, fmt.Sprintf(`{"file":%q,"line":%d,"input":`, f, line))
			}
			if !found {
				t.Errorf("%s line %d: not in the errors output", f, line)
			}
		}
		if counted >= 0 {
			wantWarnings += counted
		} else {
			wantWarnings += shown
		}
	}
	if wantBad == 0 || wantBad != len(bad) || warnings != wantWarnings {
		t.Fatalf("%d error lines and %d warnings, attribute reports %d and %d", len(bad), warnings, wantBad, wantWarnings)
	}
	// A re-run, with other elements: the same bytes.
	o.ChunkLines, o.Parallel = 37, 3
	outs2, errs2 := run(t, o)
	for i := range outs {
		if !bytes.Equal(outs[i], outs2[i]) || !bytes.Equal(errs[i], errs2[i]) {
			t.Fatalf("shard %d: a re-run wrote other bytes", i)
		}
	}
}

// idCorpus writes n lines of 1–30 token ids below 40 (the test model's
// vocabulary) to a file in dir.
func idCorpus(t testing.TB, dir string, n int) string {
	rng := rand.New(rand.NewPCG(18, 19))
	var b strings.Builder
	for range n {
		for k := range 1 + rng.IntN(30) {
			if k > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprint(&b, rng.IntN(40))
		}
		b.WriteByte('\n')
	}
	p := filepath.Join(dir, "ids.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// BenchmarkCorpus: lines per second over the same corpus, for the
// pipeline on prism (4 shards, -chunk auto, calibration included,
// GOMAXPROCS goroutines per element, as the command runs it) and for
// `whitebox attribute` on standard input, all cores each, and their ratio: IG (50 steps) with the white-box
// sp-counter network on 60 000 lines of 1–60 symbols, and with the
// imported 2-layer BiLSTM of model/testdata on 20 000 lines of 1–30 ids
// (-short: a tenth).
func BenchmarkCorpus(b *testing.B) {
	dir := b.TempDir()
	short := 1
	if testing.Short() {
		short = 10
	}
	netLines, modelLines := 60000/short, 20000/short
	cases := []struct {
		name  string
		file  string
		lines int
		args  []string
	}{
		{"net", spCorpus(b, dir, 1, netLines, 60)[0], netLines, []string{"-net", "sp-counter", "-method", "ig"}},
		{"model", idCorpus(b, dir, modelLines), modelLines, []string{"-model", "../../model/testdata/bi2.safetensors", "-method", "ig"}},
	}
	bin := whitebox(b)
	for _, c := range cases {
		cfg := score.DefaultConfig()
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		cfg.RegisterFlags(fs, "")
		if err := fs.Parse(c.args); err != nil {
			b.Fatal(err)
		}
		cfg.MarkSet(fs, "")
		refs, err := Expand(context.Background(), []string{c.file})
		if err != nil {
			b.Fatal(err)
		}
		// The two alternate, so that the other load of a shared machine
		// falls on both alike.
		b.Run(c.name, func(b *testing.B) {
			var inAttribute, inPrism time.Duration
			chunk := 0
			for range b.N {
				start := time.Now()
				attribute(b, bin, []string{c.file}, c.args...)
				inAttribute += time.Since(start)
				start = time.Now()
				// As the command does: calibrate, then run.
				if chunk, err = Calibrate(context.Background(), cfg, refs, 300*time.Millisecond); err != nil {
					b.Fatal(err)
				}
				o := Options{Files: refs, Output: filepath.Join(dir, "out", c.name), Shards: 4, ChunkLines: chunk, BlockLines: 1000, Parallel: runtime.GOMAXPROCS(0), Score: cfg}
				run(b, o)
				inPrism += time.Since(start)
			}
			b.ReportMetric(float64(c.lines*b.N)/inAttribute.Seconds(), "attribute-lines/s")
			b.ReportMetric(float64(c.lines*b.N)/inPrism.Seconds(), "prism-lines/s")
			b.ReportMetric(inAttribute.Seconds()/inPrism.Seconds(), "prism/attribute")
			b.Logf("GOMAXPROCS %d, %d lines per element", runtime.GOMAXPROCS(0), chunk)
		})
	}
}

// A model on a Beam filesystem (memfs here, gs:// on Dataflow) is copied
// to the worker and scored as the local file is; the records name it as
// given.
func TestRemoteModel(t *testing.T) {
	const local = "../../model/testdata/bi2.safetensors"
	data, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	const remote = "memfs://models/bi2.safetensors"
	memfs.Write(remote, data)
	c := Chunk{File: "in.txt", Lines: []int{1, 2}, Inputs: []string{"3 1 4", "1 5 9 2 6"}, Errs: []string{"", ""}}
	var got [2]string
	for i, m := range []string{local, remote} {
		cfg := score.DefaultConfig()
		cfg.Model, cfg.Method = m, "ig"
		sc, err := scorerFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ScoreChunk(context.Background(), []*score.Scorer{sc}, c)
		if err != nil || len(out.Errs) > 0 {
			t.Fatalf("%s: %v %s", m, err, out.Errs)
		}
		got[i] = strings.ReplaceAll(string(out.Out), m, "MODEL")
	}
	if got[0] != got[1] || !strings.HasPrefix(got[0], `{"model":"MODEL","head":"hn","method":"ig"`) {
		t.Fatalf("local:\n%s\nremote:\n%s", got[0], got[1])
	}
}

// The whole pipeline on another filesystem (memfs here, as gs:// on
// Dataflow): inputs, model and output there, the same bytes as locally.
func TestRemoteFiles(t *testing.T) {
	dir := t.TempDir()
	in := idCorpus(t, dir, 500)
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	memfs.Write("memfs://corpus/ids.txt", append(data, "3 x\n"...))
	if err := os.WriteFile(in, append(data, "3 x\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	const local = "../../model/testdata/bi2.safetensors"
	model, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	memfs.Write("memfs://models/bi2.safetensors", model)
	var got [2]string
	for i, where := range []struct{ input, model, output string }{
		{in, local, filepath.Join(dir, "out", "s")},
		{"memfs://corpus/*.txt", "memfs://models/bi2.safetensors", "memfs://out/s"},
	} {
		cfg := score.DefaultConfig()
		cfg.Model, cfg.Method = where.model, "gxi"
		refs, err := Expand(context.Background(), []string{where.input})
		if err != nil || len(refs) != 1 {
			t.Fatalf("%s: %v %v", where.input, refs, err)
		}
		o := Options{Files: refs, Output: where.output, Shards: 2, ChunkLines: 50, BlockLines: 100, Score: cfg}
		p, s := beam.NewPipelineWithRoot()
		if err := Build(s, o); err != nil {
			t.Fatal(err)
		}
		if _, err := prism.Execute(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		for shard := range 2 {
			for _, errs := range []bool{false, true} {
				name := ShardName(where.output, shard, 2, errs)
				fs, err := filesystem.New(context.Background(), name)
				if err != nil {
					t.Fatal(err)
				}
				r, err := fs.OpenRead(context.Background(), name)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(r)
				r.Close()
				all.Write(b)
			}
		}
		// The shards start where the file's name says: compare the lines.
		lines := strings.SplitAfter(strings.NewReplacer(refs[0].Path, "INPUT", where.model, "MODEL").Replace(all.String()), "\n")
		slices.Sort(lines)
		got[i] = strings.Join(lines, "")
	}
	if got[0] != got[1] || strings.Count(got[0], "\n") != 501 || !strings.Contains(got[0], `"line":501,"input":"3 x","error"`) {
		t.Fatalf("local:\n%.300s\nmemfs:\n%.300s", got[0], got[1])
	}
}

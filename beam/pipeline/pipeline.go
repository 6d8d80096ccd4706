// Package pipeline attributes a corpus with an Apache Beam pipeline: the
// lines of some files, scored as `whitebox attribute` scores them (package
// score, the same bytes), written as sharded JSON lines, each carrying its
// input's file and line number.
//
// The pipeline reads each file into Chunks of consecutive lines (elements
// of at least ~100 ms of work, so that a runner that splits bundles, such as
// prism, spreads them over the cores), reshuffles them, scores them into
// part files, groups the parts by shard (blocks of consecutive lines go to
// consecutive shards) and joins each shard's parts in input order:
//
//	<Output>-00000-of-00004.jsonl         the JSON lines, with "file" and "line"
//	<Output>-errors-00000-of-00004.jsonl  the bad lines and warnings, with "file" and "line"
//
// A shard's bytes depend only on the input, the Config, Shards and
// BlockLines (not on ChunkLines, Parallel or the runner): a re-run writes
// the same bytes, and a file is replaced only once it is complete.
package pipeline

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local files
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/whitebox-lstm/whitebox/corpus"
	"github.com/whitebox-lstm/whitebox/score"
)

// Options are what a pipeline attributes and where it writes.
type Options struct {
	// Files are the inputs, in order (Expand turns patterns into them).
	Files []File
	// Output is the prefix of the shard files (a local path, or any
	// filesystem Beam registers, such as gs:// with its package imported).
	Output string
	// Shards is the number of output shards, at least 1.
	Shards int
	// ChunkLines is the number of lines per element, at least 1: enough for
	// ~100 ms of work (see Calibrate). The output does not depend on it.
	ChunkLines int
	// Parallel is the number of goroutines that score the lines of one
	// element (0 or 1: one). A runner that splits bundles finely (Flink,
	// Dataflow) needs none; prism splits a stage's first bundle readily but
	// the next ones ever more reluctantly, so that on many cores it needs
	// them (the command gives prism GOMAXPROCS).
	Parallel int
	// BlockLines, at least 1: the lines of a file go to the shards in
	// blocks of BlockLines consecutive lines, consecutive blocks to
	// consecutive shards.
	BlockLines int
	// Score is the attribution, as `whitebox attribute`'s flags give it.
	Score score.Config
}

// A File is one input file: the pattern it came from (its index among the
// patterns), its index among that pattern's matches and its path.
type File struct {
	Pattern, Index int
	Path           string
}

// A Chunk is consecutive input lines of one file: the element that is
// scored.
type Chunk struct {
	File           string
	Pattern, Index int   // the File's
	Seq            int   // the chunk's number in its file, from 0
	Lines          []int // the line numbers, from 1
	Inputs         []string
	// Errs holds, per line, why it could not be read whole ("": it was).
	Errs []string
}

// Scored is a Chunk's output: its JSON lines and its error lines, or the
// name of the part file that holds them (Part, and Part + ".errors").
type Scored struct {
	Pattern, Index int // the File's
	Seq            int // the Chunk's: in a shard, the first line of its lines
	// Marker: no lines, only the shard's presence, so that every shard is
	// written, even an empty one.
	Marker    bool
	Out, Errs []byte
	Part      string
}

func init() {
	beam.RegisterType(reflect.TypeOf((*File)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Chunk)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Scored)(nil)).Elem())
	register.DoFn3x1[context.Context, File, func(Chunk), error](&readFn{})
	register.Emitter1[Chunk]()
	register.DoFn3x1[context.Context, Chunk, func(int, Scored), error](&scoreFn{})
	register.Emitter2[int, Scored]()
	register.Function2x0(markerFn)
	register.DoFn3x1[context.Context, int, func(*Scored) bool, error](&writeFn{})
	register.Iter1[Scored]()
}

// Expand turns file names and glob patterns into Files, in the order of
// the patterns and, within a pattern, in the filesystem's (sorted) order;
// a file matched twice is read once. A pattern that matches nothing is an
// error.
func Expand(ctx context.Context, patterns []string) ([]File, error) {
	var files []File
	seen := map[string]bool{}
	for p, pat := range patterns {
		fs, err := filesystem.New(ctx, pat)
		if err != nil {
			return nil, err
		}
		names, err := fs.List(ctx, pat)
		fs.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", pat, err)
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("%s: no such file", pat)
		}
		slices.Sort(names)
		for i, name := range names {
			if !seen[name] {
				seen[name] = true
				files = append(files, File{Pattern: p, Index: i, Path: name})
			}
		}
	}
	return files, nil
}

// Build adds the pipeline to s. It checks o and the Config (loading the
// model), so that a mistake is found before anything runs.
func Build(s beam.Scope, o Options) error {
	if len(o.Files) == 0 {
		return fmt.Errorf("no input files")
	}
	if o.Output == "" {
		return fmt.Errorf("no output prefix")
	}
	if o.Shards < 1 || o.Shards > 99999 {
		return fmt.Errorf("shards %d must be in 1..99999", o.Shards)
	}
	if o.ChunkLines < 1 {
		return fmt.Errorf("chunk lines %d must be at least 1", o.ChunkLines)
	}
	if o.BlockLines < 1 {
		return fmt.Errorf("block lines %d must be at least 1", o.BlockLines)
	}
	if _, err := scorerFor(o.Score); err != nil {
		return err
	}
	files := beam.CreateList(s.Scope("files"), o.Files)
	chunks := beam.ParDo(s.Scope("read"), &readFn{Config: o.Score, ChunkLines: o.ChunkLines}, files)
	chunks = beam.Reshuffle(s.Scope("spread"), chunks)
	scored := beam.ParDo(s.Scope("attribute"), &scoreFn{Config: o.Score, Output: o.Output, Shards: o.Shards, BlockLines: o.BlockLines, Parallel: o.Parallel}, chunks)
	ids := make([]int, o.Shards)
	for i := range ids {
		ids[i] = i
	}
	markers := beam.ParDo(s.Scope("shards"), markerFn, beam.CreateList(s.Scope("shard ids"), ids))
	grouped := beam.GroupByKey(s.Scope("by shard"), beam.Flatten(s, scored, markers))
	beam.ParDo0(s.Scope("write"), &writeFn{Output: o.Output, Shards: o.Shards}, grouped)
	return nil
}

// Calibrate picks Options.ChunkLines: the number of lines that take about
// target to score (at least 1), timed on the first lines of the first
// files, for at most about a second.
func Calibrate(ctx context.Context, cfg score.Config, files []File, target time.Duration) (int, error) {
	sc, err := scorerFor(cfg)
	if err != nil {
		return 0, err
	}
	var b bytes.Buffer
	lines := 0
	start := time.Now()
	for _, f := range files {
		fs, err := filesystem.New(ctx, f.Path)
		if err != nil {
			return 0, err
		}
		r, err := fs.OpenRead(ctx, f.Path)
		if err != nil {
			fs.Close()
			return 0, err
		}
		err = sc.EachInput(r, func(_ int, s string, err error) bool {
			if err == nil {
				b.Reset()
				sc.Line(ctx, s, &b) // a bad line costs time too
			}
			lines++
			return lines < 200 && time.Since(start) < time.Second
		})
		r.Close()
		fs.Close()
		if err != nil {
			return 0, fmt.Errorf("%s: %v", f.Path, err)
		}
		if lines >= 200 || time.Since(start) >= time.Second {
			break
		}
	}
	if lines == 0 {
		return 1, nil
	}
	per := time.Since(start) / time.Duration(lines)
	return int(max(1, min(1<<20, int64(target/max(per, time.Microsecond))+1))), nil
}

// ShardName is the name of shard i of n: <prefix>-00003-of-00008.jsonl,
// and <prefix>-errors-00003-of-00008.jsonl for its errors.
func ShardName(prefix string, i, n int, errors bool) string {
	if errors {
		return fmt.Sprintf("%s-errors-%05d-of-%05d.jsonl", prefix, i, n)
	}
	return fmt.Sprintf("%s-%05d-of-%05d.jsonl", prefix, i, n)
}

// scorers holds one Scorer per Config in a process, which the DoFns clone:
// the model is loaded once per worker process, not once per DoFn.
var scorers struct {
	sync.Mutex
	m map[string]*score.Scorer
}

func scorerFor(cfg score.Config) (*score.Scorer, error) {
	key, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	scorers.Lock()
	defer scorers.Unlock()
	if s, ok := scorers.m[string(key)]; ok {
		return s.Clone(), nil
	}
	if cfg, err = localConfig(context.Background(), cfg); err != nil {
		return nil, err
	}
	s, err := score.New(cfg)
	if err != nil {
		return nil, err
	}
	if scorers.m == nil {
		scorers.m = map[string]*score.Scorer{}
	}
	scorers.m[string(key)] = s
	return s.Clone(), nil
}

// localConfig returns cfg with its files (Model, Vocab, Classes, Verify) that are
// on a Beam filesystem other than the local one (gs://…, any "scheme://")
// copied to a local folder, once per process; the records still name the
// model as given.
func localConfig(ctx context.Context, cfg score.Config) (score.Config, error) {
	if cfg.Model != "" && cfg.ModelName == "" && strings.Contains(cfg.Model, "://") {
		cfg.ModelName = cfg.Model
	}
	for _, f := range []*string{&cfg.Model, &cfg.Vocab, &cfg.Classes, &cfg.Verify} {
		if strings.Contains(*f, "://") {
			local, err := fetch(ctx, *f)
			if err != nil {
				return score.Config{}, err
			}
			*f = local
		}
	}
	return cfg, nil
}

// fetched holds the local copies of remote files, by their names.
var fetched struct {
	sync.Mutex
	m map[string]string
}

// fetch copies a file of a Beam filesystem to a local temporary folder,
// under its base name (the model's format follows its extension).
func fetch(ctx context.Context, name string) (string, error) {
	fetched.Lock()
	defer fetched.Unlock()
	if p, ok := fetched.m[name]; ok {
		return p, nil
	}
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return "", err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, name)
	if err != nil {
		return "", err
	}
	defer r.Close()
	dir, err := os.MkdirTemp("", "whitebox-beam-")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, path.Base(name))
	w, err := os.Create(p)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return "", fmt.Errorf("%s: %v", name, err)
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	if fetched.m == nil {
		fetched.m = map[string]string{}
	}
	fetched.m[name] = p
	return p, nil
}

// readFn reads a File into Chunks.
type readFn struct {
	Config     score.Config
	ChunkLines int
	sc         *score.Scorer
}

func (f *readFn) Setup() error {
	var err error
	f.sc, err = scorerFor(f.Config)
	return err
}

func (f *readFn) ProcessElement(ctx context.Context, in File, emit func(Chunk)) error {
	fs, err := filesystem.New(ctx, in.Path)
	if err != nil {
		return err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, in.Path)
	if err != nil {
		return err
	}
	defer r.Close()
	c := Chunk{File: in.Path, Pattern: in.Pattern, Index: in.Index}
	err = readChunks(r, f.sc, f.ChunkLines, &c, emit)
	if err != nil {
		return fmt.Errorf("%s: %v", in.Path, err)
	}
	return nil
}

// readChunks reads r's inputs (Scorer.EachInput: blank lines skipped, long
// lines cut) into chunks of n lines.
func readChunks(r io.Reader, sc *score.Scorer, n int, c *Chunk, emit func(Chunk)) error {
	err := sc.EachInput(r, func(line int, s string, err error) bool {
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		c.Lines = append(c.Lines, line)
		c.Inputs = append(c.Inputs, s)
		c.Errs = append(c.Errs, msg)
		if len(c.Lines) == n {
			emit(*c)
			*c = Chunk{File: c.File, Pattern: c.Pattern, Index: c.Index, Seq: c.Seq + 1}
		}
		return true
	})
	if err != nil {
		return err
	}
	if len(c.Lines) > 0 {
		emit(*c)
	}
	return nil
}

// scoreFn scores a Chunk, writes its part file and keys it by its shard.
type scoreFn struct {
	Config             score.Config
	Output             string
	Shards, BlockLines int
	Parallel           int // goroutines per element
	scs                []*score.Scorer
}

func (f *scoreFn) Setup() error {
	for range max(1, f.Parallel) {
		sc, err := scorerFor(f.Config)
		if err != nil {
			return err
		}
		f.scs = append(f.scs, sc)
	}
	return nil
}

func (f *scoreFn) ProcessElement(ctx context.Context, c Chunk, emit func(int, Scored)) error {
	if len(c.Inputs) != len(c.Lines) || len(c.Errs) != len(c.Lines) {
		return fmt.Errorf("%s: a chunk of %d lines with %d inputs and %d errors", c.File, len(c.Lines), len(c.Inputs), len(c.Errs))
	}
	for _, piece := range splitBlocks(c, f.BlockLines) {
		out, err := ScoreChunk(ctx, f.scs, piece)
		if err != nil {
			return err
		}
		// The lines go to a part file; only its name goes through the
		// shuffle (a runner's grouping of large values is slow: prism's
		// takes seconds per hundred megabytes).
		shard := ShardOf(piece.File, piece.Lines[0], f.BlockLines, f.Shards)
		name := partName(f.Output, shard, out)
		if err := WriteFile(ctx, name, out.Out); err != nil {
			return err
		}
		if err := WriteFile(ctx, name+".errors", out.Errs); err != nil {
			return err
		}
		emit(shard, Scored{Pattern: out.Pattern, Index: out.Index, Seq: out.Seq, Part: name})
	}
	return nil
}

// splitBlocks cuts a chunk where its lines cross from one block of
// blockLines lines to the next, so that what goes to a shard does not
// depend on the chunks. Each piece's Seq is its first line.
func splitBlocks(c Chunk, blockLines int) []Chunk {
	var pieces []Chunk
	for i := 0; i < len(c.Lines); {
		b := (c.Lines[i] - 1) / blockLines
		j := i + 1
		for j < len(c.Lines) && (c.Lines[j]-1)/blockLines == b {
			j++
		}
		p := c
		p.Lines, p.Inputs, p.Errs, p.Seq = c.Lines[i:j], c.Inputs[i:j], c.Errs[i:j], c.Lines[i]
		pieces = append(pieces, p)
		i = j
	}
	return pieces
}

// partName is the file of a chunk's lines before they join their shard.
func partName(output string, shard int, c Scored) string {
	return fmt.Sprintf("%s.parts/%05d-%d-%d-%d.jsonl", output, shard, c.Pattern, c.Index, c.Seq)
}

// ShardOf is the shard of a file's line: the blocks of blockLines
// consecutive lines (1 to blockLines, …) go to consecutive shards, each
// file starting at a shard of its own.
func ShardOf(file string, line, blockLines, shards int) int {
	h := fnv.New32a()
	h.Write([]byte(file))
	return int((uint64(h.Sum32()) + uint64(max(0, line-1)/max(1, blockLines))) % uint64(max(1, shards)))
}

// ScoreChunk scores the lines of a chunk on one worker per Scorer
// (package corpus: the same bytes for any number): each good line is
// `whitebox attribute`'s JSON line with "file" and "line" added at the
// end, each bad one an error line {"file","line","input","error"}, and a
// line whose result carries warnings (a pad inside the input with -pad,
// IG's completeness gap) also has a {"file","line","warning"} line for
// each among the errors. The error returned is
// ctx's: a bad line is data, not a failure.
func ScoreChunk(ctx context.Context, scs []*score.Scorer, c Chunk) (Scored, error) {
	if len(scs) == 0 {
		return Scored{}, fmt.Errorf("%s: no Scorer for a chunk", c.File)
	}
	file, _ := json.Marshal(c.File) // a string: it never fails
	var out, errs bytes.Buffer
	err := corpus.Run(ctx, corpus.Options{Workers: len(scs)},
		func(yield func(int) bool) error {
			for i := range c.Inputs {
				if !yield(i) {
					break
				}
			}
			return nil
		},
		func(w int) (func(context.Context, int) scoredLine, error) {
			return func(ctx context.Context, i int) scoredLine {
				msg := ""
				if i < len(c.Errs) {
					msg = c.Errs[i]
				}
				scs[w].Borrow(corpus.Lent(ctx)) // a chunk's last lines on the idle workers' cores
				return scoreLine(ctx, scs[w], file, c.Lines[i], c.Inputs[i], msg)
			}, nil
		},
		func(_ int, r scoredLine) error {
			out.Write(r.out)
			errs.Write(r.errs)
			return nil
		})
	if err != nil {
		return Scored{}, err
	}
	return Scored{Pattern: c.Pattern, Index: c.Index, Seq: c.Seq, Out: out.Bytes(), Errs: errs.Bytes()}, nil
}

// scoredLine is one line's JSON line, or its error lines.
type scoredLine struct{ out, errs []byte }

// scoreLine scores one line of a file (file: its name in JSON) with sc,
// unless it could not be read (msg says why).
func scoreLine(ctx context.Context, sc *score.Scorer, file []byte, line int, input, msg string) scoredLine {
	var out, errs bytes.Buffer
	where := func(b *bytes.Buffer) {
		b.WriteString(`"file":`)
		b.Write(file)
		b.WriteString(`,"line":`)
		b.WriteString(strconv.Itoa(line))
	}
	if msg == "" {
		if err := sc.Line(ctx, input, &out); err != nil {
			msg = err.Error()
		}
	}
	if msg != "" {
		errs.WriteByte('{')
		where(&errs)
		errs.WriteString(`,"input":`)
		writeJSONString(&errs, cut(input))
		errs.WriteString(`,"error":`)
		writeJSONString(&errs, msg)
		errs.WriteString("}\n")
		return scoredLine{errs: errs.Bytes()}
	}
	// attribute's line ends with "}\n": the fields go before the brace.
	out.Truncate(out.Len() - 2)
	out.WriteByte(',')
	where(&out)
	out.WriteString("}\n")
	for _, w := range []string{sc.PadWarning(), sc.Warning()} { // a pad inside the input (-pad), IG's gap
		if w == "" {
			continue
		}
		errs.WriteByte('{')
		where(&errs)
		errs.WriteString(`,"warning":`)
		writeJSONString(&errs, w)
		errs.WriteString("}\n")
	}
	return scoredLine{out: out.Bytes(), errs: errs.Bytes()}
}

// cut shortens an input for an error line: its first 80 bytes (whole
// characters) and "…".
func cut(s string) string {
	const most = 80
	if len(s) <= most {
		return s
	}
	n := most
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func writeJSONString(b *bytes.Buffer, s string) {
	j, _ := json.Marshal(s) // a string: it never fails
	b.Write(j)
}

// markerFn makes shard i present in the grouping.
func markerFn(i int, emit func(int, Scored)) { emit(i, Scored{Marker: true}) }

// writeFn writes one shard: its chunks in input order.
type writeFn struct {
	Output string
	Shards int
}

func (f *writeFn) ProcessElement(ctx context.Context, shard int, chunks func(*Scored) bool) error {
	var all []Scored
	var c Scored
	for chunks(&c) {
		if !c.Marker {
			all = append(all, c)
		}
		c = Scored{}
	}
	sortChunks(all)
	for _, errors := range []bool{false, true} {
		var parts []string
		for _, c := range all {
			if errors {
				parts = append(parts, c.Part+".errors")
			} else {
				parts = append(parts, c.Part)
			}
		}
		if err := concat(ctx, ShardName(f.Output, shard, f.Shards, errors), parts); err != nil {
			return err
		}
	}
	// The parts are no longer needed once both files are complete.
	for _, c := range all {
		remove(ctx, c.Part)
		remove(ctx, c.Part+".errors")
	}
	return nil
}

// sortChunks puts chunks in input order: pattern, file, line.
func sortChunks(all []Scored) {
	slices.SortFunc(all, func(a, b Scored) int {
		return cmp.Or(cmp.Compare(a.Pattern, b.Pattern), cmp.Compare(a.Index, b.Index), cmp.Compare(a.Seq, b.Seq))
	})
}

// concat writes the files parts, in order, to name, as WriteFile does.
func concat(ctx context.Context, name string, parts []string) error {
	return writeWith(ctx, name, func(w io.Writer) error {
		for _, p := range parts {
			fs, err := filesystem.New(ctx, p)
			if err != nil {
				return err
			}
			r, err := fs.OpenRead(ctx, p)
			if err == nil {
				_, err = io.Copy(w, r)
				r.Close()
			}
			fs.Close()
			if err != nil {
				return fmt.Errorf("%s: %v", p, err)
			}
		}
		return nil
	})
}

// remove removes a file where the filesystem can; a file left behind is
// only clutter.
func remove(ctx context.Context, name string) {
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return
	}
	defer fs.Close()
	if rm, ok := fs.(filesystem.Remover); ok {
		rm.Remove(ctx, name)
	}
}

// WriteFile writes data to name through Beam's filesystems: to a
// temporary name first and renamed when complete, where the filesystem
// can rename, so that a file is never seen half written.
func WriteFile(ctx context.Context, name string, data []byte) error {
	return writeWith(ctx, name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func writeWith(ctx context.Context, name string, write func(io.Writer) error) error {
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return err
	}
	defer fs.Close()
	rn, canRename := fs.(filesystem.Renamer)
	tmp := name
	if canRename {
		tmp = name + ".tmp"
	}
	w, err := fs.OpenWrite(ctx, tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := write(bw); err != nil {
		w.Close()
		return fmt.Errorf("%s: %v", tmp, err)
	}
	if err := bw.Flush(); err != nil {
		w.Close()
		return fmt.Errorf("%s: %v", tmp, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%s: %v", tmp, err)
	}
	if canRename {
		return rn.Rename(ctx, tmp, name)
	}
	return nil
}

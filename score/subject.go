package score

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/internal/regfile"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/record"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

// A subject is the classifier that attribute scores: a white-box network
// (-net) or an imported model (-model). It reads input lines and names
// classes; everything else is the same for both.
type subject interface {
	model() attrib.Model
	// parse reads one input: the classifier's input, a label per token
	// and a warning about the input ("": none). The labels may end with
	// tokens that x lacks: the trailing pad tokens removed (-pad).
	parse(s string) (x cell.Input, tokens []string, warn string, err error)
	classes() []string
	class(name string) (int, error) // -class
	label() string                  // for titles
	stamp(r *record.Record)         // names the classifier in a record
	note() string                   // a note for the user, once per run ("": none)
	// truth is the task's true class of a parsed input, for classifiers
	// that know it (the white-box networks); ok is false otherwise.
	truth(x cell.Input) (k int, ok bool)
	// tokens counts the tokens of an input without parsing it, and
	// tokenBytes is the memory one token costs from parsing to output (its
	// row, scores and JSON), so that an input too long for the budget is
	// refused before anything is allocated for it.
	tokens(s string) int
	tokenBytes(features bool) int64
	// check proves that the classifier's own definition gives logits for
	// the parsed input x of the line s (an ONNX graph, evaluated at the
	// input's length), within limit bytes; nil where there is nothing to
	// prove (the weights are the model).
	check(s string, x cell.Input, logits []float64, limit int64) error
}

// whiteboxSubject is one of the paper's networks; inputs are strings over
// its alphabet.
type whiteboxSubject struct{ net *whitebox.Net }

func (w whiteboxSubject) model() attrib.Model { return w.net.Model }
func (w whiteboxSubject) classes() []string   { return w.net.Task.Classes }
func (w whiteboxSubject) label() string       { return w.net.Name }
func (w whiteboxSubject) stamp(r *record.Record) {
	r.Net = w.net.Name
}
func (w whiteboxSubject) note() string                   { return "" }
func (w whiteboxSubject) class(name string) (int, error) { return w.net.Task.Class(name) }
func (w whiteboxSubject) truth(x cell.Input) (int, bool) {
	k, err := w.net.Task.LabelSymbols(x.Symbols())
	return k, err == nil
}
func (w whiteboxSubject) tokens(s string) int { return utf8.RuneCountInString(s) }
func (w whiteboxSubject) check(string, cell.Input, []float64, int64) error {
	return nil
}

// tokenBytes: the symbol, its label, the T×D scores, the token score, the
// JSON (about 30 bytes a number).
func (w whiteboxSubject) tokenBytes(features bool) int64 {
	return 8 + 16 + 8*int64(w.net.Model.Input()) + 8 + 48
}

func (w whiteboxSubject) parse(s string) (cell.Input, []string, string, error) {
	sym, err := w.net.Task.Encode(s)
	if err != nil {
		return cell.Input{}, nil, "", err
	}
	tokens := make([]string, len(sym))
	for i, k := range sym {
		tokens[i] = w.net.Task.Alphabet[k]
	}
	return cell.OneHot(sym), tokens, "", nil
}

// modelSubject is an imported model. Its inputs are whitespace-separated
// token ids, or tokens looked up in a vocabulary; a model without an
// embedding reads a JSON array of T rows of E numbers.
type modelSubject struct {
	m     *model.Model
	name  string         // the file, as given
	vocab map[string]int // nil: ids
	unk   int            // the id of unknown tokens, or −1
	names []string       // the class names
}

func (m *modelSubject) model() attrib.Model          { return m.m.Net }
func (m *modelSubject) classes() []string            { return m.names }
func (m *modelSubject) label() string                { return filepath.Base(m.name) }
func (m *modelSubject) truth(cell.Input) (int, bool) { return 0, false }
func (m *modelSubject) stamp(r *record.Record) {
	r.Model, r.Head = m.name, model.HeadSpec(m.m.Head, m.m.Act)
}

// AssumedHeadNote is the note of a run whose head nothing said.
const AssumedHeadNote = "whitebox: assuming -head hn (h_n), as neither -head nor the file says; check it with -verify FILE (see README, \"Your own model\")"

func (m *modelSubject) note() string {
	if m.m.HeadSource == model.HeadDefault {
		return AssumedHeadNote
	}
	return ""
}

// tokens counts the white-space-separated fields (or, for features, the
// rows: the '[' after the first).
func (m *modelSubject) tokens(s string) int {
	if m.m.Embedding == nil {
		return max(0, strings.Count(s, "[")-1)
	}
	n, in := 0, false
	for _, r := range s {
		sp := unicode.IsSpace(r)
		if !sp && !in {
			n++
		}
		in = !sp
	}
	return n
}

// tokenBytes: the id, its label, the embedded row and its scores (T×E
// each), the token score, the JSON of the scores, and for an ONNX model
// the graph's values when check evaluates it.
func (m *modelSubject) tokenBytes(features bool) int64 {
	e := int64(m.m.Input())
	graph, _ := m.m.GraphBytes()
	b := 8 + 16 + 16*e + 8 + 48 + graph
	if features {
		b += 32 * e
	}
	return b
}

func (m *modelSubject) class(name string) (int, error) {
	for k, c := range m.names {
		if c == name {
			return k, nil
		}
	}
	if k, err := strconv.Atoi(name); err == nil && k >= 0 && k < len(m.names) {
		return k, nil
	}
	return 0, fmt.Errorf("unknown class %q (classes: %s, or an index in [0, %d))", name, strings.Join(m.names, ", "), len(m.names))
}

// check evaluates an ONNX model's graph on the input (model.CheckGraph).
func (m *modelSubject) check(s string, x cell.Input, logits []float64, limit int64) error {
	if m.m.Graph == "" {
		return nil
	}
	var ids []int
	if m.m.Embedding != nil {
		var err error
		if ids, _, err = m.ids(s); err != nil {
			return err
		}
		ids = ids[:min(len(ids), x.Len())] // without the trailing pads, as the engine ran it
	}
	return m.m.CheckGraph(ids, x, logits, limit)
}

func (m *modelSubject) parse(s string) (cell.Input, []string, string, error) {
	if m.m.Embedding == nil {
		x, tokens, err := m.parseDense(s, m.m.Input())
		return x, tokens, "", err
	}
	ids, fields, err := m.ids(s)
	if err != nil {
		return cell.Input{}, nil, "", err
	}
	x, err := m.m.Embed(ids) // without the trailing pads (-pad)
	if err != nil {
		return cell.Input{}, nil, "", err
	}
	return x, fields, m.padWarning(ids), nil
}

// padWarning says that ids hold pad tokens that -pad does not remove,
// being followed by other tokens; "" when none.
func (m *modelSubject) padWarning(ids []int) string {
	n, first := m.m.InnerPads(ids)
	if n == 0 {
		return ""
	}
	more := ""
	if n > 1 {
		more = fmt.Sprintf(" (and %d more)", n-1)
	}
	return fmt.Sprintf("the pad id %d at position %d%s is followed by other tokens: it runs as a token (its embedding row), as pack_padded_sequence runs it; -pad removes trailing pads only", m.m.Pad, first, more)
}

// ids reads the token ids of a model with an embedding, and the tokens.
func (m *modelSubject) ids(s string) ([]int, []string, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, nil, cell.ErrEmptyInput
	}
	ids := make([]int, len(fields))
	for t, f := range fields {
		if m.vocab != nil {
			id, ok := m.vocab[f]
			if !ok {
				if m.unk < 0 {
					return nil, nil, fmt.Errorf("unknown token %q at position %d (not in the -vocab file; -unk TOKEN maps unknown tokens)", f, t)
				}
				id = m.unk
			}
			ids[t] = id
			continue
		}
		id, err := strconv.Atoi(f)
		if errors.Is(err, strconv.ErrRange) {
			return nil, nil, fmt.Errorf("token id %s at position %d is out of range [0, %d)", quoteWindow(f), t, m.m.Vocab)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("token %q at position %d is not an integer id (give -vocab FILE to read words)", quoteWindow(f), t)
		}
		ids[t] = id
	}
	return ids, fields, nil
}

// parseDense reads [[x_11, …, x_1E], …]: T rows of E features.
func (m *modelSubject) parseDense(s string, e int) (cell.Input, []string, error) {
	// Raw first: encoding/json would read null as 0 without a word.
	var raw [][]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return cell.Input{}, nil, fmt.Errorf("the model has no embedding: an input is a JSON array of rows of %d numbers (%v)", e, err)
	}
	rows := make([][]float64, len(raw))
	for t, r := range raw {
		if r == nil {
			return cell.Input{}, nil, fmt.Errorf("row %d is null, want an array of %d numbers", t, e)
		}
		rows[t] = make([]float64, len(r))
		for i, v := range r {
			x, err := featureValue(v)
			if err != nil {
				return cell.Input{}, nil, fmt.Errorf("row %d, column %d: %v", t, i, err)
			}
			rows[t][i] = x
		}
	}
	if len(rows) == 0 {
		return cell.Input{}, nil, cell.ErrEmptyInput
	}
	if err := m.m.CheckLength(len(rows)); err != nil {
		return cell.Input{}, nil, err
	}
	x := make([]float64, 0, len(rows)*e)
	tokens := make([]string, len(rows))
	for t, r := range rows {
		if len(r) != e {
			return cell.Input{}, nil, fmt.Errorf("row %d has %d numbers, want %d", t, len(r), e)
		}
		x = append(x, r...)
		tokens[t] = strconv.Itoa(t)
	}
	return cell.Dense(x, len(rows)), tokens, nil
}

// featureValue reads one feature: a JSON number within float64's range,
// nothing else (null, a string, a boolean, an array or an object).
func featureValue(v json.RawMessage) (float64, error) {
	if len(v) == 0 || !(v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		return 0, fmt.Errorf("%s is not a number", quoteWindow(string(v)))
	}
	x, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return 0, fmt.Errorf("%s is beyond float64's range", quoteWindow(string(v)))
	}
	return x, nil
}

// quoteWindow shortens a long token for a message.
func quoteWindow(s string) string {
	const most = 40
	if len(s) <= most {
		return s
	}
	return s[:most] + "…"
}

// modelFlags are the options of an imported model (Config's Model,
// Embedding, LSTM, Decoder, Vocab, Unk and Classes).
type modelFlags struct {
	path, name               string // name: in records (default: path)
	embedding, lstm, decoder string
	attention                string
	vocab, unk, classes      string
	head, act, pad, verify   string
	budget                   int64 // -budget: what one -verify line may take
}

func (f modelFlags) names() model.Names {
	return model.Names{Embedding: f.embedding, LSTM: f.lstm, Decoder: f.decoder, Attention: f.attention}
}

// newModelSubject loads the model (its head checked against -verify's
// logits) and its vocabulary and class names.
func newModelSubject(f modelFlags) (*modelSubject, error) {
	for _, file := range []struct{ flag, path string }{{"-model", f.path}, {"-vocab", f.vocab}, {"-classes", f.classes}, {"-verify", f.verify}} {
		if file.path != "" {
			if err := regfile.Flag(file.flag, file.path); err != nil {
				return nil, err
			}
		}
	}
	m, err := loadModel(f.path, f.names(), f.head, f.act, f.pad, f.verify, f.budget)
	if err != nil {
		return nil, err
	}
	s := &modelSubject{m: m, name: f.path, unk: -1}
	if f.name != "" {
		s.name = f.name
	}
	if f.vocab != "" {
		if m.Embedding == nil {
			return nil, fmt.Errorf("-vocab: the model has no embedding (its inputs are features)")
		}
		if s.vocab, err = readVocab(f.vocab, m.Vocab); err != nil {
			return nil, err
		}
	}
	if f.unk != "" {
		if s.vocab == nil {
			return nil, fmt.Errorf("-unk needs -vocab")
		}
		id, ok := s.vocab[f.unk]
		if !ok {
			return nil, fmt.Errorf("-unk %q is not in the vocabulary %s", f.unk, f.vocab)
		}
		s.unk = id
	}
	c := m.Net.Classes()
	if f.classes != "" {
		if s.names, err = readLines(f.classes, "class", c); err != nil {
			return nil, err
		}
		if len(s.names) != c {
			return nil, fmt.Errorf("-classes %s names %d classes; the model has %d", f.classes, len(s.names), c)
		}
	} else {
		for k := range c {
			s.names = append(s.names, strconv.Itoa(k))
		}
	}
	return s, nil
}

// readVocab reads one token per line, the id being the line number from 0.
func readVocab(path string, v int) (map[string]int, error) {
	lines, err := readLines(path, "token", v)
	if err != nil {
		return nil, err
	}
	vocab := make(map[string]int, len(lines))
	for id, tok := range lines {
		if tok == "" {
			continue // a placeholder: an id no word reaches
		}
		if strings.ContainsAny(tok, " \t") {
			return nil, fmt.Errorf("%s:%d: token %q contains white space, which separates tokens in inputs", path, id+1, tok)
		}
		vocab[tok] = id
	}
	return vocab, nil
}

// readLines reads the lines of a small file: at most most lines (the
// model's vocabulary or classes), no duplicates but empty lines.
func readLines(path, what string, most int) ([]string, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	var lines []string
	seen := map[string]int{}
	sc := bufio.NewScanner(io.LimitReader(file, 1<<30))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		s := strings.TrimRight(sc.Text(), "\r")
		if len(lines) == most {
			return nil, fmt.Errorf("%s has more than %d lines, one per %s of the model", path, most, what)
		}
		if s != "" {
			if prev, ok := seen[s]; ok {
				return nil, fmt.Errorf("%s:%d: %s %q repeats line %d", path, len(lines)+1, what, s, prev)
			}
			seen[s] = len(lines) + 1
		}
		lines = append(lines, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return lines, nil
}

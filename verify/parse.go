// Package verify checks an imported model against logits recorded from
// the user's own model: a file of JSON lines {"ids": [...], "logits":
// [...]}, one input each, written by the few lines of Python in
// scripts/record_logits.py. Running the recorded inputs through the model
// with every head (and both activations for a classifier of two Linear
// layers) tells which head the user's model has.
//
// Two logit vectors match when, on every line, the largest difference
// max_k |ours_k − ref_k| is at most Tolerance · max(1, max_k |ref_k|):
// relative to the line's largest logit, absolute below 1, as the user's
// float32 logits carry about 1e-7 of that scale in rounding and float32
// arithmetic.
//
// Open reads a file one line at a time, once for each head tried, each
// line within a memory budget (File); Parse and ReadFile keep every case
// in memory, for small files.
//
// The messages name the model.Options that give a head (Options.Head,
// Options.Act) and Open's budget; package score writes them as the
// command's flags.
package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// The bounds of a verify file: it is untrusted input.
const (
	MaxLineBytes = 1 << 20 // one line
	MaxLines     = 100000  // lines with an input
	MaxTokens    = 1 << 24 // ids of all lines together
)

// Case is one line of a verify file.
type Case struct {
	Line   int       // 1-based line number in the file
	IDs    []int     // the token ids
	Logits []float64 // the user's model's logits (C values)
}

// Parse reads a verify file: one JSON object per line with "ids" (token
// ids in [0, vocab)) and "logits" (classes finite numbers); other fields
// are ignored and blank lines skipped. name is used in errors, which name
// the line. Nothing the file says sizes an allocation beyond its own bytes.
// It keeps every case in memory: Open reads a file one line at a time.
func Parse(r io.Reader, name string, vocab, classes int) ([]Case, error) {
	var cases []Case
	s := scanner{name: name, vocab: vocab, classes: classes, lineMax: MaxLineBytes}
	_, err := s.scan(r, func(c *Case) error {
		cases = append(cases, Case{Line: c.Line, IDs: slices.Clone(c.IDs), Logits: slices.Clone(c.Logits)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cases, nil
}

var errLong = errors.New("line too long")

// lineJSON is one line; pointers tell null and absence from values.
type lineJSON struct {
	IDs    *[]json.RawMessage `json:"ids"`
	Logits *[]json.RawMessage `json:"logits"`
}

func parseLine(b []byte, vocab, classes int) (Case, error) {
	var l lineJSON
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&l); err != nil {
		return Case{}, fmt.Errorf("not a JSON object {\"ids\": [...], \"logits\": [...]}: %v", err)
	}
	if d.More() {
		return Case{}, fmt.Errorf("more than one JSON value on the line")
	}
	if l.IDs == nil {
		return Case{}, fmt.Errorf(`no "ids" (or null)`)
	}
	if l.Logits == nil {
		return Case{}, fmt.Errorf(`no "logits" (or null)`)
	}
	if len(*l.IDs) == 0 {
		return Case{}, fmt.Errorf(`"ids" is empty`)
	}
	if len(*l.Logits) != classes {
		return Case{}, fmt.Errorf(`%d logits; the model has %d classes`, len(*l.Logits), classes)
	}
	c := Case{IDs: make([]int, len(*l.IDs)), Logits: make([]float64, classes)}
	for t, raw := range *l.IDs {
		var id int64
		if !isNumber(raw) || json.Unmarshal(raw, &id) != nil {
			return Case{}, fmt.Errorf("ids[%d] = %s is not an integer", t, quote(raw))
		}
		if id < 0 || id >= int64(vocab) {
			return Case{}, fmt.Errorf("ids[%d] = %d is out of range [0, %d)", t, id, vocab)
		}
		c.IDs[t] = int(id)
	}
	for k, raw := range *l.Logits {
		var v float64
		if !isNumber(raw) || json.Unmarshal(raw, &v) != nil {
			return Case{}, fmt.Errorf("logits[%d] = %s is not a finite number", k, quote(raw))
		}
		c.Logits[k] = v
	}
	return c, nil
}

// isNumber reports whether a JSON value is a number (not null, a string,
// …): a number starts with a digit or '-'.
func isNumber(raw json.RawMessage) bool {
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// quote shortens a JSON value for a message.
func quote(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

// ReadFile parses the verify file at path for a model of vocab tokens and
// classes classes, every case in memory (Open reads it one line at a
// time).
func ReadFile(path string, vocab, classes int) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("verify: %v", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("verify %s: not a regular file", path)
	}
	return Parse(f, path, vocab, classes)
}

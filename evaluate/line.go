package evaluate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/whitebox-lstm/whitebox/whitebox"
)

// Line is one explanation of a scores file.
type Line struct {
	Input   string
	Symbols []int     // the input, encoded
	Scores  []float64 // one per symbol, finite
	Class   int       // the explained class, or −1 when the line names none
	Method  string    // the line's "method", or ""
	// Attention is the line's "attention": an attention model's weights α
	// on the input (whitebox attribute's records of such a model carry
	// them), one per symbol, finite; nil when the line has none.
	Attention []float64
}

// rawLine is the JSON of a line; other fields (those of whitebox
// attribute's records, say) are ignored.
type rawLine struct {
	Input     *string    `json:"input"`
	Scores    []*float64 `json:"scores"`
	Class     *string    `json:"class"`
	Method    string     `json:"method"`
	Attention []*float64 `json:"attention"`
}

// ParseLine reads one line of a scores file, a JSON object
//
//	{"input": "accb", "scores": [0.49, 0, 0, 0.04], "class": "True"}
//
// whose "class" (a class name of the task), "method" (a name for the
// explanations' source, as whitebox attribute writes it) and "attention"
// (an attention model's weights, one per symbol) are optional. It returns an
// error, never panics, for a line that is not a JSON object, a missing
// input or scores, an input outside the task's domain (an unknown symbol,
// say), a number of scores that is not the number of symbols, a null score
// (how JSON writers spell NaN and infinity), NaN or Infinity literals and
// an unknown class.
func ParseLine(task *whitebox.Task, line []byte) (Line, error) {
	if task == nil {
		return Line{}, errors.New("nil task")
	}
	var raw rawLine
	if err := json.Unmarshal(line, &raw); err != nil {
		for _, w := range []string{"NaN", "Infinity"} {
			if bytes.Contains(line, []byte(w)) {
				return Line{}, fmt.Errorf("not JSON: %s is not a JSON number (scores must be finite)", w)
			}
		}
		var all struct {
			Classes []string `json:"classes"`
		}
		if json.Unmarshal(line, &all) == nil && all.Classes != nil {
			return Line{}, errors.New(`a record of every class ("classes", attribute -class all): a line explains one class; run attribute with -class NAME`)
		}
		return Line{}, fmt.Errorf("not a JSON object {\"input\": ..., \"scores\": [...]}: %v", err)
	}
	if raw.Input == nil {
		return Line{}, errors.New(`no "input"`)
	}
	if raw.Scores == nil {
		return Line{}, errors.New(`no "scores"`)
	}
	sym, err := task.Encode(*raw.Input)
	if err != nil {
		return Line{}, err
	}
	if len(raw.Scores) != len(sym) {
		return Line{}, fmt.Errorf("%d scores for an input of %d symbols", len(raw.Scores), len(sym))
	}
	l := Line{Input: *raw.Input, Symbols: sym, Scores: make([]float64, len(sym)), Class: -1, Method: raw.Method}
	for i, s := range raw.Scores {
		if s == nil {
			return Line{}, fmt.Errorf("score %d is null (NaN or infinite?)", i)
		}
		l.Scores[i] = *s
	}
	if raw.Attention != nil {
		if len(raw.Attention) != len(sym) {
			return Line{}, fmt.Errorf("%d attention weights for an input of %d symbols", len(raw.Attention), len(sym))
		}
		l.Attention = make([]float64, len(sym))
		for i, a := range raw.Attention {
			if a == nil {
				return Line{}, fmt.Errorf("attention weight %d is null (NaN or infinite?)", i)
			}
			l.Attention[i] = *a
		}
	}
	if raw.Class != nil {
		if l.Class, err = task.Class(*raw.Class); err != nil {
			return Line{}, err
		}
	}
	return l, nil
}

package record

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzMarshal: whatever the input line, tokens and class names hold
// (control bytes, ESC sequences, invalid UTF-8, quotes, backslashes), the
// record is valid JSON with no raw control byte, and its strings read back
// as written (invalid UTF-8 as U+FFFD, as encoding/json writes it).
func FuzzMarshal(f *testing.F) {
	for _, s := range []string{"", "a\"b", "w1\r\\immediate\\write18{touch pwned} w2", "\x1b]0;TITLE\a", "\xff\xfe", "\x00\x1f\x7f", "<&>", "\u2028\u0085"} {
		f.Add(s, s+"x", "True")
	}
	f.Fuzz(func(t *testing.T, input, token, class string) {
		d := 0.5
		r := Record{Model: input, Head: "hn", Method: "ig", Input: input, Tokens: []string{token, input}, Padding: 1, Class: class,
			Prediction: class, Truth: token, Classes: []string{class, token + "!"}, Logits: []float64{1, 2}, Scores: []float64{3, 4}, Delta: &d}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		// The record of every class: "classes" holds the names as written.
		all := r
		all.AllClasses = &AllClasses{Scores: [][]float64{{1, 2}, {3, 4}}, Delta: []float64{d, d}}
		ab, err := json.Marshal(all)
		if err != nil || !json.Valid(ab) || bytes.IndexFunc(ab, func(c rune) bool { return c < 0x20 }) >= 0 {
			t.Fatalf("record of every class: %v, %q", err, ab)
		}
		var backAll struct {
			Classes []string    `json:"classes"`
			Scores  [][]float64 `json:"scores"`
		}
		if err := json.Unmarshal(ab, &backAll); err != nil {
			t.Fatal(err)
		}
		if len(backAll.Classes) != 2 || len(backAll.Scores) != 2 {
			t.Fatalf("record of every class lost its lists: %q", ab)
		}
		if !json.Valid(b) {
			t.Fatalf("invalid JSON: %q", b)
		}
		if i := bytes.IndexFunc(b, func(c rune) bool { return c < 0x20 }); i >= 0 {
			t.Fatalf("raw control byte at %d: %q", i, b)
		}
		var back struct {
			Input  string             `json:"input"`
			Tokens []string           `json:"tokens"`
			Class  string             `json:"class"`
			Logits map[string]float64 `json:"logits"`
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		valid := func(s string) string { // each invalid byte → U+FFFD, as encoding/json does
			var v strings.Builder
			for _, r := range s {
				v.WriteRune(r)
			}
			return v.String()
		}
		if back.Input != valid(input) || back.Class != valid(class) || len(back.Tokens) != 2 || back.Tokens[0] != valid(token) ||
			backAll.Classes[0] != valid(class) || backAll.Classes[1] != valid(token+"!") {
			t.Fatalf("strings changed: %q", b)
		}
		if valid(class) != valid(token+"!") && len(back.Logits) != 2 {
			t.Fatalf("logits keys lost: %q", b)
		}
	})
}

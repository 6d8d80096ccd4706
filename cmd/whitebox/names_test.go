package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/whitebox-lstm/whitebox/export"
)

// Names from a model file reach the terminal escaped: a tensor or node
// name cannot set the terminal's title or clear its screen (issue 39,
// case 1).

const (
	oscTitle    = "\x1b]0;pwned\x07" // sets the terminal's title
	clearScreen = "\x1b[2J"
)

// terminalControl returns the first control character of s that would
// act on a terminal — below 0x20 but '\n' and '\t', 0x7f, a C1 control
// (U+0080–U+009F), or a byte of invalid UTF-8 (a terminal may read a lone
// 0x9b as CSI) — and its index, or -1.
func terminalControl(s string) (rune, int) {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return rune(s[i]), i
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f:
			return r, i
		}
	}
	return 0, -1
}

// namedModel writes a small safetensors model (Embedding(5, 3) → LSTM(2)
// → Linear(2, 2)) whose parts have the prefixes emb, lstm and fc, plus a
// tensor extra+".weight" of shape [rows, 2] unless extra is "" (a second
// decoder candidate, or with 2 rows a Linear layer before or after fc, as
// the names order them). ok is false when the names cannot be written
// (empty, repeated, "__metadata__").
func namedModel(t testing.TB, emb, lstm, fc, extra string, rows int) (path string, ok bool) {
	t.Helper()
	dot := func(prefix, name string) string {
		if prefix == "" {
			return name
		}
		return prefix + "." + name
	}
	fill := func(n int, v float64) []float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = v * float64(i%3+1)
		}
		return d
	}
	ts := []export.Tensor{
		{Name: emb + ".weight", Shape: []int{5, 3}, Data: fill(15, 0.1)},
		{Name: dot(lstm, "weight_ih_l0"), Shape: []int{8, 3}, Data: fill(24, 0.2)},
		{Name: dot(lstm, "weight_hh_l0"), Shape: []int{8, 2}, Data: fill(16, -0.1)},
		{Name: dot(lstm, "bias_ih_l0"), Shape: []int{8}, Data: fill(8, 0.05)},
		{Name: dot(lstm, "bias_hh_l0"), Shape: []int{8}, Data: fill(8, 0.05)},
		{Name: fc + ".weight", Shape: []int{2, 2}, Data: fill(4, 0.3)},
		{Name: fc + ".bias", Shape: []int{2}, Data: fill(2, 0.01)},
	}
	if extra != "" {
		ts = append(ts, export.Tensor{Name: extra + ".weight", Shape: []int{rows, 2}, Data: fill(2*rows, 0.4)})
	}
	var b bytes.Buffer
	if err := export.WriteSafetensors(&b, ts, nil); err != nil {
		return "", false
	}
	path = filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, true
}

// checkTerminal fails t if out holds a terminal control character.
func checkTerminal(t testing.TB, what, out string) {
	t.Helper()
	if r, i := terminalControl(out); i >= 0 {
		t.Fatalf("%s: control character %U at %d: %q", what, r, i, out[max(0, i-60):min(len(out), i+60)])
	}
}

func TestInspectHostileNames(t *testing.T) {
	// Read as a model: every name in the listing.
	path, _ := namedModel(t, oscTitle+"emb", clearScreen+"lstm", "fc"+clearScreen, "", 0)
	status, out, errOut := runCLI(t, "", "inspect", "-model", path)
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	checkTerminal(t, "inspect", out)
	for _, want := range []string{`embedding:  \x1b]0;pwned\aemb: 5 tokens`, `lstm:       \x1b[2Jlstm: 1 layer(s)`,
		`decoder:    fc\x1b[2J: Linear`, `  \x1b]0;pwned\aemb.weight `, `  \x1b[2Jlstm.weight_ih_l0 `, `  fc\x1b[2J.bias `} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
	// Refused: the names in the errors, of inspect and of attribute (a
	// second decoder candidate; two Linear layers without -act, which
	// inspect shows, the activation unknown).
	for _, c := range []struct {
		fc, extra string
		rows      int
		want      string
		shown     string // inspect's listing, when it reads the file
	}{
		{"fc" + clearScreen, oscTitle + "dec", 3, `several decoder candidates of shape [C, 2]: "\x1b]0;pwned\adec", "fc\x1b[2J"`, ""},
		{"fc2" + clearScreen, "fc1" + oscTitle, 2, `two Linear layers (fc1\x1b]0;pwned\a → fc2\x1b[2J)`, `between fc1\x1b]0;pwned\a and fc2\x1b[2J)`},
	} {
		path, _ := namedModel(t, "emb", "lstm", c.fc, c.extra, c.rows)
		for _, args := range [][]string{{"inspect", "-model", path}, {"attribute", "-model", path, "-method", "saliency", "1 2"}} {
			status, out, errOut := runCLI(t, "", args...)
			if args[0] == "inspect" && c.shown != "" {
				if status != 0 || !strings.Contains(out, c.shown) {
					t.Errorf("inspect: status %d, stdout %q, stderr %q; want 0 and %q", status, out, errOut, c.shown)
				}
				checkTerminal(t, "inspect", out)
				continue
			}
			if status != 2 || out != "" || !strings.Contains(errOut, c.want) {
				t.Errorf("%s: status %d, stdout %q, stderr %q; want 2 and %q", args[0], status, out, errOut, c.want)
			}
			checkTerminal(t, args[0], errOut)
		}
	}
}

// An ONNX export whose node and initializer names are hostile (the names
// of a real export rewritten in place, each by one of the same length, so
// that the protobuf stays valid): inspect lists them escaped.
func TestInspectHostileONNXNames(t *testing.T) {
	b, err := os.ReadFile(onnxModel)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ old, new string }{
		{"/lstm/LSTM", oscTitle},                           // the LSTM nodes (and their outputs)
		{"embedding.weight", clearScreen + "embedding.we"}, // the embedding initializer
		{"onnx::LSTM_351", oscTitle + clearScreen},         // an LSTM node's bias initializer
		{"/fc/Gemm", clearScreen + "\u009bfc"},             // the decoder node; U+009B is CSI
	} {
		if len(r.old) != len(r.new) || !bytes.Contains(b, []byte(r.old)) {
			t.Fatalf("cannot rewrite %q", r.old)
		}
		b = bytes.ReplaceAll(b, []byte(r.old), []byte(r.new))
	}
	path := filepath.Join(t.TempDir(), "hostile.onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	status, out, errOut := runCLI(t, "", "inspect", "-model", path)
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	checkTerminal(t, "inspect", out)
	for _, want := range []string{`embedding:  \x1b[2Jembedding.we: 20 tokens`, `lstm:       \x1b]0;pwned\a, \x1b]0;pwned\a_1: 2 layer(s)`,
		`decoder:    \x1b[2J\u009bfc: Linear(12 → 3)`, `  \x1b]0;pwned\a\x1b[2J `, "layer 0 B"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
}

// FuzzInspectNames writes a model whose tensor names are fuzzed bytes
// (any string a safetensors header can hold: JSON escapes give every
// control character) and runs inspect on it: neither its listing nor any
// error holds a control character.
func FuzzInspectNames(f *testing.F) {
	f.Add(oscTitle+"emb", clearScreen+"lstm", "fc"+clearScreen, "", false)
	f.Add("emb", "lstm", "fc"+clearScreen, oscTitle+"dec", true)
	f.Add("emb", "lstm", "fc2\u0085", "fc1\x7f", false)
	f.Add("e\u009b31m", "", "out\r\n", "x\x00", false)
	f.Add("emb", "l\xffstm", "fc", "a.b\x1b", true)
	f.Fuzz(func(t *testing.T, emb, lstm, fc, extra string, wide bool) {
		rows := 2
		if wide {
			rows = 3
		}
		path, ok := namedModel(t, emb, lstm, fc, extra, rows)
		if !ok {
			return
		}
		_, out, errOut := runCLI(t, "", "inspect", "-model", path)
		checkTerminal(t, "inspect's listing", out)
		checkTerminal(t, "inspect's error", errOut)
	})
}

package main

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

const attnModel = "../../model/testdata/attention/att_uni1_single.pt"

// TestAttributeAttentionMaps: an attention model's JSON records carry α,
// equal to PyTorch's softmax weights (the fixture's, written by
// gen_attention.py), and the text, LaTeX and HTML outputs show α once an
// input, after its attributions (also with -class all); a model without
// an attention head shows none.
func TestAttributeAttentionMaps(t *testing.T) {
	var fixture struct {
		Cases []struct {
			IDs       []int     `json:"ids"`
			Attention []float64 `json:"attention"`
		} `json:"cases"`
	}
	data, err := os.ReadFile(strings.TrimSuffix(attnModel, ".pt") + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &fixture); err != nil {
		t.Fatal(err)
	}
	var inputs []string
	var want [][]float64
	for _, c := range fixture.Cases {
		if len(c.IDs) < 2 || len(inputs) == 3 {
			continue
		}
		var s []string
		for _, id := range c.IDs {
			s = append(s, strconv.Itoa(id))
		}
		inputs, want = append(inputs, strings.Join(s, " ")), append(want, c.Attention)
	}
	if len(inputs) < 2 {
		t.Fatalf("the fixture has %d cases of two tokens or more", len(inputs))
	}
	base := []string{"attribute", "-model", attnModel, "-head", "auto", "-verify", strings.TrimSuffix(attnModel, ".pt") + ".verify.jsonl", "-method", "ig"}
	run := func(extra ...string) string {
		t.Helper()
		args := append(append(append([]string(nil), base...), extra...), inputs...)
		status, out, errOut := runCLI(t, "", args...)
		if status != 0 {
			t.Fatalf("%s: status %d: %s", strings.Join(args, " "), status, errOut)
		}
		return out
	}

	lines := strings.Split(strings.TrimSuffix(run(), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("json: %d lines for %d inputs", len(lines), len(inputs))
	}
	for i, line := range lines {
		var rec struct {
			Attention []float64 `json:"attention"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if len(rec.Attention) != len(want[i]) {
			t.Fatalf("input %q: attention %v, PyTorch %v", inputs[i], rec.Attention, want[i])
		}
		for k, a := range rec.Attention {
			if math.Abs(a-want[i][k]) > 1e-6 { // the fixture's model is float32
				t.Errorf("input %q: α[%d] = %v, PyTorch %v", inputs[i], k, a, want[i][k])
			}
		}
	}

	for _, tc := range []struct {
		extra []string
		per   int // lines an input: its classes' maps, then α's
	}{{nil, 2}, {[]string{"-class", "all"}, 4}} {
		out := run(append([]string{"-format", "text"}, tc.extra...)...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != tc.per*len(inputs) {
			t.Fatalf("text %v: %d lines for %d inputs:\n%s", tc.extra, len(lines), len(inputs), out)
		}
		for i, in := range inputs {
			line := lines[(i+1)*tc.per-1]
			f := strings.Split(line, "\t")
			if len(f) != 3 || f[0] != in || f[1] != "attention weights α" {
				t.Fatalf("text %v: input %q: last line %q, want the input, \"attention weights α\" and the map", tc.extra, in, line)
			}
			cells := strings.Fields(f[2])
			if len(cells) != len(want[i]) {
				t.Fatalf("text: %q has %d cells, want %d", f[2], len(cells), len(want[i]))
			}
			for k, cell := range cells {
				_, num, _ := strings.Cut(cell, ":")
				v, err := strconv.ParseFloat(num, 64)
				if err != nil || math.Abs(v-want[i][k]) > 5e-5 {
					t.Errorf("text: α cell %q, PyTorch %v", cell, want[i][k])
				}
			}
			for _, other := range lines[i*tc.per : (i+1)*tc.per-1] {
				if strings.Contains(other, "attention") {
					t.Errorf("text: an attribution line mentions attention: %q", other)
				}
			}
		}
	}
	if out := run("-format", "latex"); strings.Count(out, "% attention weights: ") != len(inputs) || strings.Count(out, "\n") != 2*len(inputs) {
		t.Errorf("latex: want one α line after each input's line:\n%s", out)
	}
	if out := run("-format", "html", "-class", "all"); strings.Count(out, "attention weights α") != len(inputs) {
		t.Errorf("html -class all: %d α rows for %d inputs", strings.Count(out, "attention weights α"), len(inputs))
	}

	status, out, errOut := runCLI(t, "", "attribute", "-model", testModel, "-method", "ig", "-format", "text", "3 14 15 9")
	if status != 0 || strings.Contains(out, "attention") || strings.Count(out, "\n") != 1 {
		t.Errorf("a model without attention: status %d, output %q (%s)", status, out, errOut)
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// padModel was trained with pack_padded_sequence (pad id 0):
// model/testdata/padding, gen_padding.py. Its .safetensors twin names the
// pad id in its metadata.
const padModel = "../../model/testdata/padding/bi2.pt"

// Issue 44: -pad removes the trailing pads as pack_padded_sequence does
// and the record says how many ("padding"; their scores are 0); a pad
// inside an input is a warning, shown for the first few inputs and then
// counted; without -pad the record is the one of before, no "padding".
func TestPadAttribute(t *testing.T) {
	in := "3 14 15 0 0\n4 0 13 0 0\n0 3 0 4 0\n9 9\n0 5 0 6\n0 7 0 8 0 0\n"
	status, out, errOut := runCLI(t, in, "attribute", "-model", padModel, "-head", "hn", "-pad", "0", "-method", "saliency")
	if status != 0 {
		t.Fatalf("status %d, %s", status, errOut)
	}
	type padRecord struct {
		Tokens  []string  `json:"tokens"`
		Padding int       `json:"padding"`
		Scores  []float64 `json:"scores"`
	}
	var recs []padRecord
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r padRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 6 {
		t.Fatalf("%d records:\n%s", len(recs), out)
	}
	for i, want := range []int{2, 2, 1, 0, 0, 2} {
		r := recs[i]
		if r.Padding != want || len(r.Scores) != len(r.Tokens) {
			t.Fatalf("record %d: padding %d, want %d: %+v", i, r.Padding, want, r)
		}
		for _, v := range r.Scores[len(r.Scores)-want:] {
			if v != 0 {
				t.Fatalf("record %d: a pad scores %v", i, v)
			}
		}
	}
	if !strings.Contains(out, `"tokens":["3","14","15","0","0"],"padding":2,"class":`) || strings.Contains(strings.Split(out, "\n")[3], `"padding"`) {
		t.Errorf("records:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != shownWarnings+1 || !strings.HasPrefix(lines[0], `whitebox attribute: line 2: "4 0 13 0 0": warning: the pad id 0 at position 1 is followed by other tokens`) ||
		!strings.Contains(lines[shownWarnings], "a pad id inside the input, followed by other tokens, on 4 of 6 inputs (the first 3 shown above)") {
		t.Errorf("stderr:\n%s", errOut)
	}

	// Without -pad (or with -pad none over the file's metadata) the pads
	// run as tokens: the same bytes either way, no "padding".
	_, plain, _ := runCLI(t, "", "attribute", "-model", padModel, "-method", "saliency", "3 14 15 0 0")
	_, none, _ := runCLI(t, "", "attribute", "-model", strings.Replace(padModel, ".pt", ".safetensors", 1), "-pad", "none", "-method", "saliency", "3 14 15 0 0")
	_, meta, _ := runCLI(t, "", "attribute", "-model", strings.Replace(padModel, ".pt", ".safetensors", 1), "-method", "saliency", "3 14 15 0 0")
	cut := func(s string) string { _, rest, _ := strings.Cut(strings.TrimSpace(s), `"method"`); return rest }
	if strings.Contains(plain, `"padding"`) || cut(plain) != cut(none) || cut(meta) != cut(strings.Split(out, "\n")[0]) {
		t.Errorf("without -pad: %s\n-pad none: %s\nmetadata: %s", plain, none, meta)
	}

	status, _, errOut = runCLI(t, "", "attribute", "-model", padModel, "-pad", "0", "-method", "ig", "0 0")
	if status != 1 || !strings.Contains(errOut, `"0 0": model: all 2 tokens are the pad id 0`) {
		t.Errorf("only pads: status %d, %s", status, errOut)
	}
	status, _, errOut = runCLI(t, "", "attribute", "-model", padModel, "-pad", "<pad>", "-method", "ig", "1 0")
	if status != 2 || !strings.Contains(errOut, `-pad "<pad>": a token id`) {
		t.Errorf("-pad <pad>: status %d, %s", status, errOut)
	}
}

// The logits scripts/record_logits.py recorded from the packed model, with
// their pads, match with -pad 0 (or the file's metadata) and not without.
func TestPadVerify(t *testing.T) {
	verify := "../../model/testdata/padding/bi2.verify.jsonl"
	for _, args := range [][]string{{"-model", padModel, "-pad", "0"}, {"-model", strings.Replace(padModel, ".pt", ".safetensors", 1)}} {
		status, out, errOut := runCLI(t, "", append([]string{"attribute", "-verify", verify, "-method", "ig", "3 14 15 0 0"}, args...)...)
		if status != 0 || !strings.Contains(out, `"padding":2`) {
			t.Errorf("%v: status %d, %s%s", args, status, out, errOut)
		}
	}
	status, _, errOut := runCLI(t, "", "attribute", "-model", padModel, "-verify", verify, "-method", "ig", "3 14 15")
	if status != 2 || !strings.Contains(errOut, "the logits do not match") {
		t.Errorf("without -pad: status %d, %s", status, errOut)
	}
}

// inspect -pad removes the trailing pads of -verify's lines as attribute
// -pad does: a verify file recorded from a packed model matches only with
// it, and without it the verdict says to give it.
func TestInspectPadVerify(t *testing.T) {
	dir := "../../model/testdata/padding/"
	status, out, errOut := runCLI(t, "", "inspect", "-model", dir+"uni1_seqfirst.pt", "-verify", dir+"uni1_seqfirst.verify.jsonl")
	if status != 0 || !strings.Contains(out, "no head matches (if your model packs padded inputs, give its pad id with -pad)") {
		t.Errorf("without -pad: status %d, stdout %q, stderr %q", status, out, errOut)
	}
	status, out, errOut = runCLI(t, "", "inspect", "-model", dir+"uni1_seqfirst.pt", "-pad", "0", "-verify", dir+"uni1_seqfirst.verify.jsonl")
	if status != 0 || !strings.Contains(out, "the logits match -head hn") {
		t.Errorf("with -pad 0: status %d, stdout %q, stderr %q", status, out, errOut)
	}
}

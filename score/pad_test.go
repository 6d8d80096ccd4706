package score

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// padRef is one row of a model/testdata/padding fixture (gen_padding.py):
// float64 PyTorch references of a packed model on a padded input.
type padRef struct {
	IDs            []int       `json:"ids"`
	Length         int         `json:"length"`
	Logits         []float64   `json:"logits"`
	LogitsUnpacked []float64   `json:"logits_unpacked"`
	Class          int         `json:"class"`
	Saliency       [][]float64 `json:"saliency"`
	IG             [][]float64 `json:"ig"`
}

func loadPadRefs(t *testing.T, name string) []padRef {
	t.Helper()
	b, err := os.ReadFile("../model/testdata/padding/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []padRef }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

func (r padRef) input() string {
	f := make([]string, len(r.IDs))
	for i, id := range r.IDs {
		f[i] = strconv.Itoa(id)
	}
	return strings.Join(f, " ")
}

// near reports whether got is want to 1e-8 of want's largest magnitude.
func near(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	scale := 1e-300
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= 1e-8*scale) {
			return false
		}
	}
	return true
}

func rowSums(rows [][]float64) []float64 {
	s := make([]float64, len(rows))
	for t, r := range rows {
		for _, v := range r {
			s[t] += v
		}
	}
	return s
}

// -pad (or the file's whitebox.pad) removes the trailing pads: the records
// are PyTorch's packed model's (logits, saliency and IG of every token,
// each pad's score and features 0) and say "padding"; without it the
// record is the unpacked model's and has no "padding".
func TestPadRecords(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ file, pad string }{{"uni1_seqfirst.pt", "0"}, {"bi2.safetensors", ""}, {"bi2.pt", "0"}} {
		name := strings.TrimSuffix(strings.TrimSuffix(c.file, ".pt"), ".safetensors")
		refs := loadPadRefs(t, name)
		cfg := DefaultConfig()
		cfg.Model, cfg.Method, cfg.Class, cfg.Features, cfg.Pad = "../model/testdata/padding/"+c.file, "saliency", AllClasses, true, c.pad
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range refs {
			var b bytes.Buffer
			if err := s.Line(ctx, r.input(), &b); err != nil {
				t.Fatal(err)
			}
			var rec struct {
				Tokens   []string           `json:"tokens"`
				Padding  *int               `json:"padding"`
				Classes  []string           `json:"classes"`
				Logits   map[string]float64 `json:"logits"`
				Scores   [][]float64        `json:"scores"`
				Features [][][]float64      `json:"features"`
			}
			if err := json.Unmarshal(b.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			pads := len(r.IDs) - r.Length
			if pads == 0 && rec.Padding != nil || pads > 0 && (rec.Padding == nil || *rec.Padding != pads) || len(rec.Tokens) != len(r.IDs) {
				t.Fatalf("%s case %d: %s", c.file, i, b.String())
			}
			logits := make([]float64, len(rec.Classes))
			for k, cl := range rec.Classes {
				logits[k] = rec.Logits[cl]
			}
			if !near(logits, r.Logits) || !near(rec.Scores[r.Class], rowSums(r.Saliency)) || !near(flatten(rec.Features[r.Class]), flatten(r.Saliency)) {
				t.Fatalf("%s case %d: %s\nwant logits %v, saliency %v", c.file, i, b.String(), r.Logits, rowSums(r.Saliency))
			}
			for k := range rec.Scores {
				for _, v := range append(rec.Scores[k][r.Length:], flatten(rec.Features[k][r.Length:])...) {
					if v != 0 {
						t.Fatalf("%s case %d: a pad's score %v", c.file, i, v)
					}
				}
			}
		}
	}

	// One class, IG with float64 weights: the record's scores are
	// PyTorch's; without -pad the pads run and nothing says so.
	refs := loadPadRefs(t, "bi2")
	r := refs[0]
	for _, pad := range []string{"0", "none", ""} {
		cfg := DefaultConfig()
		cfg.Model, cfg.Method, cfg.Steps, cfg.Pad = "../model/testdata/padding/bi2.pt", "ig", "50", pad
		cfg.Set = map[string]bool{"captum-weights": true} // float64 weights, as the reference
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := s.Line(ctx, r.input(), &b); err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Padding *int               `json:"padding"`
			Logits  map[string]float64 `json:"logits"`
			Scores  []float64          `json:"scores"`
		}
		if err := json.Unmarshal(b.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		logits := []float64{rec.Logits["0"], rec.Logits["1"], rec.Logits["2"]}
		if pad == "0" {
			if rec.Padding == nil || *rec.Padding != 4 || !near(logits, r.Logits) || !near(rec.Scores, rowSums(r.IG)) {
				t.Fatalf("-pad 0: %s\nwant IG %v", b.String(), rowSums(r.IG))
			}
			continue
		}
		if rec.Padding != nil || !near(logits, r.LogitsUnpacked) || near(logits, r.Logits) || strings.Contains(b.String(), `"padding":`) {
			t.Fatalf("-pad %q: %s", pad, b.String())
		}
	}
}

func flatten(rows [][]float64) []float64 {
	var v []float64
	for _, r := range rows {
		v = append(v, r...)
	}
	return v
}

// A pad inside an input is a warning (not removed), an input of pads an
// error, a span into the removed pads an error; -pad is for models only,
// and is set before -verify runs (lines recorded with their pads).
func TestPadWarningsAndErrors(t *testing.T) {
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.Model, cfg.Method, cfg.Pad = "../model/testdata/padding/bi2.pt", "gxi", "0"
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ input, warn string }{
		{"3 14 15 0 0", ""},
		{"3 14 15", ""},
		{"4 0 13 0 0", "the pad id 0 at position 1 is followed by other tokens: it runs as a token (its embedding row), as pack_padded_sequence runs it; -pad removes trailing pads only"},
		{"0 3 0 4 0", "the pad id 0 at position 0 (and 1 more) is followed by other tokens"},
	} {
		var b bytes.Buffer
		if err := s.Line(ctx, c.input, &b); err != nil {
			t.Fatal(err)
		}
		if w := s.PadWarning(); c.warn == "" && w != "" || !strings.HasPrefix(w, c.warn) || s.Warning() != "" {
			t.Errorf("%q: pad warning %q, warning %q; want %q", c.input, w, s.Warning(), c.warn)
		}
	}
	var b bytes.Buffer
	if err := s.Line(ctx, "0 0 0", &b); err == nil || !strings.Contains(err.Error(), "all 3 tokens are the pad id 0") || s.PadWarning() != "" {
		t.Errorf("only pads: %v", err)
	}

	cfg.Model, cfg.Method, cfg.Span = "../model/testdata/padding/uni1_seqfirst.pt", "cd", "0:3" // cd: one layer, one direction
	if s, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	want := "-span 0:3 reaches the 2 trailing pad tokens that -pad removed: the model runs on tokens 0 to 2"
	if err := s.Line(ctx, "3 14 15 0 0", &b); err == nil || err.Error() != want {
		t.Errorf("span into the pads: %v, want %q", err, want)
	}
	b.Reset()
	if err := s.Line(ctx, "3 14 15 9 0", &b); err != nil || !strings.Contains(b.String(), `"padding":1,`) || !strings.Contains(b.String(), `"span":{"start":0,"stop":3,`) {
		t.Errorf("span: %v, %s", err, b.String())
	}

	for _, c := range []struct {
		cfg  func(*Config)
		want string
	}{
		{func(c *Config) { c.Pad = "x" }, `-pad "x": a token id`},
		{func(c *Config) { c.Pad = "-1" }, `-pad "-1": a token id`},
		{func(c *Config) { c.Pad = "20" }, "pad id 20 (-pad) is out of range [0, 20)"},
		{func(c *Config) { c.Model, c.Net, c.Set = "", "counting", map[string]bool{"pad": true} }, "-pad applies to -model only"},
		{func(c *Config) { c.Pad, c.Set = "", map[string]bool{"pad": true} }, "-pad: empty; give a token id (the padding id, e.g. 0) or none"},
		{func(c *Config) { c.Pad, c.Verify = "none", "../model/testdata/padding/bi2.verify.jsonl" }, "do not match"},
	} {
		cfg := DefaultConfig()
		cfg.Model, cfg.Method, cfg.Pad = "../model/testdata/padding/bi2.pt", "ig", "0"
		c.cfg(&cfg)
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", cfg, err, c.want)
		}
	}
	for _, file := range []string{"bi2.pt", "bi2.safetensors"} { // -pad 0, the metadata's
		cfg := DefaultConfig()
		cfg.Model, cfg.Method, cfg.Verify = "../model/testdata/padding/"+file, "ig", "../model/testdata/padding/bi2.verify.jsonl"
		if file == "bi2.pt" {
			cfg.Pad = "0"
		}
		if _, err := New(cfg); err != nil {
			t.Errorf("%s: -verify: %v", file, err)
		}
	}
}

package model

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
)

// testdata/padding holds float32 models trained the packed way (forward
// packs the embedded batch with pack_padded_sequence), with float64
// references on a padded batch, made by testdata/padding/gen_padding.py
// (see its doc string).

type padFixture struct {
	Name       string    `json:"name"`
	Files      []string  `json:"files"`
	Bi         bool      `json:"bidirectional"`
	BatchFirst bool      `json:"batch_first"`
	Pad        int       `json:"pad"`
	InMeta     bool      `json:"pad_in_metadata"`
	IGSteps    int       `json:"ig_steps"`
	Cases      []padCase `json:"cases"`
}

// padCase is one row of the padded batch: its ids with their trailing
// pads, its true length, and the references over the whole row (T_max
// rows of scores, the pads' zero).
type padCase struct {
	referenceCase
	Length         int       `json:"length"`
	LogitsUnpacked []float64 `json:"logits_unpacked"`
}

// unpadded is the case's references on its first Length tokens, having
// checked that the pads' scores are exactly zero, as the packed model
// never reads the pads.
func (c padCase) unpadded(t *testing.T, name string) referenceCase {
	t.Helper()
	r := c.referenceCase
	for what, rows := range map[string][][]float64{"saliency": r.Saliency, "gxi": r.GxI, "ig": r.IG} {
		for _, v := range flat(rows[c.Length:]) {
			if v != 0 {
				t.Fatalf("%s: the reference's %s of a pad is %v, not 0", name, what, v)
			}
		}
	}
	for _, v := range r.Occlusion[c.Length:] {
		if v != 0 {
			t.Fatalf("%s: the reference's occlusion of a pad is %v, not 0", name, v)
		}
	}
	r.IDs = r.IDs[:c.Length]
	r.Saliency, r.GxI, r.IG, r.Occlusion = r.Saliency[:c.Length], r.GxI[:c.Length], r.IG[:c.Length], r.Occlusion[:c.Length]
	return r
}

// A model trained with pack_padded_sequence, given its pad id (Options or
// the file's metadata), computes on padded inputs the logits of PyTorch's
// packed forward pass, saliency, G×I, IG and occlusion included, to 1e-8
// (uni- and bidirectional, batch_first either way: the packed backward
// direction starts at the last real token). Without the pad id, the model
// runs over the pads: it is then the unpacked model, not the user's.
func TestPadFixtures(t *testing.T) {
	worst := map[string]float64{}
	for _, f := range loadJSONFixtures[padFixture](t, "padding") {
		for _, file := range f.Files {
			t.Run(file, func(t *testing.T) {
				path := filepath.Join("testdata", "padding", file)
				o := Options{Pad: new(f.Pad)}
				if f.InMeta && strings.HasSuffix(file, ".safetensors") {
					o = Options{} // the metadata's "whitebox.pad"
				}
				m, err := Load(path, o)
				if err != nil {
					t.Fatal(err)
				}
				if !m.HasPad || m.Pad != f.Pad || !strings.Contains(m.Summary(), fmt.Sprintf("padding:    token id %d:", f.Pad)) {
					t.Fatalf("pad %d (%v), want %d; summary:\n%s", m.Pad, m.HasPad, f.Pad, m.Summary())
				}
				// An explicit NoPad is kept over the metadata: the pads run.
				unpacked, err := Load(path, Options{Pad: new(NoPad)})
				if err != nil || unpacked.HasPad {
					t.Fatalf("NoPad: %v, pad %v", err, unpacked.HasPad)
				}
				e := mustExplainer(t, m.Net)
				r, err := cell.NewRunner(unpacked.Net)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				for ci, c := range f.Cases {
					name := fmt.Sprintf("%s case %d", f.Name, ci)
					if n, err := m.Unpadded(c.IDs); err != nil || n != c.Length {
						t.Fatalf("%s: Unpadded %d, %v; want %d", name, n, err, c.Length)
					}
					x, err := m.Embed(c.IDs)
					if err != nil {
						t.Fatal(err)
					}
					if x.Len() != c.Length {
						t.Fatalf("%s: %d rows, want %d", name, x.Len(), c.Length)
					}
					c.unpadded(t, name).check(t, e, x, name, f.IGSteps, worst)

					full, err := unpacked.Embed(c.IDs)
					if err != nil {
						t.Fatal(err)
					}
					y, err := r.Forward(full)
					if err != nil {
						t.Fatal(err)
					}
					agreeTo(t, name+" unpacked logits", y, c.LogitsUnpacked, 1e-8)
					if c.Length < len(c.IDs) {
						d := 0.0
						for k := range y {
							d = max(d, math.Abs(y[k]-c.Logits[k]))
						}
						if d < 1e-3 {
							t.Fatalf("%s: run over its pads, the logits differ from the packed model's by only %.3g", name, d)
						}
					}
				}
			})
		}
	}
	t.Logf("largest relative differences from float64 PyTorch: %v", worst)
}

// The pad id: Options over the metadata, NoPad for none, in range, for a
// model with an embedding only; a malformed metadata value names its key.
func TestPadOptions(t *testing.T) {
	tensors := baseModel("emb", "lstm", "fc") // V = 10
	meta := func(v string) map[string]string { return map[string]string{PadMetadataKey: v} }
	for _, c := range []struct {
		meta   map[string]string
		o      Options
		pad    int
		hasPad bool
	}{
		{nil, Options{}, 0, false},
		{nil, Options{Pad: new(0)}, 0, true},
		{nil, Options{}, 0, false}, // nil: none given
		{meta("9"), Options{}, 9, true},
		{meta("9"), Options{Pad: new(0)}, 0, true},
		{meta("9"), Options{Pad: new(NoPad)}, 0, false},
	} {
		m, err := load(t, tensors, c.meta, c.o)
		if err != nil {
			t.Errorf("metadata %v, %+v: %v", c.meta, c.o, err)
		} else if m.HasPad != c.hasPad || m.HasPad && m.Pad != c.pad {
			t.Errorf("metadata %v, %+v: pad %d (%v), want %d (%v)", c.meta, c.o, m.Pad, m.HasPad, c.pad, c.hasPad)
		}
	}
	for _, c := range []struct {
		meta map[string]string
		o    Options
		want string
	}{
		{nil, Options{Pad: new(10)}, "pad id 10 (Options.Pad) is out of range [0, 10)"},
		{nil, Options{Pad: new(-2)}, "Options.Pad -2: a token id ≥ 0, or NoPad (-1) for none"},
		{meta("10"), Options{}, `pad id 10 (the file's metadata "whitebox.pad") is out of range [0, 10)`},
		{meta("-1"), Options{}, `safetensors metadata "whitebox.pad": pad id "-1": want a token id, a decimal integer ≥ 0`},
		{meta("<pad>"), Options{Pad: new(0)}, `safetensors metadata "whitebox.pad": pad id "<pad>"`},
	} {
		if _, err := load(t, tensors, c.meta, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("metadata %v, %+v: %v, want %q", c.meta, c.o, err, c.want)
		}
	}
	dense := baseModel("emb", "lstm", "fc")
	delete(dense, "emb.weight")
	if _, err := load(t, dense, nil, Options{Names: Names{Embedding: NoEmbedding}, Pad: new(0)}); err == nil || !strings.Contains(err.Error(), "reads features") {
		t.Errorf("a pad id for a model of features: %v", err)
	}
}

// Embed removes the trailing pads, and only those; InnerPads finds the
// others; an input of pads alone is an error.
func TestUnpadded(t *testing.T) {
	m, err := load(t, baseModel("emb", "lstm", "fc"), nil, Options{Pad: new(0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ids          []int
		n, inner, at int
	}{
		{[]int{3, 4, 5}, 3, 0, -1},
		{[]int{3, 4, 5, 0, 0}, 3, 0, -1},
		{[]int{0, 3, 0, 4, 0}, 4, 2, 0},
		{[]int{3, 0, 0, 4}, 4, 2, 1},
	} {
		n, err := m.Unpadded(c.ids)
		x, xerr := m.Embed(c.ids)
		inner, at := m.InnerPads(c.ids)
		if err != nil || xerr != nil || n != c.n || x.Len() != c.n || inner != c.inner || at != c.at {
			t.Errorf("%v: %d (%v), %d rows (%v), %d inner pads from %d; want %d, %d from %d", c.ids, n, err, x.Len(), xerr, inner, at, c.n, c.inner, c.at)
		}
	}
	want := "model: all 3 tokens are the pad id 0: nothing to run (pack_padded_sequence needs a length of at least 1)"
	if _, err := m.Embed([]int{0, 0, 0}); err == nil || err.Error() != want {
		t.Errorf("only pads: %v, want %q", err, want)
	}
	var none *Model
	if n, err := none.Unpadded([]int{0, 0}); n != 2 || err != nil {
		t.Errorf("nil model: %d, %v", n, err)
	}
}

func TestParsePad(t *testing.T) {
	for _, s := range []string{"0", "1", "30522", "999999999999999999"} {
		if n, err := ParsePad(s); err != nil || strconv.Itoa(n) != s {
			t.Errorf("%q: %d, %v", s, n, err)
		}
	}
	for _, bad := range []string{"", "-1", "+1", "00", "07", " 1", "1 ", "1.0", "0x1", "none", "1e3", "9999999999999999999", "١"} {
		if _, err := ParsePad(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Whatever the metadata holds, ParsePad returns an id it writes back the
// same, or an error that shows the value escaped and short.
func FuzzParsePad(f *testing.F) {
	for _, s := range []string{"0", "1", "30522", "-1", "+1", "007", "", "none", "\x1b[31m", strings.Repeat("9", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParsePad(s)
		if err != nil {
			if len(err.Error()) > 300 || strings.ContainsRune(err.Error(), '\x1b') {
				t.Fatalf("error for %q: %q", s, err)
			}
			return
		}
		if n < 0 || strconv.Itoa(n) != s {
			t.Fatalf("%q reads as %d", s, n)
		}
	})
}

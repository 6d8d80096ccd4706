package verify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
)

func TestParse(t *testing.T) {
	in := "{\"ids\": [1, 2], \"logits\": [0.5, -1e-3, 2], \"text\": \"ignored\"}\n\n  \r\n{\"ids\":[0],\"logits\":[1,2,3]}"
	cases, err := Parse(strings.NewReader(in), "v.jsonl", 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0].Line != 1 || cases[1].Line != 4 || cases[0].IDs[1] != 2 || cases[0].Logits[1] != -1e-3 || cases[1].Logits[2] != 3 {
		t.Fatalf("%+v", cases)
	}
}

func TestParseBad(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "v:" + " no lines"},
		{"\n\n", "no lines"},
		{`{"ids":[1],"logits":[1,2,3]}` + "\n" + `{"ids":[9],"logits":[1,2,3]}`, "v:2: ids[0] = 9 is out of range [0, 5)"},
		{`{"ids":[-1],"logits":[1,2,3]}`, "v:1: ids[0] = -1 is out of range"},
		{`{"ids":[1.5],"logits":[1,2,3]}`, "ids[0] = 1.5 is not an integer"},
		{`{"ids":["1"],"logits":[1,2,3]}`, `ids[0] = "1" is not an integer`},
		{`{"ids":[null],"logits":[1,2,3]}`, "ids[0] = null is not an integer"},
		{`{"ids":[1],"logits":[1,null,3]}`, "logits[1] = null is not a finite number"},
		{`{"ids":[1],"logits":[1,"2",3]}`, `logits[1] = "2" is not a finite number`},
		{`{"ids":[1],"logits":[1,1e999,3]}`, "logits[1] = 1e999 is not a finite number"},
		{`{"ids":[1],"logits":[1,NaN,3]}`, "v:1: not a JSON object"},
		{`{"ids":[1],"logits":[1,2]}`, "2 logits; the model has 3 classes"},
		{`{"ids":[],"logits":[1,2,3]}`, `"ids" is empty`},
		{`{"ids":null,"logits":[1,2,3]}`, `no "ids"`},
		{`{"logits":[1,2,3]}`, `no "ids"`},
		{`{"ids":[1],"logits":null}`, `no "logits"`},
		{`{"ids":[1],"logits":[1,2,3]} {}`, "more than one JSON value"},
		{`[1, 2]`, "not a JSON object"},
		{`{"ids":[1],"logits":[1,2,3]}` + "\n" + strings.Repeat(" ", MaxLineBytes+1), "v:2: the line is longer than"},
	} {
		_, err := Parse(strings.NewReader(c.in), "v", 5, 3)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60q: error %v, want %q", c.in, err, c.want)
		}
	}
}

// FuzzParse: no panic on any bytes, and what is read is in range.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"ids":[1,2],"logits":[0.5,-1,2]}` + "\n" + `{"ids":[0],"logits":[1,2,3]}`))
	f.Add([]byte(`{"ids":[null],"logits":[1,2,3]}`))
	if b, err := os.ReadFile("../model/testdata/heads/mean_uni2.verify.jsonl"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cases, err := Parse(strings.NewReader(string(b)), "f", 20, 3)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f:") && !strings.HasPrefix(err.Error(), "f ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, c := range cases {
			if len(c.IDs) == 0 || len(c.Logits) != 3 || c.Line < 1 {
				t.Fatalf("%+v", c)
			}
			for _, id := range c.IDs {
				if id < 0 || id >= 20 {
					t.Fatalf("id %d", id)
				}
			}
		}
	})
}

// fixture is one model of model/testdata/heads with its true head.
type fixture struct {
	name, head, act string
	bidirectional   bool
}

func fixtures(t *testing.T) []fixture {
	t.Helper()
	paths, err := filepath.Glob("../model/testdata/heads/*.verify.jsonl")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var out []fixture
	for _, p := range paths {
		name := strings.TrimSuffix(p, ".verify.jsonl")
		b, err := os.ReadFile(name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Head          string  `json:"head"`
			Act           *string `json:"act"`
			Bidirectional bool    `json:"bidirectional"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		fx := fixture{name: name, head: d.Head, bidirectional: d.Bidirectional}
		if d.Act != nil {
			fx.act = *d.Act
		}
		out = append(out, fx)
	}
	return out
}

// sameFunction reports whether head spec got is the fixture's head, or
// one that is the same function (one direction: hn, hn-bf, last).
func (fx fixture) sameFunction(got string) bool {
	want := fx.head
	if fx.act != "" {
		want += "+" + fx.act
	}
	if got == want {
		return true
	}
	h, a, _ := model.ParseHeadSpec(got)
	wh, wa, _ := model.ParseHeadSpec(want)
	uni := func(h cell.Head) bool { return h == cell.HeadHN || h == cell.HeadHNBF || h == cell.HeadLast }
	return !fx.bidirectional && a == wa && uni(h) && uni(wh)
}

func load(t *testing.T, fx fixture, act string, ext string) (*model.Model, []Case) {
	t.Helper()
	o := model.Options{}
	if act != "" {
		o.Act, _ = cell.ParseActivation(act)
	}
	m, err := model.Load(fx.name+ext, o)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := ReadFile(fx.name+".verify.jsonl", m.Vocab, m.Net.Classes())
	if err != nil {
		t.Fatal(err)
	}
	return m, cases
}

// Every fixture: auto finds its head; the right head passes; a wrong
// head (hn where it is not hn) is an error naming the right one.
func TestFixtures(t *testing.T) {
	for _, fx := range fixtures(t) {
		for _, ext := range []string{".safetensors", ".pt"} {
			t.Run(filepath.Base(fx.name)+ext, func(t *testing.T) {
				act := ""
				if fx.act != "" {
					act = "relu" // auto tries both
				}
				m, cases := load(t, fx, act, ext)
				got, err := Apply(m, cases, "v", true, false)
				if err != nil {
					t.Fatal(err)
				}
				spec := model.HeadSpec(got.Head, got.Act)
				if !fx.sameFunction(spec) || got.HeadSource != model.HeadFromVerify {
					t.Fatalf("auto chose %s (%s), the model's head is %s+%s", spec, got.HeadSource, fx.head, fx.act)
				}
				v, err := Check(got, cases)
				if err != nil || !v.Match() {
					t.Fatalf("%v %v", v, err)
				}
				// The model's head as -head hn (and the wrong activation).
				wrong, err := m.WithHead(cell.HeadHN, m.Act)
				if err != nil {
					t.Fatal(err)
				}
				_, err = Apply(wrong, cases, "v", false, false)
				if fx.sameFunction(model.HeadSpec(wrong.Head, wrong.Act)) {
					if err != nil {
						t.Fatalf("the right head refused: %v", err)
					}
					return
				}
				if err == nil {
					t.Fatalf("-head %s passed", model.HeadSpec(wrong.Head, wrong.Act))
				}
				// A library's message: the Options, no flag (issue 44).
				want := "the logits match " + options(spec)
				if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "line ") || strings.Contains(err.Error(), "-head") {
					t.Fatalf("error %q lacks %q", err, want)
				}
			})
		}
	}
}

// Logits recorded with one token do not tell hn, last, mean and max apart:
// auto says so, naming them.
func TestAutoAmbiguous(t *testing.T) {
	fx := fixture{name: "../model/testdata/heads/mean_uni2", head: "mean"}
	m, cases := load(t, fx, "", ".safetensors")
	var short []Case
	for _, c := range cases {
		if len(c.IDs) == 1 {
			short = append(short, c)
		}
	}
	if len(short) == 0 {
		t.Skip("no one-token line")
	}
	_, err := Apply(m, short, "v", true, false)
	if err == nil || !strings.Contains(err.Error(), "different functions") || !strings.Contains(err.Error(), "hn = hn-bf = last, mean, max") {
		t.Fatalf("%v", err)
	}
}

// Logits of another model match no head: the error names the closest.
func TestNoHeadMatches(t *testing.T) {
	fx := fixture{name: "../model/testdata/heads/mean_uni2", head: "mean"}
	m, cases := load(t, fx, "", ".safetensors")
	for i := range cases {
		cases[i].Logits[0] += 0.5
	}
	_, err := Apply(m, cases, "v", true, false)
	if err == nil || !strings.Contains(err.Error(), "no head matches (the closest") {
		t.Fatalf("%v", err)
	}
}

func TestDifference(t *testing.T) {
	for _, c := range []struct {
		y, ref []float64
		want   float64
	}{
		{[]float64{1, 2}, []float64{1, 2}, 0},
		{[]float64{0.1, 0.2}, []float64{0.1, 0.2001}, 1e-4}, // below 1: absolute
		{[]float64{10, 20.002}, []float64{10, 20}, 1e-4},    // above 1: relative to the largest
		{[]float64{-40, 0.004}, []float64{-40, 0}, 1e-4},    // a small logit beside a large one
		{[]float64{1, 2}, []float64{1, 2.5}, 0.2},           // 0.5 / 2.5
	} {
		if got := difference(c.y, c.ref); got-c.want > 1e-15 || c.want-got > 1e-15 {
			t.Errorf("difference(%v, %v) = %v, want %v", c.y, c.ref, got, c.want)
		}
	}
}

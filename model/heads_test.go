package model

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
)

// testdata/heads holds float32 PyTorch models with every head and
// classifier, made by testdata/gen_heads.py with float64 references (see
// its doc string).

type headFixture struct {
	Name     string            `json:"name"`
	Files    []string          `json:"files"`
	Layers   int               `json:"layers"`
	Bi       bool              `json:"bidirectional"`
	Units    int               `json:"units"`
	Head     string            `json:"head"`
	Act      *string           `json:"act"`
	InMeta   bool              `json:"head_in_metadata"`
	Prefixes map[string]string `json:"prefixes"`
	IGSteps  int               `json:"ig_steps"`
	Cases    []referenceCase   `json:"cases"`
}

// referenceCase is one input of a fixture with its float64 PyTorch
// references (gen_heads.py, onnx/gen_onnx.py).
type referenceCase struct {
	IDs       []int       `json:"ids"`
	Features  [][]float64 `json:"features_in"` // dense models only
	Logits    []float64   `json:"logits"`
	Baseline  []float64   `json:"baseline_logits"`
	Class     int         `json:"class"`
	Saliency  [][]float64 `json:"saliency"`
	GxI       [][]float64 `json:"gxi"`
	IG        [][]float64 `json:"ig"`
	IGDelta   float64     `json:"ig_delta"`
	Occlusion []float64   `json:"occlusion"`
}

// check runs saliency, G×I, IG (float64 weights, as the references) and
// occlusion on x and compares them, the logits and IG's gap with the
// references to 1e-8 relative, keeping the largest difference per method.
func (c referenceCase) check(t *testing.T, e *attrib.Explainer, x cell.Input, name string, steps int, worst map[string]float64) {
	t.Helper()
	opt := attrib.Options{Class: attrib.ClassIndex(c.Class), Steps: steps}
	var res attrib.Result
	for _, mc := range []struct {
		method attrib.Method
		want   []float64
	}{
		{attrib.Saliency, flat(c.Saliency)},
		{attrib.GradientXInput, flat(c.GxI)},
		{attrib.IntegratedGradients, flat(c.IG)},
		{attrib.Occlusion, c.Occlusion},
	} {
		if err := e.Attribute(t.Context(), mc.method, x, opt, &res); err != nil {
			t.Fatal(err)
		}
		what := name + " " + mc.method.String()
		agreeTo(t, what+" logits", res.Logits, c.Logits, 1e-8)
		got := res.Features
		if mc.method == attrib.Occlusion {
			got = res.Scores
		}
		worst[mc.method.String()] = max(worst[mc.method.String()], agreeTo(t, what, got, mc.want, 1e-8))
		if mc.method == attrib.IntegratedGradients {
			// The gap is a difference of sums: to 1e-8 of the logits.
			tol := 1e-8 * max(math.Abs(c.Logits[c.Class]), math.Abs(c.Baseline[c.Class]))
			if d := math.Abs(res.Delta - c.IGDelta); !(d <= tol) {
				t.Fatalf("%s delta %v, reference %v", what, res.Delta, c.IGDelta)
			}
		}
	}
}

func loadHeadFixtures(t *testing.T) []headFixture { return loadJSONFixtures[headFixture](t, "heads") }

// loadJSONFixtures reads every testdata/dir/*.json as a T.
func loadJSONFixtures[T any](t *testing.T, dir string) []T {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in testdata/%s: %v", dir, err)
	}
	var all []T
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f T
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		all = append(all, f)
	}
	return all
}

// options returns the head and activation the fixture's model needs.
func (f headFixture) options(t *testing.T) Options {
	spec := f.Head
	if f.Act != nil {
		spec += "+" + *f.Act
	}
	h, a, err := ParseHeadSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Head: new(h), Act: a}
}

// agreeTo checks got against want to tol of want's largest magnitude and
// returns the largest difference relative to it.
func agreeTo(t *testing.T, what string, got, want []float64, tol float64) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 0.0
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	scale = max(scale, 1e-300)
	tol *= scale
	worst := 0.0
	for i := range want {
		d := math.Abs(got[i] - want[i])
		if !(d <= tol) {
			t.Fatalf("%s[%d] = %.17g, reference %.17g (difference %.3g, tolerance %.3g)", what, i, got[i], want[i], d, tol)
		}
		worst = max(worst, d/scale)
	}
	return worst
}

// Every head and classifier, from both file formats, with the head given
// as options (or read from the metadata): logits, saliency, G×I, IG
// (Gauss–Legendre, 50 steps, float64 weights) and occlusion equal float64
// PyTorch to 1e-8; LRP with bias factor 1 conserves relevance.
func TestHeadFixtures(t *testing.T) {
	fixtures := loadHeadFixtures(t)
	seen := map[string]bool{}
	worst := map[string]float64{}
	for _, f := range fixtures {
		seen[f.Head] = true
		for _, file := range f.Files {
			t.Run(file, func(t *testing.T) {
				o := f.options(t)
				fromMeta := f.InMeta && strings.HasSuffix(file, ".safetensors")
				if fromMeta {
					o = Options{}
				}
				m, err := Load(filepath.Join("testdata", "heads", file), o)
				if err != nil {
					t.Fatal(err)
				}
				want := f.options(t)
				if m.Head != *want.Head || m.Act != want.Act || m.Net.Head() != *want.Head || m.Net.Activation() != want.Act {
					t.Fatalf("head %v+%v (net %v+%v), want %v+%v", m.Head, m.Act, m.Net.Head(), m.Net.Activation(), *want.Head, want.Act)
				}
				if src := map[bool]string{true: HeadFromMetadata, false: HeadFromOptions}[fromMeta]; m.HeadSource != src {
					t.Fatalf("head source %q, want %q", m.HeadSource, src)
				}
				if m.Names.Decoder != f.Prefixes["decoder"] || m.OutputLayer != f.Prefixes["output_layer"] || m.Net.Units() != f.Units {
					t.Fatalf("classifier %q → %q with %d units, want %q → %q with %d", m.Names.Decoder, m.OutputLayer, m.Net.Units(), f.Prefixes["decoder"], f.Prefixes["output_layer"], f.Units)
				}
				e := mustExplainer(t, m.Net)
				var res attrib.Result
				for ci, c := range f.Cases {
					x, err := m.Embed(c.IDs)
					if err != nil {
						t.Fatal(err)
					}
					c.check(t, e, x, fmt.Sprintf("%s case %d", f.Name, ci), f.IGSteps, worst)
					opt := attrib.Options{Class: attrib.ClassIndex(c.Class), LRPBias: 1}
					if err := e.Attribute(t.Context(), attrib.LRP, x, opt, &res); err != nil {
						t.Fatal(err)
					}
					r := res.Relevance
					if total := sum(res.Scores) + r.Initial; math.Abs(total-r.Output) > 1e-10*max(1, math.Abs(r.Output)) || math.Abs(r.Bias) > 1e-10*max(1, math.Abs(r.Output)) {
						t.Fatalf("case %d: LRP with bias factor 1: tokens %v + initial %v = %v, output %v", ci, sum(res.Scores), r.Initial, total, r.Output)
					}
				}
			})
		}
	}
	t.Logf("largest relative differences from float64 PyTorch: %v", worst)
	for _, h := range cell.Heads() {
		if !seen[h.String()] {
			t.Errorf("no fixture with head %v", h)
		}
	}
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// The logits a user recorded from the float32 model (the .verify.jsonl
// files) match ours to float32 precision.
func TestHeadVerifyFiles(t *testing.T) {
	for _, f := range loadHeadFixtures(t) {
		m, err := Load(filepath.Join("testdata", "heads", f.Files[0]), f.options(t))
		if err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(filepath.Join("testdata", "heads", f.Name+".verify.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		lines := 0
		for sc.Scan() {
			var rec struct {
				IDs    []int     `json:"ids"`
				Logits []float64 `json:"logits"`
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			x, err := m.Embed(rec.IDs)
			if err != nil {
				t.Fatal(err)
			}
			r, _ := cell.NewRunner(m.Net)
			y, err := r.Forward(x)
			if err != nil {
				t.Fatal(err)
			}
			agreeTo(t, f.Name+" verify logits", y, rec.Logits, 1e-5)
			lines++
		}
		fh.Close()
		if lines == 0 {
			t.Fatalf("%s: no verify lines", f.Name)
		}
	}
}

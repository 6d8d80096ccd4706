package model

import (
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

// The fixtures in testdata are made by testdata/gen.py from independent
// references: PyTorch in float64, Captum's attribution classes, and Arras
// et al.'s own LRP code (see testdata/README.md). Each <name>.json lists
// the files of one model, what they hold, and the reference attributions
// of a few inputs.

type fixture struct {
	Name      string            `json:"name"`
	Files     []string          `json:"files"`
	Prefixes  map[string]string `json:"prefixes"`
	Vocab     int               `json:"vocab"`
	Input     int               `json:"input"`
	Hidden    int               `json:"hidden"`
	Layers    int               `json:"layers"`
	Bi        bool              `json:"bidirectional"`
	Classes   int               `json:"classes"`
	LSTMBias  bool              `json:"lstm_bias"`
	DecBias   bool              `json:"decoder_bias"`
	Cases     []fixtureCase     `json:"cases"`
	Reference string            `json:"reference"` // another fixture whose cases apply
}

type fixtureCase struct {
	IDs        []int           `json:"ids"`
	FeaturesIn [][]float64     `json:"features_in"`
	Logits     []float64       `json:"logits"`
	Baseline   []float64       `json:"baseline_logits"`
	Predicted  int             `json:"predicted"`
	Class      int             `json:"class"`
	Results    []fixtureResult `json:"results"`
}

type fixtureResult struct {
	Method      string      `json:"method"`
	Quadrature  string      `json:"quadrature"`
	Steps       int         `json:"steps"`
	Eps         float64     `json:"eps"`
	BiasFactor  float64     `json:"bias_factor"`
	Features    [][]float64 `json:"features"`
	Tokens      []float64   `json:"tokens"`
	Delta       float64     `json:"delta"`
	FeaturesF64 [][]float64 `json:"features_f64"`
	TokensF64   []float64   `json:"tokens_f64"`
	DeltaF64    *float64    `json:"delta_f64"`
	Rest        *float64    `json:"rest"`
}

func loadFixtures(t *testing.T) []fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in testdata: %v", err)
	}
	var all []fixture
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f fixture
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if len(f.Files) == 0 || f.Name == "" {
			continue // not a model fixture
		}
		all = append(all, f)
	}
	return all
}

// agree checks got against want to 1e-9 of want's largest magnitude.
func agree(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 0.0
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	tol := 1e-9 * max(scale, 1e-300)
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol) {
			t.Fatalf("%s[%d] = %.17g, reference %.17g (difference %.3g, tolerance %.3g)", what, i, got[i], want[i], d, tol)
		}
	}
}

func flat(m [][]float64) []float64 {
	var v []float64
	for _, r := range m {
		v = append(v, r...)
	}
	return v
}

// Every model file loads as the model its fixture describes, and every
// method gives the reference's numbers to 1e-9.
func TestFixtures(t *testing.T) {
	for _, f := range loadFixtures(t) {
		for _, file := range f.Files {
			t.Run(file, func(t *testing.T) {
				m, err := Load(filepath.Join("testdata", file), Options{Names: Names{}})
				if err != nil {
					t.Fatal(err)
				}
				checkArchitecture(t, m, f)
				for ci, c := range f.Cases {
					// -short (the race detector, the arm64 emulator): the
					// short inputs of the small models; the rest in full runs.
					if testing.Short() && (strings.HasPrefix(f.Name, "bench_") || len(c.IDs)+len(c.FeaturesIn) > 23) {
						continue
					}
					checkCase(t, m, fmt.Sprintf("case %d", ci), c)
				}
			})
		}
	}
}

func checkArchitecture(t *testing.T, m *Model, f fixture) {
	t.Helper()
	n := m.Net
	dirs := 1
	if f.Bi {
		dirs = 2
	}
	if n.Input() != f.Input || n.Hidden() != f.Hidden || n.Layers() != f.Layers || n.Directions() != dirs || n.Classes() != f.Classes ||
		n.HasLSTMBias() != f.LSTMBias || n.HasDecoderBias() != f.DecBias || m.Vocab != f.Vocab {
		t.Fatalf("read as %s\nwant E=%d H=%d L=%d bi=%v C=%d lstm bias %v decoder bias %v V=%d", m.Summary(), f.Input, f.Hidden, f.Layers, f.Bi, f.Classes, f.LSTMBias, f.DecBias, f.Vocab)
	}
	if want := f.Prefixes["lstm"]; m.Names.LSTM != want {
		t.Errorf("LSTM prefix %q, want %q", m.Names.LSTM, want)
	}
	if want := f.Prefixes["decoder"]; m.Names.Decoder != want {
		t.Errorf("decoder prefix %q, want %q", m.Names.Decoder, want)
	}
	if want := f.Prefixes["embedding"]; m.Names.Embedding != want {
		t.Errorf("embedding prefix %q, want %q", m.Names.Embedding, want)
	}
}

func checkCase(t *testing.T, m *Model, name string, c fixtureCase) {
	t.Helper()
	var x cell.Input
	var err error
	if c.IDs != nil {
		x, err = m.Embed(c.IDs)
		if err != nil {
			t.Fatal(err)
		}
	} else {
		x = cell.Dense(flat(c.FeaturesIn), len(c.FeaturesIn))
	}
	e := mustExplainer(t, m.Net)
	var res attrib.Result
	for _, r := range c.Results {
		what := fmt.Sprintf("%s %s", name, r.Method)
		opt := attrib.Options{Class: attrib.ClassIndex(c.Class)}
		var meth attrib.Method
		switch r.Method {
		case "saliency":
			meth = attrib.Saliency
		case "gxi":
			meth = attrib.GradientXInput
		case "occlusion":
			meth = attrib.Occlusion
		case "ig":
			meth = attrib.IntegratedGradients
			q, err := attrib.ParseQuadrature(r.Quadrature)
			if err != nil {
				t.Fatal(err)
			}
			opt.Quadrature, opt.Steps, opt.Float32Weights = q, r.Steps, true
			what += fmt.Sprintf(" %s %d", r.Quadrature, r.Steps)
		case "lrp":
			meth = attrib.LRP
			opt.Epsilon, opt.LRPBias = new(r.Eps), r.BiasFactor
			what += fmt.Sprintf(" eps %v bias %v", r.Eps, r.BiasFactor)
		default:
			t.Fatalf("%s: unknown method", what)
		}
		if err := e.Attribute(t.Context(), meth, x, opt, &res); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		agree(t, what+" logits", res.Logits, c.Logits)
		if res.Prediction != c.Predicted {
			t.Fatalf("%s: prediction %d, reference %d", what, res.Prediction, c.Predicted)
		}
		agree(t, what+" tokens", res.Scores, r.Tokens)
		if r.Features != nil && meth != attrib.Occlusion {
			agree(t, what+" features", res.Features, flat(r.Features))
		}
		switch meth {
		case attrib.IntegratedGradients:
			// Captum's delta, and the pure-float64 integral with float64 weights.
			gap := math.Abs(res.Delta - r.Delta)
			if gap > 1e-9*max(1, math.Abs(c.Logits[c.Class])) {
				t.Fatalf("%s: delta %v, Captum %v", what, res.Delta, r.Delta)
			}
			if r.TokensF64 != nil {
				opt.Float32Weights = false
				if err := e.Attribute(t.Context(), meth, x, opt, &res); err != nil {
					t.Fatal(err)
				}
				agree(t, what+" float64 weights tokens", res.Scores, r.TokensF64)
				if r.FeaturesF64 != nil {
					agree(t, what+" float64 weights features", res.Features, flat(r.FeaturesF64))
				}
			}
		case attrib.LRP:
			if r.Rest != nil {
				agree(t, what+" initial-state relevance", []float64{res.Relevance.Initial}, []float64{*r.Rest})
			}
		}
	}
}

// The prefixes the fixtures use are found without help; explicit names
// work too, and wrong ones are errors that list the candidates.
func TestExplicitNames(t *testing.T) {
	for _, f := range loadFixtures(t) {
		file := filepath.Join("testdata", f.Files[0])
		names := Names{Embedding: f.Prefixes["embedding"], LSTM: f.Prefixes["lstm"], Decoder: f.Prefixes["decoder"]}
		if names.Embedding == "" {
			names.Embedding = NoEmbedding
		}
		if _, err := Load(file, Options{Names: names}); err != nil {
			t.Fatalf("%s with %+v: %v", file, names, err)
		}
		_, err := Load(file, Options{Names: Names{LSTM: "nope"}})
		if err == nil || !strings.Contains(err.Error(), f.Prefixes["lstm"]) {
			t.Fatalf("%s with -lstm nope: %v (want the candidates listed)", file, err)
		}
	}
}

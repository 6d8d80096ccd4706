package model

import (
	"strings"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/tensorfile"
)

func TestHeadSpec(t *testing.T) {
	for _, h := range cell.Heads() {
		for _, a := range []cell.Activation{cell.ActNone, cell.ActReLU, cell.ActTanh} {
			s := HeadSpec(h, a)
			gh, ga, err := ParseHeadSpec(s)
			if err != nil || gh != h || ga != a {
				t.Fatalf("%q reads as %v+%v, %v", s, gh, ga, err)
			}
		}
	}
	if HeadSpec(cell.HeadMax, cell.ActReLU) != "max+relu" || HeadSpec(cell.HeadHNBF, cell.ActNone) != "hn-bf" {
		t.Fatal("spec format")
	}
	for _, bad := range []string{"", "+", "mean+", "mean+none", "Mean", "max+relu+tanh", "hn bf", "sigmoid"} {
		if _, _, err := ParseHeadSpec(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseHeadSpec(f *testing.F) {
	for _, s := range []string{"hn", "hn-bf", "last", "mean+tanh", "max+relu", "x+y", "+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, a, err := ParseHeadSpec(s)
		if err != nil {
			return
		}
		if HeadSpec(h, a) != s {
			t.Fatalf("%q reads as %v+%v, written %q", s, h, a, HeadSpec(h, a))
		}
	})
}

// mlpModel is baseModel (H·dirs = 4) with a classifier of two Linear
// layers, first → second, of 6 hidden units.
func mlpModel(first, second string) map[string]tensor {
	m := baseModel("emb", "lstm", "fc")
	delete(m, "fc.weight")
	delete(m, "fc.bias")
	m[first+".weight"], m[first+".bias"] = filled(6, 4), filled(6)
	m[second+".weight"], m[second+".bias"] = filled(3, 6), filled(3)
	return m
}

// load reads tensors as a safetensors file with the given metadata.
func load(t *testing.T, tensors map[string]tensor, meta map[string]string, o Options) (*Model, error) {
	t.Helper()
	f, err := tensorfile.Open(writeSafetensors(t, tensors))
	if err != nil {
		t.Fatal(err)
	}
	f.Metadata = meta
	return FromFile(f, o)
}

// The classifier's two Linear layers are found by their shapes and names;
// the activation is required for them and refused for one layer.
func TestTwoLinearClassifier(t *testing.T) {
	for _, c := range [][2]string{{"fc1", "fc2"}, {"classifier.0", "classifier.2"}, {"hidden", "out"}, {"head.fc9", "head.fc10"}, {"proj", "logits"}} {
		m, err := load(t, mlpModel(c[0], c[1]), nil, Options{Act: cell.ActTanh})
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if m.Names.Decoder != c[0] || m.OutputLayer != c[1] || m.Net.Units() != 6 || m.Act != cell.ActTanh || m.Head != cell.HeadHN || m.HeadSource != HeadDefault {
			t.Fatalf("%v: read as %q → %q, %d units, %v+%v (%s)", c, m.Names.Decoder, m.OutputLayer, m.Net.Units(), m.Head, m.Act, m.HeadSource)
		}
		if !strings.Contains(m.Summary(), "→ tanh → "+c[1]) {
			t.Fatalf("%v: summary\n%s", c, m.Summary())
		}
		_, err = load(t, mlpModel(c[0], c[1]), nil, Options{})
		if err == nil || !strings.Contains(err.Error(), "relu, tanh") || !strings.Contains(err.Error(), c[0]) {
			t.Fatalf("%v without activation: %v", c, err)
		}
	}
	// An nn.Sequential named with -decoder.
	if m, err := load(t, mlpModel("classifier.0", "classifier.2"), nil, Options{Names: Names{Decoder: "classifier"}, Act: cell.ActReLU}); err != nil || m.OutputLayer != "classifier.2" {
		t.Fatalf("-decoder classifier: %v", err)
	}
	// Two first layers in one module: ambiguous without -decoder.
	m := mlpModel("fc1", "fc2")
	m["fc0.weight"], m["fc0.bias"] = filled(6, 4), filled(6)
	if _, err := load(t, m, nil, Options{Act: cell.ActReLU}); err == nil || !strings.Contains(err.Error(), "Names.Decoder") {
		t.Fatalf("two candidate pairs: %v", err)
	}
	m = mlpModel("fc1", "fc2")
	m["fc2.weight"], m["fc2.bias"] = filled(5, 6), filled(5)
	m["fc3.weight"], m["fc3.bias"] = filled(3, 5), filled(3)
	if _, err := load(t, m, nil, Options{Act: cell.ActReLU}); err == nil || !strings.Contains(err.Error(), "fc1 → fc2 → fc3") {
		t.Fatalf("three Linear layers: %v", err)
	}
	if _, err := load(t, baseModel("emb", "lstm", "fc"), nil, Options{Act: cell.ActReLU}); err == nil || !strings.Contains(err.Error(), "one Linear layer") {
		t.Fatalf("an activation for one Linear layer: %v", err)
	}
}

// Options over metadata over the default; a malformed metadata value is
// an error naming the key.
func TestHeadPrecedence(t *testing.T) {
	base := baseModel("emb", "lstm", "fc")
	for _, c := range []struct {
		meta   map[string]string
		o      Options
		head   cell.Head
		source string
	}{
		{nil, Options{}, cell.HeadHN, HeadDefault},
		{map[string]string{"format": "pt"}, Options{}, cell.HeadHN, HeadDefault},
		{map[string]string{HeadMetadataKey: "mean"}, Options{}, cell.HeadMean, HeadFromMetadata},
		{map[string]string{HeadMetadataKey: "mean"}, Options{Head: new(cell.HeadHN)}, cell.HeadHN, HeadFromOptions},
		{map[string]string{HeadMetadataKey: "max"}, Options{Head: new(cell.HeadLast)}, cell.HeadLast, HeadFromOptions},
		{nil, Options{Head: new(cell.HeadHNBF)}, cell.HeadHNBF, HeadFromOptions},
		{map[string]string{HeadMetadataKey: "max"}, Options{Head: new(cell.HeadMean)}, cell.HeadMean, HeadFromOptions},
	} {
		m, err := load(t, base, c.meta, c.o)
		if err != nil {
			t.Fatal(err)
		}
		if m.Head != c.head || m.Net.Head() != c.head || m.HeadSource != c.source {
			t.Errorf("metadata %v, options %+v: head %v (%s), want %v (%s)", c.meta, c.o, m.Head, m.HeadSource, c.head, c.source)
		}
	}
	_, err := load(t, base, map[string]string{HeadMetadataKey: "avg"}, Options{})
	if err == nil || !strings.Contains(err.Error(), HeadMetadataKey) || !strings.Contains(err.Error(), "avg") {
		t.Fatalf("malformed metadata: %v", err)
	}
	_, err = load(t, base, map[string]string{HeadMetadataKey: "max+relu"}, Options{})
	if err == nil || !strings.Contains(err.Error(), HeadMetadataKey) {
		t.Fatalf("metadata activation on one Linear layer: %v", err)
	}
	// The metadata's activation serves a two-layer classifier; options win.
	mlp := mlpModel("fc1", "fc2")
	m, err := load(t, mlp, map[string]string{HeadMetadataKey: "max+relu"}, Options{})
	if err != nil || m.Act != cell.ActReLU || m.Head != cell.HeadMax {
		t.Fatalf("metadata max+relu: %v", err)
	}
	m, err = load(t, mlp, map[string]string{HeadMetadataKey: "max+relu"}, Options{Act: cell.ActTanh})
	if err != nil || m.Act != cell.ActTanh || m.Head != cell.HeadMax {
		t.Fatalf("metadata max+relu, option tanh: %v", err)
	}
	if _, err := load(t, base, nil, Options{Head: new(cell.Head(17))}); err == nil {
		t.Fatal("head 17 accepted")
	}
}

// WithHead gives the same weights another head, and checks the
// activation against the classifier.
func TestWithHead(t *testing.T) {
	m, err := load(t, baseModel("emb", "lstm", "fc"), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := m.Embed([]int{1, 4, 2})
	for _, h := range cell.Heads() {
		w, err := m.WithHead(h, cell.ActNone)
		if err != nil {
			t.Fatal(err)
		}
		direct, err := load(t, baseModel("emb", "lstm", "fc"), nil, Options{Head: new(h)})
		if err != nil {
			t.Fatal(err)
		}
		r1, _ := cell.NewRunner(w.Net)
		r2, _ := cell.NewRunner(direct.Net)
		y1, _ := r1.Forward(x)
		y2, _ := r2.Forward(x)
		for k := range y1 {
			if y1[k] != y2[k] {
				t.Fatalf("%v: WithHead logit %d %v, loaded %v", h, k, y1[k], y2[k])
			}
		}
		if w.Head != h || w.HeadSource != HeadFromOptions || m.Head != cell.HeadHN {
			t.Fatalf("%v: WithHead gave %v (%s); original now %v", h, w.Head, w.HeadSource, m.Head)
		}
	}
	if _, err := m.WithHead(cell.HeadMean, cell.ActReLU); err == nil {
		t.Fatal("an activation on one Linear layer accepted")
	}
	mlp, err := load(t, mlpModel("fc1", "fc2"), nil, Options{Act: cell.ActReLU})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mlp.WithHead(cell.HeadMax, cell.ActNone); err == nil || !strings.Contains(err.Error(), "relu, tanh") {
		t.Fatalf("no activation on two Linear layers: %v", err)
	}
	if w, err := mlp.WithHead(cell.HeadMax, cell.ActTanh); err != nil || w.Net.Activation() != cell.ActTanh {
		t.Fatalf("max+tanh: %v", err)
	}
	if _, err := (*Model)(nil).WithHead(cell.HeadHN, cell.ActNone); err == nil {
		t.Fatal("nil model")
	}
}

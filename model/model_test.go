package model

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/whitebox-lstm/whitebox/attrib"
	"github.com/whitebox-lstm/whitebox/cell"
)

type tensor struct {
	shape []int
	data  []float64
}

// writeSafetensors writes F64 tensors as a .safetensors file.
func writeSafetensors(t *testing.T, tensors map[string]tensor) string {
	t.Helper()
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{}
	var data bytes.Buffer
	for _, n := range names {
		tn := tensors[n]
		begin := data.Len()
		for _, v := range tn.data {
			binary.Write(&data, binary.LittleEndian, v)
		}
		header[n] = map[string]any{"dtype": "F64", "shape": tn.shape, "data_offsets": []int{begin, data.Len()}}
	}
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	binary.Write(&file, binary.LittleEndian, uint64(len(h)))
	file.Write(h)
	file.Write(data.Bytes())
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func filled(shape ...int) tensor {
	n := 1
	for _, s := range shape {
		n *= s
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = math.Sin(float64(i)+1) / 4
	}
	return tensor{shape: shape, data: d}
}

// baseModel is an Embedding(10, 3) → LSTM(3, 2, 2 layers, bidirectional)
// → Linear(4, 3) state_dict with the given prefixes.
func baseModel(emb, lstm, dec string) map[string]tensor {
	m := map[string]tensor{
		emb + ".weight": filled(10, 3),
		dec + ".weight": filled(3, 4),
		dec + ".bias":   filled(3),
	}
	for _, sfx := range []string{"_l0", "_l0_reverse", "_l1", "_l1_reverse"} {
		in := 3
		if strings.HasPrefix(sfx, "_l1") {
			in = 4
		}
		m[lstm+".weight_ih"+sfx] = filled(8, in)
		m[lstm+".weight_hh"+sfx] = filled(8, 2)
		m[lstm+".bias_ih"+sfx] = filled(8)
		m[lstm+".bias_hh"+sfx] = filled(8)
	}
	return m
}

func TestLoadInfersArchitecture(t *testing.T) {
	m, err := Load(writeSafetensors(t, baseModel("embed", "encoder.rnn", "head")), Options{Names: Names{}})
	if err != nil {
		t.Fatal(err)
	}
	n := m.Net
	if n.Layers() != 2 || n.Directions() != 2 || n.Hidden() != 2 || n.Input() != 3 || n.Classes() != 3 || m.Vocab != 10 {
		t.Fatalf("read as\n%s", m.Summary())
	}
	if m.Names != (Names{Embedding: "embed", LSTM: "encoder.rnn", Decoder: "head"}) {
		t.Fatalf("names %+v", m.Names)
	}
	for _, ti := range m.Tensors {
		if ti.Role == "" {
			t.Errorf("tensor %s has no role", ti.Name)
		}
	}
	if _, err := m.Embed([]int{0, 9, 10}); err == nil || !strings.Contains(err.Error(), "position 2") {
		t.Fatalf("id 10 of 10: %v", err)
	}
	if _, err := m.Embed([]int{-1}); err == nil {
		t.Fatal("id −1 accepted")
	}
	if _, err := m.Embed(nil); err == nil {
		t.Fatal("empty input accepted")
	}
}

// Each broken file gives an error that names the problem.
func TestLoadRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		edit   func(m map[string]tensor)
		names  Names
		expect string
	}{
		{"missing weight_hh", func(m map[string]tensor) { delete(m, "lstm.weight_hh_l1") }, Names{}, `"lstm.weight_hh_l1"`},
		{"missing reverse", func(m map[string]tensor) { delete(m, "lstm.weight_ih_l1_reverse") }, Names{}, `lstm.weight_ih_l1_reverse`},
		{"GRU and LSTM layers mixed", func(m map[string]tensor) {
			for k, v := range m {
				if strings.HasPrefix(k, "lstm.") && strings.Contains(k, "_l0") {
					v.shape = append([]int{6}, v.shape[1:]...)
					v.data = v.data[:len(v.data)/8*6]
					m[k] = v
				}
			}
		}, Names{}, `"lstm.weight_ih_l1" (layer 1 weight_ih) has shape [8 4], want [6, 4]`},
		{"proj_size", func(m map[string]tensor) { m["lstm.weight_hr_l0"] = filled(1, 2) }, Names{}, "proj_size"},
		{"half biases", func(m map[string]tensor) { delete(m, "lstm.bias_hh_l1") }, Names{}, "bias_ih but no bias_hh"},
		{"bad layer shape", func(m map[string]tensor) { m["lstm.weight_ih_l1"] = filled(8, 5) }, Names{}, `"lstm.weight_ih_l1"`},
		{"NaN", func(m map[string]tensor) { m["lstm.weight_hh_l0"].data[3] = math.NaN() }, Names{}, `"lstm.weight_hh_l0" holds NaN`},
		{"Inf in the decoder", func(m map[string]tensor) { m["fc.bias"].data[1] = math.Inf(-1) }, Names{}, `"fc.bias" holds -Inf`},
		{"attention", func(m map[string]tensor) { m["attn.weight"] = filled(4, 7) }, Names{}, "attn.weight"},
		{"two LSTMs", func(m map[string]tensor) {
			for k, v := range baseModel("x", "lstm2", "y") {
				if strings.HasPrefix(k, "lstm2.") {
					m[k] = v
				}
			}
		}, Names{}, `several LSTMs: "lstm", "lstm2"; name one with Names.LSTM`},
		{"no decoder", func(m map[string]tensor) { delete(m, "fc.weight"); delete(m, "fc.bias") }, Names{}, "no decoder"},
		{"bad decoder bias", func(m map[string]tensor) { m["fc.bias"] = filled(4) }, Names{}, `"fc.bias"`},
		{"two embeddings", func(m map[string]tensor) { m["emb2.weight"] = filled(5, 3) }, Names{}, `several embedding candidates of shape [V, 3]: "emb", "emb2"; name one with Names.Embedding (or Names.Embedding = NoEmbedding)`},
		{"unknown lstm name", func(m map[string]tensor) {}, Names{LSTM: "rnn"}, `LSTMs found: "lstm"`},
		{"unknown decoder name", func(m map[string]tensor) {}, Names{Decoder: "out"}, `candidates: "fc"`},
		{"unknown embedding name", func(m map[string]tensor) {}, Names{Embedding: "embedding"}, `candidates: "emb"`},
		{"embedding width", func(m map[string]tensor) { m["emb.weight"] = filled(10, 5) }, Names{},
			`embedding "emb" has shape [10 5]: its width 5 does not match the LSTM's input size 3`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := baseModel("emb", "lstm", "fc")
			c.edit(m)
			_, err := Load(writeSafetensors(t, m), Options{Names: c.names})
			if err == nil || !strings.Contains(err.Error(), c.expect) {
				t.Fatalf("error %v, want one containing %s", err, c.expect)
			}
			if !strings.Contains(err.Error(), "m.safetensors") {
				t.Fatalf("error %v does not name the file", err)
			}
		})
	}
}

// Ambiguities are resolved by explicit names; "none" reads features.
func TestLoadExplicitNames(t *testing.T) {
	m := baseModel("emb", "lstm", "fc")
	m["emb2.weight"] = filled(5, 3)
	path := writeSafetensors(t, m)
	if _, err := Load(path, Options{Names: Names{Embedding: "emb2"}}); err == nil || !strings.Contains(err.Error(), "emb.weight") {
		t.Fatalf("the other embedding is left over: %v", err)
	}
	delete(m, "emb2.weight")
	delete(m, "emb.weight")
	got, err := Load(writeSafetensors(t, m), Options{Names: Names{Embedding: NoEmbedding}})
	if err != nil || got.Embedding != nil {
		t.Fatalf("no embedding: %v", err)
	}
	got, err = Load(writeSafetensors(t, m), Options{Names: Names{}})
	if err != nil || got.Embedding != nil || got.Names.Embedding != "" {
		t.Fatalf("features model: %v", err)
	}
}

// One loaded model serves many goroutines, each with its own Explainer,
// with the same bits as one goroutine alone.
func TestConcurrentExplainers(t *testing.T) {
	m, err := Load(filepath.Join("testdata", "bi2.safetensors"), Options{Names: Names{}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := m.Embed([]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	if err != nil {
		t.Fatal(err)
	}
	want, err := attrib.Attribute(t.Context(), m.Net, attrib.IntegratedGradients, x, attrib.Options{Class: attrib.Predicted})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := mustExplainer(t, m.Net)
			var res attrib.Result
			for _, meth := range attrib.Methods() {
				if err := e.Attribute(context.Background(), meth, x, attrib.Options{Class: attrib.Predicted, Workers: 2}, &res); err != nil {
					errs <- err
					return
				}
				if meth == attrib.IntegratedGradients && fmt.Sprint(res.Scores) != fmt.Sprint(want.Scores) {
					errs <- fmt.Errorf("IG %v, alone %v", res.Scores, want.Scores)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestNilModel(t *testing.T) {
	var m *Model
	if _, err := m.Embed([]int{1}); err == nil {
		t.Fatal("a nil model embedded")
	}
	if _, err := (&Model{}).Embed([]int{1}); err == nil {
		t.Fatal("a zero model embedded")
	}
	if _, err := FromFile(nil, Options{}); err == nil {
		t.Fatal("FromFile(nil) succeeded")
	}
}

// A training checkpoint: the model's tensors under "model.", the
// optimizer's beside them. The model is read, the optimizer's state is
// listed as ignored; extra tensors inside the model are still refused.
func TestCheckpoint(t *testing.T) {
	sd := map[string]tensor{}
	for k, v := range baseModel("emb", "lstm", "fc") {
		sd["model."+k] = v
	}
	sd["optimizer.state.0.exp_avg"] = filled(3, 4)
	sd["optimizer.state.0.step"] = filled(1)
	m, err := Load(writeSafetensors(t, sd), Options{Names: Names{}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Names.LSTM != "model.lstm" || m.Names.Decoder != "model.fc" || m.Names.Embedding != "model.emb" {
		t.Fatalf("names %+v", m.Names)
	}
	if !strings.Contains(m.Summary(), "ignored: outside model") {
		t.Fatalf("summary does not list the ignored tensors:\n%s", m.Summary())
	}
	sd["model.attn.weight"] = filled(4, 7)
	if _, err := Load(writeSafetensors(t, sd), Options{Names: Names{}}); err == nil || !strings.Contains(err.Error(), "model.attn.weight") {
		t.Fatalf("an extra tensor inside the model: %v", err)
	}
	for names, want := range map[[3]string]string{
		{"model.emb", "model.lstm", "model.fc"}:      "model.",
		{"", "lstm", "fc"}:                           "",
		{"a.b.emb", "a.b.lstm", "a.c.fc"}:            "a.",
		{"enc.embedding", "enc.lstm", "classifier"}:  "",
		{"", "encoder.lstm", "encoder.head.decoder"}: "encoder.",
	} {
		if got := root(names[:]...); got != want {
			t.Errorf("root%v = %q, want %q", names, got, want)
		}
	}
}

// A file with thousands of extra tensors gives a short message: a few
// names and a count (issue 25, case 7).
func TestLoadManyExtrasShortMessage(t *testing.T) {
	m := baseModel("emb", "lstm", "fc")
	for i := range 20000 {
		m[fmt.Sprintf("extra%05d", i)] = tensor{shape: []int{0}}
	}
	_, err := Load(writeSafetensors(t, m), Options{})
	if err == nil || !strings.Contains(err.Error(), `"extra00004" [0] and 19,995 more`) || len(err.Error()) > 500 {
		t.Fatalf("error (%d bytes): %.600v", len(fmt.Sprint(err)), err)
	}
}

// Issue 43: EmbedInto writes into the caller's buffer: no allocation when
// it is large enough, the bits of Embed, and a grown buffer when short.
func TestEmbedInto(t *testing.T) {
	m, err := Load(filepath.Join("testdata", "uni1.safetensors"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := []int{3, 14, 15, 9, 2, 6}
	want, err := m.Embed(ids)
	if err != nil {
		t.Fatal(err)
	}
	short := make([]float64, 3)
	x, err := m.EmbedInto(short, ids)
	if err != nil || x.Len() != len(ids) || !slices.Equal(x.DenseValues(), want.DenseValues()) {
		t.Fatalf("a short buffer: %v, %v", x.DenseValues(), err)
	}
	buf := x.DenseValues()
	allocs := testing.AllocsPerRun(100, func() {
		x, err = m.EmbedInto(buf, ids)
	})
	if allocs != 0 || err != nil {
		t.Errorf("EmbedInto into a large enough buffer: %v allocations, %v", allocs, err)
	}
	if &x.DenseValues()[0] != &buf[0] || !slices.Equal(x.DenseValues(), want.DenseValues()) {
		t.Error("EmbedInto did not write the embedding into the buffer")
	}
	before := slices.Clone(buf)
	if _, err := m.EmbedInto(buf, []int{1, 2, 500}); err == nil || !slices.Equal(buf, before) {
		t.Errorf("a token out of range: %v, buffer changed %v", err, !slices.Equal(buf, before))
	}
	if _, err := m.EmbedInto(buf, nil); !errors.Is(err, cell.ErrEmptyInput) {
		t.Errorf("no tokens: %v", err)
	}
}

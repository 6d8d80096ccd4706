package export

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/whitebox-lstm/whitebox/cell"
	"github.com/whitebox-lstm/whitebox/model"
	"github.com/whitebox-lstm/whitebox/tensorfile"
	"github.com/whitebox-lstm/whitebox/whitebox"
)

func write(t *testing.T, net *whitebox.Net) string {
	t.Helper()
	sd, err := StateDict(net.Model)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), net.Name+".safetensors")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSafetensors(f, sd, Metadata(net)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRoundTrip: model.Load of the exported file gives the white-box
// network's logits to the bit on random inputs.
func TestRoundTrip(t *testing.T) {
	for _, name := range whitebox.Names() {
		for _, cfg := range []whitebox.Config{{}, {M: new(20.0)}} {
			if name == "bracket" {
				cfg.K = new(5)
			}
			net, err := whitebox.New(name, cfg)
			if err != nil {
				t.Fatal(err)
			}
			path := write(t, net)
			m, err := model.Load(path, model.Options{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if m.Vocab != len(net.Task.Alphabet) || m.Net.Classes() != len(net.Task.Classes) || m.Net.Hidden() != net.Model.Hidden() {
				t.Fatalf("%s: read back as V=%d C=%d H=%d", name, m.Vocab, m.Net.Classes(), m.Net.Hidden())
			}
			r, err := cell.NewRunner(m.Net)
			if err != nil {
				t.Fatal(err)
			}
			ws := mustRunner(t, net.Model)
			rng := whitebox.NewRand(uint64(len(name)))
			for range 200 {
				s, err := net.Task.Generate(rng, 1, 30)
				if err != nil {
					t.Fatal(err)
				}
				sym, _ := net.Task.Encode(s)
				want, err := ws.Forward(cell.OneHot(sym))
				if err != nil {
					t.Fatal(err)
				}
				x, err := m.Embed(sym)
				if err != nil {
					t.Fatal(err)
				}
				got, err := r.Forward(x)
				if err != nil {
					t.Fatal(err)
				}
				for k := range want {
					if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
						t.Fatalf("%s %+v %q: logit %d is %v exported, %v white-box", name, cfg, s, k, got[k], want[k])
					}
				}
			}
			r.Close()
		}
	}
}

func TestSafetensorsLayout(t *testing.T) {
	var b bytes.Buffer
	ts := []Tensor{{"z", []int{2}, []float64{1, -0.5}}, {"a", []int{1, 2}, []float64{math.SmallestNonzeroFloat64, math.MaxFloat64}}, {"s", []int{}, []float64{3}}}
	if err := WriteSafetensors(&b, ts, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	if n := b.Len(); (n-8)%8 != 0 {
		t.Errorf("header + data of %d bytes: not 8-aligned", n-8)
	}
	f, err := tensorfile.Read(bytes.NewReader(b.Bytes()), int64(b.Len()), "x.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata["k"] != "v" {
		t.Errorf("metadata %v", f.Metadata)
	}
	for _, want := range ts {
		got := f.Get(want.Name)
		if got == nil || got.DType != "F64" || len(got.Shape) != len(want.Shape) || len(got.Data) != len(want.Data) {
			t.Fatalf("%s: read back as %+v", want.Name, got)
		}
		for i := range want.Data {
			if math.Float64bits(got.Data[i]) != math.Float64bits(want.Data[i]) {
				t.Errorf("%s[%d] = %v, want %v", want.Name, i, got.Data[i], want.Data[i])
			}
		}
	}
	for _, bad := range [][]Tensor{
		{{"", []int{1}, []float64{1}}},
		{{"__metadata__", []int{1}, []float64{1}}},
		{{"a", []int{1}, []float64{1}}, {"a", []int{1}, []float64{1}}},
		{{"a", []int{2}, []float64{1}}},
		{{"a", []int{-1}, nil}},
	} {
		var b bytes.Buffer
		if err := WriteSafetensors(&b, bad, nil); err == nil || b.Len() != 0 {
			t.Errorf("%+v: error %v, %d bytes written", bad, err, b.Len())
		}
	}
	if _, err := StateDict(nil); err == nil {
		t.Error("StateDict(nil): no error")
	}
}

// TestPyTorchRoundTrip: the .pt file reads back through tensorfile (and
// model.Load) with the same tensors and logits.
func TestPyTorchRoundTrip(t *testing.T) {
	for _, name := range whitebox.Names() {
		net, err := whitebox.New(name, whitebox.Config{})
		if err != nil {
			t.Fatal(err)
		}
		sd, _ := StateDict(net.Model)
		var b bytes.Buffer
		if err := WritePyTorch(&b, sd); err != nil {
			t.Fatal(err)
		}
		f, err := tensorfile.Read(bytes.NewReader(b.Bytes()), int64(b.Len()), name+".pt")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, want := range sd {
			got := f.Get(want.Name)
			if got == nil || got.DType != "F64" || !slicesEqual(got.Shape, want.Shape) {
				t.Fatalf("%s %s: read back as %+v", name, want.Name, got)
			}
			for i := range want.Data {
				if math.Float64bits(got.Data[i]) != math.Float64bits(want.Data[i]) {
					t.Fatalf("%s %s[%d] = %v, want %v", name, want.Name, i, got.Data[i], want.Data[i])
				}
			}
		}
		if _, err := model.FromFile(f, model.Options{}); err != nil {
			t.Errorf("%s: model: %v", name, err)
		}
	}
	var b bytes.Buffer
	if err := WritePyTorch(&b, []Tensor{{"a", []int{2}, []float64{1}}}); err == nil || b.Len() != 0 {
		t.Errorf("bad shape: error %v, %d bytes", err, b.Len())
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

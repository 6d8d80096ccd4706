package tensorfile

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

type expectedFile struct {
	Format   string            `json:"format"`
	Metadata map[string]string `json:"metadata"`
	Tensors  map[string]struct {
		DType  string   `json:"dtype"`
		Shape  []int    `json:"shape"`
		Values []string `json:"values"`
	} `json:"tensors"`
}

func loadExpected(t testing.TB) map[string]expectedFile {
	t.Helper()
	b, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]expectedFile
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// sameFloat reports whether a and b are the same float64, NaN included.
func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}

// TestFixtures reads every fixture written by testdata/gen.py with torch
// and compares names, dtypes, shapes and values exactly.
func TestFixtures(t *testing.T) {
	exp := loadExpected(t)
	if len(exp) < 10 {
		t.Fatalf("expected.json has %d files", len(exp))
	}
	for fname, want := range exp {
		t.Run(fname, func(t *testing.T) {
			path := filepath.Join("testdata", fname)
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if f.Path != path || f.Format != want.Format {
				t.Errorf("Path %q Format %q, want %q %q", f.Path, f.Format, path, want.Format)
			}
			if !reflect.DeepEqual(f.Metadata, want.Metadata) {
				t.Errorf("Metadata %v, want %v", f.Metadata, want.Metadata)
			}
			var names []string
			for n := range want.Tensors {
				names = append(names, n)
			}
			sort.Strings(names)
			if len(f.Tensors) != len(names) {
				t.Fatalf("%d tensors, want %d (%v)", len(f.Tensors), len(names), names)
			}
			for i, name := range names {
				w := want.Tensors[name]
				got := f.Tensors[i]
				if got.Name != name {
					t.Fatalf("tensor %d is %q, want %q (sorted by name)", i, got.Name, name)
				}
				if f.Get(name) != got {
					t.Errorf("Get(%q) is not the tensor", name)
				}
				if got.DType != w.DType || !reflect.DeepEqual(got.Shape, w.Shape) || got.Shape == nil {
					t.Errorf("%s: %s %v, want %s %v", name, got.DType, got.Shape, w.DType, w.Shape)
				}
				if len(got.Data) != len(w.Values) {
					t.Fatalf("%s: %d values, want %d", name, len(got.Data), len(w.Values))
				}
				for j, s := range w.Values {
					v, err := strconv.ParseFloat(s, 64)
					if err != nil {
						t.Fatal(err)
					}
					if !sameFloat(got.Data[j], v) {
						t.Errorf("%s[%d] = %v, want %v", name, j, got.Data[j], v)
						break
					}
				}
			}
			if f.Get("no such tensor") != nil {
				t.Error("Get of an absent name is not nil")
			}
		})
	}
}

// TestFormatsAgree checks that the LSTM state_dict reads the same from the
// zip, legacy and safetensors files.
func TestFormatsAgree(t *testing.T) {
	read := func(name string) *File {
		f, err := Open(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b, c := read("lstm_f64.pt"), read("lstm_legacy.pt"), read("lstm_f64.safetensors")
	d := read("lstm_f32.pt")
	for i, ta := range a.Tensors {
		for _, o := range []*File{b, c} {
			if !reflect.DeepEqual(ta, o.Tensors[i]) {
				t.Errorf("%s differs between %s and %s", ta.Name, a.Format, o.Format)
			}
		}
		if td := d.Get(ta.Name); td == nil || td.DType != "F32" || len(td.Data) != len(ta.Data) {
			t.Errorf("%s: F32 file disagrees", ta.Name)
		}
	}
	for _, want := range []string{"embedding.weight", "lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0", "lstm.bias_hh_l0", "linear.weight", "linear.bias"} {
		if a.Get(want) == nil {
			t.Errorf("no %s", want)
		}
	}
	if w := a.Get("lstm.weight_ih_l0"); !reflect.DeepEqual(w.Shape, []int{16, 3}) {
		t.Errorf("lstm.weight_ih_l0 shape %v", w.Shape)
	}
}

func TestWholeModelRefused(t *testing.T) {
	_, err := Open("testdata/model.pt")
	if err == nil {
		t.Fatal("a whole pickled model was read")
	}
	msg := err.Error()
	for _, want := range []string{"tensorfile: testdata/model.pt: ", "__main__.Net", "state_dict()"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("error %v is not ErrUnsupported", err)
	}
	t.Log(msg)
}

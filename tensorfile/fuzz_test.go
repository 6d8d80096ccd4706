package tensorfile

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

// fuzzOptions keep a fuzzed file's legitimate allocations small.
var fuzzOptions = Options{MaxTotalBytes: 64 << 20, MaxTensorElements: 1 << 22, MaxHeaderBytes: 1 << 20}

func fuzzRead(t *testing.T, b []byte) {
	f, err := fuzzOptions.Read(bytes.NewReader(b), int64(len(b)), "fuzz")
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "tensorfile: fuzz: ") {
			t.Fatalf("error %v (%T) is not an *Error naming the file", err, err)
		}
		if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrLimit) {
			t.Fatalf("error %v has no kind", err)
		}
		if strings.Contains(err.Error(), "internal error") {
			t.Fatalf("a bug: %v", err)
		}
		return
	}
	checkConsistent(t, f)
}

func seed(f *testing.F, suffix string) {
	for _, path := range fixtureNames(f, suffix) {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzSafetensors reads arbitrary bytes, seeded with the safetensors
// fixtures: no panic, and a successful read is consistent.
func FuzzSafetensors(f *testing.F) {
	seed(f, ".safetensors")
	f.Add(safetensors(`{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"__metadata__":{"k":"v"}}`, []byte{0, 60, 0, 124}))
	for _, n := range awkwardHeaderLengths { // header lengths that start like a pickle
		f.Add(paddedSafetensors(f, n))
	}
	f.Fuzz(fuzzRead)
}

// FuzzPyTorch reads arbitrary bytes, seeded with the torch.save fixtures
// (zip and legacy) and handwritten pickles: no panic, and a successful read
// is consistent.
func FuzzPyTorch(f *testing.F) {
	seed(f, ".pt")
	f.Add(legacyFile(nil, 4, 16))
	f.Fuzz(fuzzRead)
}

// FuzzPickle runs arbitrary bytes as the data.pkl of a zip that also
// holds two storage records, which reaches the pickle machine far more
// often than mutating whole zip files; seeded with the fixtures' pickles.
func FuzzPickle(f *testing.F) {
	for _, path := range []string{"testdata/lstm_f32.pt", "testdata/views.pt", "testdata/checkpoint.pt", "testdata/model.pt"} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			f.Fatal(err)
		}
		for _, zf := range zr.File {
			if strings.HasSuffix(zf.Name, "/data.pkl") {
				rc, _ := zf.Open()
				p, _ := io.ReadAll(rc)
				f.Add(p)
			}
		}
	}
	f.Add(stateDict(ptEntry{name: "w", storage: "FloatStorage", key: "0", numel: 4, size: []int64{2, 2}, stride: []int64{1, 2}}))
	f.Fuzz(func(t *testing.T, pkl []byte) {
		var buf bytes.Buffer
		w := zip.NewWriter(&buf)
		for _, e := range []zipFile{{"archive/data.pkl", pkl}, {"archive/data/0", f32bytes(1, 2, 3, 4)}, {"archive/data/1", make([]byte, 64)}} {
			fw, err := w.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Store})
			if err != nil {
				t.Fatal(err)
			}
			fw.Write(e.data)
		}
		w.Close()
		fuzzRead(t, buf.Bytes())
	})
}

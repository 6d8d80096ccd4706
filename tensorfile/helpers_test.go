package tensorfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
)

// readBytes reads b as a file called name.
func readBytes(b []byte, name string) (*File, error) {
	return Read(bytes.NewReader(b), int64(len(b)), name)
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	runtime.GC()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// wantErr checks that err is an *Error of the kind, naming the file, whose
// message holds every fragment.
func wantErr(t *testing.T, err error, kind error, file string, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one with %q", fragments)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is a %T, not an *Error", err, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "tensorfile: "+file+": ") {
		t.Errorf("error %q does not start with the file's name %q", msg, file)
	}
	if kind != nil && !errors.Is(err, kind) {
		t.Errorf("error %q is not %v", msg, kind)
	}
	for _, f := range fragments {
		if !strings.Contains(msg, f) {
			t.Errorf("error %q lacks %q", msg, f)
		}
	}
}

// checkConsistent checks a successful read's invariants.
func checkConsistent(t testing.TB, f *File) {
	t.Helper()
	for i, tt := range f.Tensors {
		if i > 0 && f.Tensors[i-1].Name >= tt.Name {
			t.Fatalf("tensors not sorted by name or duplicated: %q, %q", f.Tensors[i-1].Name, tt.Name)
		}
		if dtypeByName(tt.DType) == dtInvalid {
			t.Fatalf("%q: dtype %q", tt.Name, tt.DType)
		}
		if tt.Shape == nil {
			t.Fatalf("%q: nil shape", tt.Name)
		}
		n := 1
		for _, d := range tt.Shape {
			if d < 0 {
				t.Fatalf("%q: shape %v", tt.Name, tt.Shape)
			}
			n *= d
		}
		if len(tt.Data) != n {
			t.Fatalf("%q: %d values for shape %v", tt.Name, len(tt.Data), tt.Shape)
		}
	}
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// safetensors builds a safetensors file from a header and a data buffer.
func safetensors(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, data...)
}

// pk writes pickles by hand.
type pk struct{ bytes.Buffer }

func (p *pk) op(b ...byte) *pk { p.Write(b); return p }
func (p *pk) global(mod, name string) *pk {
	p.WriteString("c" + mod + "\n" + name + "\n")
	return p
}
func (p *pk) str(s string) *pk {
	p.WriteByte('X')
	p.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(s))))
	p.WriteString(s)
	return p
}
func (p *pk) int(v int64) *pk {
	if v >= math.MinInt32 && v <= math.MaxInt32 {
		p.WriteByte('J')
		p.Write(binary.LittleEndian.AppendUint32(nil, uint32(int32(v))))
		return p
	}
	p.op(opLong1, 8)
	p.Write(binary.LittleEndian.AppendUint64(nil, uint64(v)))
	return p
}
func (p *pk) ints(vs ...int64) *pk {
	p.op(opMark)
	for _, v := range vs {
		p.int(v)
	}
	return p.op(opTuple)
}

// ptEntry is a tensor of a handwritten state_dict pickle.
type ptEntry struct {
	name, storage, key string
	numel, offset      int64
	size, stride       []int64
}

// stateDict writes the pickle torch.save writes for an OrderedDict of
// tensors.
func stateDict(entries ...ptEntry) []byte {
	var p pk
	p.op(opProto, 2).global("collections", "OrderedDict").op(opEmptyTuple, opReduce, opMark)
	for _, e := range entries {
		p.str(e.name).tensor(e)
	}
	p.op(opSetItems, opStop)
	return p.Bytes()
}

// tensor writes the pickle of a tensor, as torch.save does.
func (p *pk) tensor(e ptEntry) *pk {
	p.global("torch._utils", "_rebuild_tensor_v2").op(opMark)
	p.op(opMark).str("storage").global("torch", e.storage).str(e.key).str("cpu").int(e.numel).op(opTuple, opBinPersID)
	p.int(e.offset).ints(e.size...).ints(e.stride...).op(opNewFalse)
	return p.global("collections", "OrderedDict").op(opEmptyTuple, opReduce, opTuple, opReduce)
}

// zipFile is one entry of a handwritten zip.
type zipFile struct {
	name string
	data []byte
}

func makeZip(t testing.TB, files ...zipFile) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, f := range files {
		fw, err := w.CreateHeader(&zip.FileHeader{Name: f.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(f.data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func f32bytes(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

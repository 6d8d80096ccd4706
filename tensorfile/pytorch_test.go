package tensorfile

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"reflect"
	"strings"
	"testing"
)

// TestHugeStorageZip: a zip of a few hundred bytes whose pickle declares
// a storage of 2^40 elements is refused before anything is allocated.
func TestHugeStorageZip(t *testing.T) {
	pkl := stateDict(ptEntry{name: "lstm.weight_ih_l0", storage: "FloatStorage", key: "0", numel: 1 << 40, size: []int64{2, 2}, stride: []int64{2, 1}})
	b := makeZip(t, zipFile{"archive/data.pkl", pkl}, zipFile{"archive/data/0", make([]byte, 16)}, zipFile{"archive/version", []byte("3\n")})
	if len(b) > 1000 {
		t.Fatalf("the zip has %d bytes", len(b))
	}
	var err error
	n := allocated(func() { _, err = readBytes(b, "model.pt") })
	wantErr(t, err, ErrFormat, "model.pt", `tensor "lstm.weight_ih_l0"`, `storage "0" has 16 bytes`, "1099511627776 F32 elements")
	if n > 1<<20 {
		t.Errorf("allocated %d bytes", n)
	}
	t.Logf("%d-byte zip: %v (%d bytes allocated)", len(b), err, n)

	// The same with the record's header lying about its size: 2^42 bytes.
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	fw, _ := w.Create("archive/data.pkl")
	fw.Write(pkl)
	fw, _ = w.CreateRaw(&zip.FileHeader{Name: "archive/data/0", Method: zip.Store, CompressedSize64: 1 << 42, UncompressedSize64: 1 << 42})
	fw.Write(make([]byte, 16))
	w.Close()
	n = allocated(func() { _, err = readBytes(buf.Bytes(), "model.pt") })
	if err == nil || n > 1<<20 {
		t.Errorf("lying record: %v, %d bytes allocated", err, n)
	}
	t.Logf("lying record: %v (%d bytes allocated)", err, n)
}

func TestPyTorchBad(t *testing.T) {
	rec := zipFile{"archive/data/0", f32bytes(1, 2, 3, 4)}
	sd := func(e ...ptEntry) zipFile { return zipFile{"archive/data.pkl", stateDict(e...)} }
	vec := ptEntry{name: "w", storage: "FloatStorage", key: "0", numel: 4, size: []int64{4}, stride: []int64{1}}
	mod := func(f func(*ptEntry)) ptEntry { e := vec; f(&e); return e }
	global := func(mod, name string) zipFile {
		var p pk
		p.op(opProto, 2).global(mod, name).op(opEmptyTuple, opReduce, opStop)
		return zipFile{"archive/data.pkl", p.Bytes()}
	}
	raw := func(p *pk) zipFile { return zipFile{"archive/data.pkl", p.Bytes()} }
	cases := []struct {
		name  string
		files []zipFile
		kind  error
		frag  []string
	}{
		{"ok", []zipFile{sd(vec), rec}, nil, nil},
		{"view past storage", []zipFile{sd(mod(func(e *ptEntry) { e.offset = 2 })), rec}, ErrFormat, []string{`tensor "w"`, `storage "0" has 4 F32 elements (16 bytes), the tensor needs 6 (24 bytes`}},
		{"strides past storage", []zipFile{sd(mod(func(e *ptEntry) { e.size = []int64{2, 2}; e.stride = []int64{3, 1} })), rec}, ErrFormat, []string{`tensor "w"`, "needs 5"}},
		{"negative stride", []zipFile{sd(mod(func(e *ptEntry) { e.stride = []int64{-1} })), rec}, ErrUnsupported, []string{`tensor "w"`, "negative"}},
		{"negative offset", []zipFile{sd(mod(func(e *ptEntry) { e.offset = -1 })), rec}, ErrFormat, []string{`tensor "w"`, "negative"}},
		{"negative size", []zipFile{sd(mod(func(e *ptEntry) { e.size = []int64{-4} })), rec}, ErrFormat, []string{`tensor "w"`, "negative"}},
		{"stride overflow", []zipFile{sd(mod(func(e *ptEntry) { e.size = []int64{2, 2}; e.stride = []int64{1 << 62, 1 << 62} })), rec}, ErrFormat, []string{`tensor "w"`, "past any storage"}},
		{"size overflow", []zipFile{sd(mod(func(e *ptEntry) { e.size = []int64{1 << 40, 1 << 40}; e.stride = []int64{0, 0} })), rec}, ErrLimit, []string{`tensor "w"`, "MaxTensorElements"}},
		{"rank mismatch", []zipFile{sd(mod(func(e *ptEntry) { e.stride = []int64{1, 1} })), rec}, ErrFormat, []string{"size has 1 dimensions and its stride 2"}},
		{"record too small", []zipFile{sd(mod(func(e *ptEntry) { e.numel = 8; e.size = []int64{8} })), rec}, ErrFormat, []string{`tensor "w"`, `storage "0" has 16 bytes (archive/data/0), the pickle declares 8 F32 elements (32 bytes)`}},
		{"no record", []zipFile{sd(vec)}, ErrFormat, []string{`tensor "w"`, "no record archive/data/0"}},
		{"unknown storage", []zipFile{sd(mod(func(e *ptEntry) { e.storage = "ComplexFloatStorage" })), rec}, ErrUnsupported, []string{"torch.ComplexFloatStorage", "not supported"}},
		{"storage twice differently", []zipFile{sd(vec, mod(func(e *ptEntry) { e.name = "v"; e.storage = "IntStorage" })), rec}, ErrFormat, []string{`storage "0" is named twice`}},
		{"no data.pkl", []zipFile{rec}, ErrUnsupported, []string{"without <prefix>/data.pkl"}},
		{"two data.pkl", []zipFile{sd(vec), {"other/data.pkl", nil}, rec}, ErrFormat, []string{"two pickles"}},
		{"torchscript", []zipFile{sd(vec), rec, {"archive/constants.pkl", nil}, {"archive/code/m.py", nil}}, ErrUnsupported, []string{"TorchScript"}},
		{"bad byteorder", []zipFile{sd(vec), rec, {"archive/byteorder", []byte("middle")}}, ErrFormat, []string{`"middle"`}},
		{"os.system", []zipFile{global("os", "system"), rec}, ErrUnsupported, []string{"os.system", "never constructs arbitrary objects"}},
		{"builtins.eval", []zipFile{global("builtins", "eval")}, ErrUnsupported, []string{"builtins.eval"}},
		{"numpy", []zipFile{global("numpy.core.multiarray", "_reconstruct")}, ErrUnsupported, []string{"numpy.core.multiarray._reconstruct", "numpy"}},
		{"nn module", []zipFile{global("torch.nn.modules.linear", "Linear")}, ErrUnsupported, []string{"torch.nn.modules.linear.Linear", "whole pickled model"}},
		{"sparse", []zipFile{global("torch._utils", "_rebuild_sparse_tensor")}, ErrUnsupported, []string{"_rebuild_sparse_tensor", "not supported"}},
		{"stack global", []zipFile{raw(new(pk).op(opProto, 4).str("os").str("system").op(opStackGlobal, opStop))}, ErrUnsupported, []string{"os.system"}},
		{"single tensor", []zipFile{raw(new(pk).op(opProto, 2).tensor(vec).op(opStop)), rec}, ErrUnsupported, []string{"the file holds a single tensor"}},
		{"huge tensor", []zipFile{sd(mod(func(e *ptEntry) {
			e.numel = 1 << 40
			e.size = []int64{1 << 20, 1 << 20}
			e.stride = []int64{1 << 20, 1}
		})), rec}, ErrLimit, []string{`tensor "w"`, "MaxTensorElements"}},
		{"list root", []zipFile{raw(new(pk).op(opProto, 2, opEmptyList, opStop))}, ErrUnsupported, []string{"holds a list of 0, not a dict"}},
		{"pop empty", []zipFile{raw(new(pk).op(opProto, 2, opPop, opStop))}, ErrFormat, []string{"pops an empty stack"}},
		{"memo miss", []zipFile{raw(new(pk).op(opProto, 2, opBinGet, 7, opStop))}, ErrFormat, []string{"memo entry 7"}},
		{"unknown opcode", []zipFile{raw(new(pk).op(opProto, 2, 'i', opStop))}, ErrUnsupported, []string{"opcode 0x69"}},
		{"huge string", []zipFile{raw(new(pk).op(opProto, 4, opBinUnicode8, 0, 0, 0, 0, 0, 0, 0, 0x10, opStop))}, ErrFormat, []string{"a string of 1152921504606846976 bytes, but only 1 byte remain"}},
		{"no stop", []zipFile{raw(new(pk).op(opProto, 2, opEmptyDict))}, ErrFormat, []string{"ends before its STOP"}},
		{"after stop", []zipFile{raw(new(pk).op(opProto, 2, opEmptyDict, opStop, opStop))}, ErrFormat, []string{"1 byte after the pickle's STOP"}},
		{"many marks", []zipFile{raw(new(pk).op(bytes.Repeat([]byte{opMark}, 100000)...))}, ErrLimit, []string{"MARKs"}},
		{"empty view first", []zipFile{sd(mod(func(e *ptEntry) { e.name = "a"; e.size = []int64{0} }), mod(func(e *ptEntry) { e.name = "b" })), rec}, nil, nil},
		{"empty dict", []zipFile{raw(new(pk).op(opProto, 2, opEmptyDict, opStop))}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := readBytes(makeZip(t, c.files...), "model.pt")
			if c.frag == nil {
				if err != nil {
					t.Fatal(err)
				}
				checkConsistent(t, f)
				return
			}
			wantErr(t, err, c.kind, "model.pt", c.frag...)
		})
	}
}

// TestDeepAndShared: nested, cyclic and shared containers end in errors,
// fast.
func TestDeepAndShared(t *testing.T) {
	// A list nested 100000 deep under the key "x".
	var deep pk
	deep.op(opProto, 2, opEmptyDict).str("x")
	deep.op(bytes.Repeat([]byte{opEmptyList}, 100000)...)
	deep.op(bytes.Repeat([]byte{opAppend}, 99999)...)
	deep.op(opSetItem, opStop)
	// A list that holds itself.
	var cyc pk
	cyc.op(opProto, 2, opEmptyDict).str("x").op(opEmptyList, opBinPut, 0, opBinGet, 0, opAppend, opSetItem, opStop)
	// 30 levels of lists each holding the one below twice: 2^30 paths.
	var shared pk
	shared.op(opProto, 2, opEmptyDict).str("x").op(opEmptyList)
	for i := 0; i < 30; i++ {
		shared.op(opBinPut, 0, opPop, opEmptyList, opBinGet, 0, opAppend, opBinGet, 0, opAppend)
	}
	shared.op(opSetItem, opStop)
	for name, p := range map[string][]byte{"deep": deep.Bytes(), "cyclic": cyc.Bytes(), "shared": shared.Bytes()} {
		_, err := readBytes(makeZip(t, zipFile{"a/data.pkl", p}), "n.pt")
		wantErr(t, err, ErrLimit, "n.pt")
		t.Logf("%s: %v", name, err)
	}
}

// rewriteZip copies a zip, letting edit change each entry.
func rewriteZip(t *testing.T, b []byte, edit func(name string, data []byte) ([]byte, uint16)) []byte {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := zip.NewWriter(&out)
	for _, f := range zr.File {
		rc, _ := f.Open()
		data, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		data, method := edit(f.Name, data)
		fw, err := w.CreateHeader(&zip.FileHeader{Name: f.Name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	w.Close()
	return out.Bytes()
}

// TestBigEndianAndDeflate: a big-endian zip (byteorder "big") and a zip
// whose entries are deflated read the same as the original.
func TestBigEndianAndDeflate(t *testing.T) {
	orig := fixture(t, "lstm_f32.pt")
	want, err := readBytes(orig, "orig")
	if err != nil {
		t.Fatal(err)
	}
	prefix := ""
	big := rewriteZip(t, orig, func(name string, data []byte) ([]byte, uint16) {
		if strings.HasSuffix(name, "data.pkl") {
			prefix = strings.TrimSuffix(name, "data.pkl")
		}
		if strings.Contains(name, "/data/") {
			for i := 0; i+4 <= len(data); i += 4 {
				binary.BigEndian.PutUint32(data[i:], binary.LittleEndian.Uint32(data[i:]))
			}
		}
		return data, zip.Store
	})
	big = rewriteZip(t, big, func(name string, data []byte) ([]byte, uint16) { return data, zip.Store })
	// add the byteorder record
	zr, _ := zip.NewReader(bytes.NewReader(big), int64(len(big)))
	var out bytes.Buffer
	w := zip.NewWriter(&out)
	for _, f := range zr.File {
		w.Copy(f)
	}
	fw, _ := w.Create(prefix + "byteorder")
	fw.Write([]byte("big"))
	w.Close()
	got, err := readBytes(out.Bytes(), "big")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Tensors, want.Tensors) {
		t.Error("the big-endian file reads differently")
	}
	deflated := rewriteZip(t, orig, func(name string, data []byte) ([]byte, uint16) { return data, zip.Deflate })
	got, err = readBytes(deflated, "deflated")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Tensors, want.Tensors) {
		t.Error("the deflated file reads differently")
	}
}

// TestLyingDeflate: deflated entries whose headers lie about their size.
func TestLyingDeflate(t *testing.T) {
	bomb := make([]byte, 1<<20) // deflates to about 1 KB
	var comp bytes.Buffer
	fl, _ := flate.NewWriter(&comp, 9)
	fl.Write(bomb)
	fl.Close()
	for _, c := range []struct {
		name string
		size uint64
		frag string
	}{
		{"longer than declared", 16, "longer than its header declares"},
		{"declared beyond the deflate ratio", 1 << 31, "claims 2147483648 bytes"},
	} {
		// The pickle declares as many elements as the record claims.
		numel := int64(c.size / 4)
		pkl := stateDict(ptEntry{name: "w", storage: "FloatStorage", key: "0", numel: numel, size: []int64{min(numel, 1<<20)}, stride: []int64{1}})
		var buf bytes.Buffer
		w := zip.NewWriter(&buf)
		fw, _ := w.Create("archive/data.pkl")
		fw.Write(pkl)
		fw, _ = w.CreateRaw(&zip.FileHeader{Name: "archive/data/0", Method: zip.Deflate, CompressedSize64: uint64(comp.Len()), UncompressedSize64: c.size, CRC32: crc32.ChecksumIEEE(bomb[:min(int(c.size), len(bomb))])})
		fw.Write(comp.Bytes())
		w.Close()
		b := buf.Bytes()
		var err error
		n := allocated(func() { _, err = readBytes(b, "z.pt") })
		wantErr(t, err, ErrFormat, "z.pt", c.frag)
		if n > 4<<20 {
			t.Errorf("%s: allocated %d bytes", c.name, n)
		}
	}
}

func TestCheckpointFlattening(t *testing.T) {
	f, err := Open("testdata/checkpoint.pt")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tt := range f.Tensors {
		names = append(names, tt.Name)
	}
	if want := []string{"history.1", "model.linear.bias", "model.linear.weight"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
}

// TestExpandedBlowUp: a tiny storage expanded with stride 0 into a huge
// tensor is refused before its Data is allocated.
func TestExpandedBlowUp(t *testing.T) {
	pkl := stateDict(ptEntry{name: "w", storage: "FloatStorage", key: "0", numel: 1, size: []int64{1 << 14, 1 << 14}, stride: []int64{0, 0}})
	b := makeZip(t, zipFile{"archive/data.pkl", pkl}, zipFile{"archive/data/0", f32bytes(1)})
	var err error
	n := allocated(func() { _, err = readBytes(b, "e.pt") })
	wantErr(t, err, ErrLimit, "e.pt", `tensor "w"`, "stride 0")
	if n > 1<<20 {
		t.Errorf("allocated %d bytes", n)
	}
	// A modest expansion reads.
	pkl = stateDict(ptEntry{name: "w", storage: "FloatStorage", key: "0", numel: 2, size: []int64{3, 2}, stride: []int64{0, 1}})
	f, err := readBytes(makeZip(t, zipFile{"archive/data.pkl", pkl}, zipFile{"archive/data/0", f32bytes(1, 2)}), "e.pt")
	if err != nil || !reflect.DeepEqual(f.Get("w").Data, []float64{1, 2, 1, 2, 1, 2}) {
		t.Fatalf("%v %+v", err, f)
	}
}

func TestPyTorchLimits(t *testing.T) {
	for _, name := range []string{"lstm_f32.pt", "lstm_legacy.pt"} {
		b := fixture(t, name)
		_, err := Options{MaxHeaderBytes: 100}.Read(bytes.NewReader(b), int64(len(b)), name)
		wantErr(t, err, ErrLimit, name)
		_, err = Options{MaxTotalBytes: 1000}.Read(bytes.NewReader(b), int64(len(b)), name)
		wantErr(t, err, ErrLimit, name, "MaxTotalBytes")
		_, err = Options{MaxTensorElements: 20}.Read(bytes.NewReader(b), int64(len(b)), name)
		wantErr(t, err, ErrLimit, name, "MaxTensorElements")
	}
}

func TestLegacyPickleLimit(t *testing.T) {
	b := fixture(t, "lstm_legacy.pt")
	_, err := Options{MaxHeaderBytes: 400}.Read(bytes.NewReader(b), int64(len(b)), "l.pt")
	wantErr(t, err, ErrLimit, "l.pt", "the object's pickle", "longer than 400 bytes (MaxHeaderBytes)")
}

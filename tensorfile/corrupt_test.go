package tensorfile

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixtureNames(t testing.TB, suffix string) []string {
	t.Helper()
	names, err := filepath.Glob("testdata/*" + suffix)
	if err != nil || len(names) == 0 {
		t.Fatalf("no fixtures *%s: %v", suffix, err)
	}
	return names
}

// TestTruncated reads every proper prefix of every fixture: each must be
// an error naming the file, never a panic or a partial result.
func TestTruncated(t *testing.T) {
	for _, path := range append(fixtureNames(t, ".pt"), fixtureNames(t, ".safetensors")...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		step := 1
		if testing.Short() {
			step = 7
		}
		for n := 0; n < len(b); n += step {
			f, err := readBytes(b[:n], "cut")
			if err == nil {
				t.Fatalf("%s cut to %d of %d bytes: read %d tensors without error", path, n, len(b), len(f.Tensors))
			}
			if !strings.HasPrefix(err.Error(), "tensorfile: cut: ") {
				t.Fatalf("%s cut to %d: error %q", path, n, err)
			}
		}
	}
}

// TestBitFlips flips every byte of the smaller fixtures: each read must
// end in an error or in a consistent result, never a panic.
func TestBitFlips(t *testing.T) {
	for _, path := range []string{"testdata/lstm_legacy.pt", "testdata/views.pt", "testdata/special.safetensors", "testdata/views_legacy.pt"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c := make([]byte, len(b))
		for i := range b {
			for _, x := range []byte{0x01, 0xff} {
				copy(c, b)
				c[i] ^= x
				if f, err := readBytes(c, "flip"); err == nil {
					checkConsistent(t, f)
				}
			}
		}
	}
}

// TestLegacyBad: lying storage counts and trailing bytes in the legacy
// format.
func TestLegacyBad(t *testing.T) {
	b := fixture(t, "lstm_legacy.pt")
	f, err := readBytes(b, "l.pt")
	if err != nil {
		t.Fatal(err)
	}
	// Find the last storage's count: a little-endian count equal to the
	// element count of a tensor (F64), followed by its bytes.
	at := -1
	for _, tt := range f.Tensors {
		needle := binary.LittleEndian.AppendUint64(nil, uint64(len(tt.Data)))
		if i := bytes.LastIndex(b, needle); i > 0 && i+8+8*len(tt.Data) == len(b) {
			at = i
		}
	}
	if at < 0 {
		t.Fatal("no storage count found at the end")
	}
	for _, c := range []struct {
		count uint64
		frag  string
	}{
		{1 << 60, "the file says 1152921504606846976 elements"},
		{0, "the file says 0 elements"},
	} {
		m := bytes.Clone(b)
		binary.LittleEndian.PutUint64(m[at:], c.count)
		var err error
		n := allocated(func() { _, err = readBytes(m, "l.pt") })
		wantErr(t, err, ErrFormat, "l.pt", c.frag)
		if n > 1<<20 {
			t.Errorf("allocated %d bytes", n)
		}
	}
	_, err = readBytes(append(bytes.Clone(b), 0), "l.pt")
	wantErr(t, err, ErrFormat, "l.pt", "1 byte after the last storage")

	// A legacy pickle that declares a storage of 2^40 elements.
	_, err = readBytes(legacyFile(t, 1<<40, 16), "h.pt")
	wantErr(t, err, ErrFormat, "h.pt", "the file says 4 elements, the pickle 1099511627776")
}

// legacyFile writes a legacy torch.save file by hand: one F32 tensor "w"
// of 4 elements whose pickle declares numel elements; the file's count
// says 4 and holds nbytes bytes.
func legacyFile(t testing.TB, numel int64, nbytes int) []byte {
	var p pk
	p.op(opProto, 2).op(torchMagic...).op(opStop)
	p.op(opProto, 2).int(1001).op(opStop)
	p.op(opProto, 2, opEmptyDict).str("little_endian").op(opNewTrue, opSetItem, opStop)
	p.op(opProto, 2, opEmptyDict).str("w").tensor(ptEntry{storage: "FloatStorage", key: "0", numel: numel, size: []int64{4}, stride: []int64{1}}).op(opSetItem, opStop)
	p.op(opProto, 2, opMark).str("0").op(opList, opStop)
	p.Write(binary.LittleEndian.AppendUint64(nil, 4))
	p.Write(make([]byte, nbytes))
	return p.Bytes()
}

func TestLegacyHandwritten(t *testing.T) {
	f, err := readBytes(legacyFile(t, 4, 16), "ok.pt")
	if err != nil {
		t.Fatal(err)
	}
	if f.Format != "pytorch-legacy" || len(f.Tensors) != 1 || len(f.Get("w").Data) != 4 {
		t.Fatalf("%+v", f)
	}
	_, err = readBytes(legacyFile(t, 4, 12), "short.pt")
	wantErr(t, err, ErrFormat, "short.pt", `storage "0": 4 F32 elements need 16 bytes, but the file has 12 bytes left`)
}

func TestNotAModelFile(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		kind error
		frag string
	}{
		{nil, ErrFormat, "the file has 0 bytes"},
		{[]byte("\x80\x02}q\x00."), ErrUnsupported, "not one written by torch.save"},
		{append(make([]byte, 257), "ustar\x00"...), ErrUnsupported, "tar archive"},
		{[]byte("PK\x03\x04garbage"), ErrFormat, "corrupt one"},
	} {
		_, err := readBytes(c.b, "n")
		wantErr(t, err, c.kind, "n", c.frag)
	}
	_, err := Open("testdata/no-such-file")
	wantErr(t, err, ErrFormat, "testdata/no-such-file", "opening the file")
	_, err = Open("testdata")
	wantErr(t, err, ErrFormat, "testdata", "not a regular file")
}

package tensorfile

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// paddedSafetensors is a valid safetensors file of one F32 tensor whose
// header is exactly n bytes (the JSON padded with spaces, as writers do).
func paddedSafetensors(t testing.TB, n int) []byte {
	hdr := `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"__metadata__":{"k":"v"}}`
	if n < len(hdr) {
		t.Fatalf("header of %d bytes is shorter than %d", n, len(hdr))
	}
	return safetensors(hdr+strings.Repeat(" ", n-len(hdr)), []byte{0, 0, 128, 63, 0, 0, 0, 64})
}

// The header lengths whose low byte is a pickle's PROTO opcode 0x80
// (one file in 256), or whose bytes look like other formats' magic.
var awkwardHeaderLengths = []int{0x80, 0x180, 0x280, 0x380, 0x480, 0x580, 0x8000, 0x8080, 0x4b50}

func TestSafetensorsAnyHeaderLength(t *testing.T) {
	for _, n := range awkwardHeaderLengths {
		t.Run(fmt.Sprintf("%#x", n), func(t *testing.T) {
			f, err := readBytes(paddedSafetensors(t, n), "x.safetensors")
			if err != nil {
				t.Fatal(err)
			}
			w := f.Get("w")
			if f.Format != "safetensors" || w == nil || w.Data[0] != 1 || w.Data[1] != 2 || f.Metadata["k"] != "v" {
				t.Fatalf("%+v", f)
			}
		})
	}
}

// A damaged safetensors file whose length starts like a pickle is still
// reported as a safetensors file, not as a pickle.
func TestSafetensorsPickleLikeDamaged(t *testing.T) {
	b := paddedSafetensors(t, 0x380)
	b = b[:len(b)-1] // the data is one byte short
	_, err := readBytes(b, "x")
	wantErr(t, err, ErrFormat, "x", "past the end of the data buffer")
	if strings.Contains(err.Error(), "pickle") {
		t.Fatalf("taken for a pickle: %v", err)
	}
}

// A torch file is never taken for safetensors, and the reverse.
func TestDetectTorchNotSafetensors(t *testing.T) {
	for _, path := range fixtureNames(t, ".pt") {
		b := readFixture(t, path)
		if detect(b[:min(512, len(b))], int64(len(b))) == formatSafetensors {
			t.Errorf("%s taken for safetensors", path)
		}
	}
	for _, path := range fixtureNames(t, ".safetensors") {
		b := readFixture(t, path)
		if got := detect(b[:min(512, len(b))], int64(len(b))); got != formatSafetensors {
			t.Errorf("%s detected as %d", path, got)
		}
	}
}

func TestNotAModelFileSaysWhatItIs(t *testing.T) {
	for _, c := range []struct {
		b    string
		frag string
	}{
		{"", "it is empty"},
		{"the\nof\nand\n", "it looks like text"},
		{"a", "it looks like text"},
		{"  [1, 2, 3]\n", "it looks like JSON"},
		{`{"ids": [1, 2, 3], "logits": [0.5, 0.25]}` + "\n", "it looks like JSON"},
		{"<!DOCTYPE html><html>", "it looks like HTML"},
		{"\x1f\x8b\x08\x00\x3c\x9a\x5e\x65\x00\x03", "gzip"},
		{"\x01\x02\x03\xff\xfe\xfd\xfc\xfb\xfa", "9 bytes of binary data"},
		{"héllo wörld, ünïcode text", "it looks like text"},
	} {
		_, err := readBytes([]byte(c.b), "vocab.txt")
		wantErr(t, err, ErrFormat, "vocab.txt", "not a model file: neither safetensors, a PyTorch zip nor a pickle", c.frag)
	}
}

func readFixture(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

package tensorfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestSafetensorsBad(t *testing.T) {
	data16 := make([]byte, 16)
	cases := []struct {
		name   string
		file   []byte
		kind   error
		frag   []string
		tensor string
	}{
		{"short", []byte{1, 2, 3}, ErrFormat, []string{"not a model file", "3 bytes of binary data"}, ""},
		{"header past end", binary.LittleEndian.AppendUint64(nil, 10<<30), ErrFormat, []string{"header length 10737418240 is past the end"}, ""},
		{"not json", safetensors("hello", nil), ErrFormat, []string{"does not start with '{'"}, ""},
		{"bad json", safetensors(`{"a":}`, nil), ErrFormat, []string{"not valid JSON"}, ""},
		{"truncated json", safetensors(`{"a":{"dtype":"F32"`, nil), ErrFormat, []string{"not valid JSON"}, ""},
		{"trailing json", safetensors(`{} {}`, nil), ErrFormat, []string{"after its JSON object"}, ""},
		{"invalid utf8", safetensors("{\"\xff\":1}", nil), ErrFormat, []string{"UTF-8"}, ""},
		{"entry not object", safetensors(`{"a":[1]}`, nil), ErrFormat, []string{`tensor "a"`, "must be an object"}, "a"},
		{"unknown dtype", safetensors(`{"a":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}}`, data16[:2]), ErrUnsupported, []string{`tensor "a"`, `unknown or unsupported dtype "F8_E4M3"`}, "a"},
		{"dtype not string", safetensors(`{"a":{"dtype":4,"shape":[2],"data_offsets":[0,2]}}`, data16[:2]), ErrFormat, []string{"dtype must be a string"}, "a"},
		{"duplicate tensor", safetensors(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, data16[:8]), ErrFormat, []string{`tensor "a"`, "twice"}, "a"},
		{"duplicate field", safetensors(`{"a":{"dtype":"F32","dtype":"F64","shape":[1],"data_offsets":[0,4]}}`, data16[:4]), ErrFormat, []string{"dtype twice"}, "a"},
		{"duplicate metadata", safetensors(`{"__metadata__":{},"__metadata__":{}}`, nil), ErrFormat, []string{"__metadata__ twice"}, ""},
		{"duplicate metadata key", safetensors(`{"__metadata__":{"k":"a","k":"b"}}`, nil), ErrFormat, []string{`"k" twice`}, ""},
		{"metadata not string", safetensors(`{"__metadata__":{"k":1}}`, nil), ErrFormat, []string{`__metadata__ value "k"`}, ""},
		{"negative shape", safetensors(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, nil), ErrFormat, []string{"shape holds -1"}, "a"},
		{"float shape", safetensors(`{"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,6]}}`, data16[:6]), ErrFormat, []string{"shape holds 1.5"}, "a"},
		{"huge shape", safetensors(`{"a":{"dtype":"F32","shape":[4611686018427387904,4611686018427387904],"data_offsets":[0,0]}}`, nil), ErrLimit, []string{"MaxTensorElements"}, "a"},
		{"missing offsets", safetensors(`{"a":{"dtype":"F32","shape":[1]}}`, data16[:4]), ErrFormat, []string{"no data_offsets"}, "a"},
		{"three offsets", safetensors(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, data16[:8]), ErrFormat, []string{"exactly two"}, "a"},
		{"offsets disagree", safetensors(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, data16[:4]), ErrFormat, []string{"span 4 bytes", "need 8"}, "a"},
		{"reversed offsets", safetensors(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}}`, data16[:4]), ErrFormat, []string{"end before they begin"}, "a"},
		{"past buffer", safetensors(`{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, data16[:8]), ErrFormat, []string{"past the end of the data buffer (8 bytes)"}, "a"},
		{"huge past buffer", safetensors(`{"a":{"dtype":"F32","shape":[268435456],"data_offsets":[0,1073741824]}}`, data16[:8]), ErrFormat, []string{"past the end"}, "a"},
		{"overlap", safetensors(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, data16[:12]), ErrFormat, []string{`tensor "b"`, `overlap tensor "a"`}, "b"},
		{"hole", safetensors(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, data16[:12]), ErrFormat, []string{`tensor "b"`, "bytes [4, 8)", "hole"}, "b"},
		{"leading hole", safetensors(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, data16[:8]), ErrFormat, []string{"hole"}, "a"},
		{"trailing bytes", safetensors(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, data16[:8]), ErrFormat, []string{"4 bytes after the last tensor"}, ""},
		{"bool 2", safetensors(`{"a":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}}`, []byte{1, 2}), ErrFormat, []string{"element 1", "BOOL element byte 2"}, "a"},
		{"i64 beyond 2^53", safetensors(`{"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}`, binary.LittleEndian.AppendUint64(nil, 1<<53+1)), ErrFormat, []string{"9007199254740993", "no exact float64"}, "a"},
		{"u64 beyond 2^53", safetensors(`{"a":{"dtype":"U64","shape":[1],"data_offsets":[0,8]}}`, binary.LittleEndian.AppendUint64(nil, math.MaxUint64)), ErrFormat, []string{"18446744073709551615"}, "a"},
		{"deep unknown field", safetensors(`{"a":{"x":`+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+`,"dtype":"F32","shape":[],"data_offsets":[0,4]}}`, data16[:4]), nil, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := readBytes(c.file, "x.safetensors")
			if c.frag == nil {
				if err != nil {
					t.Fatal(err)
				}
				checkConsistent(t, f)
				return
			}
			wantErr(t, err, c.kind, "x.safetensors", c.frag...)
			if err.(*Error).Tensor != c.tensor {
				t.Errorf("Error.Tensor %q, want %q", err.(*Error).Tensor, c.tensor)
			}
		})
	}
}

// TestSafetensorsHugeClaims checks that huge claimed sizes are refused
// without allocating from them.
func TestSafetensorsHugeClaims(t *testing.T) {
	files := map[string][]byte{
		"10 GB header":   append(binary.LittleEndian.AppendUint64(nil, 10e9), `{"a":1}`...),
		"2^63 header":    binary.LittleEndian.AppendUint64(nil, 1<<63),
		"huge tensor":    safetensors(`{"a":{"dtype":"F64","shape":[1099511627776],"data_offsets":[0,8796093022208]}}`, nil),
		"over the limit": safetensors(`{"a":{"dtype":"U8","shape":[1000000000],"data_offsets":[0,1000000000]}}`, nil),
	}
	for name, b := range files {
		var err error
		n := allocated(func() { _, err = readBytes(b, "x") })
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		if n > 1<<20 {
			t.Errorf("%s: allocated %d bytes", name, n)
		}
		t.Logf("%s: %v (%d bytes allocated)", name, err, n)
	}
}

func TestSafetensorsLimits(t *testing.T) {
	b := fixture(t, "lstm_f32.safetensors")
	_, err := Options{MaxTotalBytes: 1000}.Read(bytes.NewReader(b), int64(len(b)), "m")
	wantErr(t, err, ErrLimit, "m", "MaxTotalBytes")
	_, err = Options{MaxTensorElements: 10}.Read(bytes.NewReader(b), int64(len(b)), "m")
	wantErr(t, err, ErrLimit, "m", "MaxTensorElements")
	_, err = Options{MaxHeaderBytes: 100}.Read(bytes.NewReader(b), int64(len(b)), "m")
	wantErr(t, err, ErrLimit, "m", "exceeds the limit of 100 bytes")
}

// TestSafetensorsEmpty: a file with no tensors is valid.
func TestSafetensorsEmpty(t *testing.T) {
	f, err := readBytes(safetensors(`{"__metadata__":{"a":"b"}}  `, nil), "e")
	if err != nil || len(f.Tensors) != 0 || f.Metadata["a"] != "b" || f.Format != "safetensors" {
		t.Fatalf("%v %+v", err, f)
	}
	f, err = readBytes(safetensors(`{"z":{"dtype":"F32","shape":[0,5],"data_offsets":[0,0]}}`, nil), "e")
	if err != nil || len(f.Tensors) != 1 || len(f.Tensors[0].Data) != 0 || f.Metadata != nil {
		t.Fatalf("%v %+v", err, f)
	}
}

func TestHalfConversions(t *testing.T) {
	for _, c := range []struct {
		h    uint16
		want uint64 // float64 bits
	}{
		{0x0000, 0},
		{0x8000, 1 << 63},
		{0x0001, math.Float64bits(math.Ldexp(1, -24))},
		{0x03ff, math.Float64bits(1023 * math.Ldexp(1, -24))},
		{0x0400, math.Float64bits(math.Ldexp(1, -14))},
		{0x3c00, math.Float64bits(1)},
		{0xc000, math.Float64bits(-2)},
		{0x7bff, math.Float64bits(65504)},
		{0x7c00, math.Float64bits(math.Inf(1))},
		{0xfc00, math.Float64bits(math.Inf(-1))},
		{0x7e00, 0x7ff8000000000000},         // quiet NaN
		{0x7c01, 0x7ff0000000000000 | 1<<42}, // signalling NaN, payload kept
		{0xfe01, 0xfff8000000000000 | 1<<42}, // negative NaN with payload
	} {
		if got := math.Float64bits(f16to64(c.h)); got != c.want {
			t.Errorf("f16 %#04x: %#016x, want %#016x", c.h, got, c.want)
		}
	}
	for _, c := range []struct {
		b    uint32
		want uint64
	}{
		{0x00000001, math.Float64bits(math.Ldexp(1, -149))},
		{0x80000000, 1 << 63},
		{0x7f800000, math.Float64bits(math.Inf(1))},
		{0x7f800001, 0x7ff0000000000000 | 1<<29},
		{0xffc00000, 0xfff8000000000000},
		{0x3f800000, math.Float64bits(1)},
	} {
		if got := math.Float64bits(f32to64(c.b)); got != c.want {
			t.Errorf("f32 %#08x: %#016x, want %#016x", c.b, got, c.want)
		}
	}
	// Every finite half agrees with the float32 path.
	for h := 0; h < 1<<16; h++ {
		v := f16to64(uint16(h))
		if math.IsNaN(v) {
			continue
		}
		exp := (h >> 10) & 0x1f
		mant := h & 0x3ff
		var want float64
		if exp == 0 {
			want = float64(mant) * math.Ldexp(1, -24)
		} else if exp == 31 {
			want = math.Inf(1)
		} else {
			want = (1 + float64(mant)/1024) * math.Ldexp(1, exp-15)
		}
		if h&0x8000 != 0 {
			want = -want
		}
		if v != want || math.Signbit(v) != math.Signbit(want) {
			t.Fatalf("f16 %#04x: %v, want %v", h, v, want)
		}
	}
}

// TestSafetensorsChunks reads a tensor larger than one read chunk.
func TestSafetensorsChunks(t *testing.T) {
	const n = 300000 // 1.2 MB of F32, more than one 1 MiB chunk
	data := make([]byte, 0, 4*n)
	for i := 0; i < n; i++ {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(i)))
	}
	f, err := readBytes(safetensors(fmt.Sprintf(`{"big":{"dtype":"F32","shape":[%d],"data_offsets":[0,%d]}}`, n, 4*n), data), "big")
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range f.Tensors[0].Data {
		if v != float64(i) {
			t.Fatalf("[%d] = %v", i, v)
		}
	}
}

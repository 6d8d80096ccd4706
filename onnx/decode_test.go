package onnx

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// tensorProto writes a TensorProto with the given dims, data type and
// raw_data.
func tensorProto(dims []int64, dtype int32, raw []byte, extra ...func([]byte) []byte) []byte {
	var b []byte
	for _, d := range dims {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(d))
	}
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(dtype))
	b = protowire.AppendTag(b, 8, protowire.BytesType)
	b = protowire.AppendString(b, "w")
	if raw != nil {
		b = protowire.AppendTag(b, 9, protowire.BytesType)
		b = protowire.AppendBytes(b, raw)
	}
	for _, f := range extra {
		b = f(b)
	}
	return b
}

// modelWith wraps one initializer in a graph in a model.
func modelWith(tensor []byte) []byte {
	var g []byte
	g = protowire.AppendTag(g, 5, protowire.BytesType)
	g = protowire.AppendBytes(g, tensor)
	var m []byte
	m = protowire.AppendTag(m, 1, protowire.VarintType)
	m = protowire.AppendVarint(m, 8)
	m = protowire.AppendTag(m, 7, protowire.BytesType)
	return protowire.AppendBytes(m, g)
}

// Sizes in a file are checked against its bytes before anything is
// allocated; what cannot be read exactly is an error naming the tensor.
func TestDecodeHostile(t *testing.T) {
	for _, c := range []struct {
		name   string
		tensor []byte
		want   string
	}{
		{"huge dims", tensorProto([]int64{1 << 40, 1 << 40}, TypeFloat, make([]byte, 8)), "more than 536870912 elements"},
		{"dims beyond the data", tensorProto([]int64{1 << 20}, TypeFloat, make([]byte, 8)), "raw_data of 8 bytes for 1048576 float32 values"},
		{"negative dim", tensorProto([]int64{-1}, TypeFloat, nil), "negative dimension"},
		{"no data", tensorProto([]int64{3}, TypeFloat, nil), "no values for shape [3]"},
		{"string tensor", tensorProto([]int64{1}, 8, nil, func(b []byte) []byte {
			b = protowire.AppendTag(b, 6, protowire.BytesType)
			return protowire.AppendString(b, "x")
		}), "a string tensor"},
		{"external data", tensorProto([]int64{2}, TypeFloat, nil, func(b []byte) []byte {
			b = protowire.AppendTag(b, 14, protowire.VarintType)
			return protowire.AppendVarint(b, 1)
		}), "external data"},
		{"unknown type", tensorProto([]int64{1}, 99, []byte{0}), "data type 99: not supported"},
		{"typed and raw", tensorProto([]int64{1}, TypeFloat, make([]byte, 4), func(b []byte) []byte {
			b = protowire.AppendTag(b, 4, protowire.Fixed32Type)
			return protowire.AppendFixed32(b, 0)
		}), "raw_data and in a typed field"},
		{"too many floats", tensorProto([]int64{1}, TypeFloat, nil, func(b []byte) []byte {
			b = protowire.AppendTag(b, 4, protowire.BytesType)
			return protowire.AppendBytes(b, make([]byte, 8))
		}), "2 values for shape [1]"},
	} {
		_, err := Decode(modelWith(c.tensor))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `graph.initializer[0] ("w")`) {
			t.Errorf("%s: %v; want an error naming the tensor and %q", c.name, err, c.want)
		}
	}
	// A length beyond the file.
	b := modelWith(tensorProto([]int64{2}, TypeFloat, make([]byte, 8)))
	if _, err := Decode(b[:len(b)-3]); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated: %v", err)
	}
	if _, err := Decode(nil); err == nil || !strings.Contains(err.Error(), "no graph") {
		t.Errorf("empty: %v", err)
	}
}

// Values decode exactly: float16, bfloat16 and the integer types from
// raw_data; float_data and int64_data packed.
func TestDecodeValues(t *testing.T) {
	m, err := Decode(modelWith(tensorProto([]int64{3}, TypeFloat16, []byte{0x00, 0x3c, 0x01, 0x00, 0x00, 0xfc})))
	if err != nil {
		t.Fatal(err)
	}
	if f := m.Graph.Initializers[0].F; f[0] != 1 || f[1] != 0x1p-24 || f[2] > -1e308 {
		t.Errorf("float16: %v", f)
	}
	m, err = Decode(modelWith(tensorProto([]int64{2}, TypeInt32, []byte{0xff, 0xff, 0xff, 0xff, 7, 0, 0, 0})))
	if err != nil || m.Graph.Initializers[0].I[0] != -1 || m.Graph.Initializers[0].I[1] != 7 {
		t.Errorf("int32: %v %v", err, m)
	}
	packed := tensorProto([]int64{2}, TypeInt64, nil, func(b []byte) []byte {
		b = protowire.AppendTag(b, 7, protowire.BytesType)
		return protowire.AppendBytes(b, protowire.AppendVarint(protowire.AppendVarint(nil, 5), uint64(1<<64-3)))
	})
	m, err = Decode(modelWith(packed))
	if err != nil || m.Graph.Initializers[0].I[0] != 5 || m.Graph.Initializers[0].I[1] != -3 {
		t.Errorf("int64_data: %v %v", err, m)
	}
}

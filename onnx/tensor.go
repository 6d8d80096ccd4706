package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// TensorProto's data types this package reads.
const (
	TypeFloat    = 1
	TypeUint8    = 2
	TypeInt8     = 3
	TypeUint16   = 4
	TypeInt16    = 5
	TypeInt32    = 6
	TypeInt64    = 7
	TypeBool     = 9
	TypeFloat16  = 10
	TypeDouble   = 11
	TypeBfloat16 = 16
)

// dtypes: the byte size of each type in raw_data, and whether it is a
// floating-point type (values in F) or an integer one (values in I).
var dtypes = map[int32]struct {
	name  string
	size  int
	float bool
}{
	TypeFloat: {"float32", 4, true}, TypeDouble: {"float64", 8, true},
	TypeFloat16: {"float16", 2, true}, TypeBfloat16: {"bfloat16", 2, true},
	TypeUint8: {"uint8", 1, false}, TypeInt8: {"int8", 1, false}, TypeUint16: {"uint16", 2, false},
	TypeInt16: {"int16", 2, false}, TypeInt32: {"int32", 4, false}, TypeInt64: {"int64", 8, false},
	TypeBool: {"bool", 1, false},
}

// TypeName names an ONNX data type.
func TypeName(t int32) string {
	if d, ok := dtypes[t]; ok {
		return d.name
	}
	return fmt.Sprintf("data type %d", t)
}

// Tensor is a tensor's values: F for a floating-point type (converted
// exactly to float64), I for an integer or boolean one. Shape [] is a
// scalar (one value).
type Tensor struct {
	Name     string
	DataType int32
	Shape    []int
	F        []float64
	I        []int64
}

// IsFloat reports whether the tensor holds floating-point values.
func (t *Tensor) IsFloat() bool { return dtypes[t.DataType].float }

// Len returns the number of elements.
func (t *Tensor) Len() int {
	if t.IsFloat() {
		return len(t.F)
	}
	return len(t.I)
}

// elements returns the product of dims, or an error for a negative
// dimension, an overflow or more than MaxElements.
func elements(dims []int64) (int, error) {
	if len(dims) > maxRank {
		return 0, fmt.Errorf("%d dimensions (at most %d)", len(dims), maxRank)
	}
	n := uint64(1)
	for _, v := range dims {
		if v < 0 {
			return 0, fmt.Errorf("negative dimension in %v", dims)
		}
		hi, lo := bits.Mul64(n, uint64(v))
		if hi != 0 || lo > MaxElements {
			return 0, fmt.Errorf("shape %v has more than %d elements", dims, MaxElements)
		}
		n = lo
	}
	return int(n), nil
}

// decodeTensor reads a TensorProto and converts its values, checking their
// number against the shape before allocating.
func decodeTensor(b []byte, where string) (*Tensor, error) {
	d := &decoder{b: b, where: where}
	t := &Tensor{}
	var (
		dims         []int64
		raw          []byte
		hasRaw       bool
		floats       []float32
		doubles      []float64
		ints         []int64 // int32_data and int64_data
		typedFields  int
		external     bool
		strings, seg bool
	)
	for {
		num, typ, ok, err := d.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch num {
		case 1:
			if dims, err = d.varints(dims, num, typ); err != nil {
				return nil, err
			}
		case 2:
			v, err := d.varint(num, typ)
			if err != nil {
				return nil, err
			}
			t.DataType = int32(v)
		case 3:
			seg = true
			if err := d.skip(num, typ); err != nil {
				return nil, err
			}
		case 4:
			if floats, err = d.fixed32s(floats, num, typ); err != nil {
				return nil, err
			}
			typedFields |= 1
		case 5, 7:
			if ints, err = d.varints(ints, num, typ); err != nil {
				return nil, err
			}
			typedFields |= 2
		case 6:
			strings = true
			if err := d.skip(num, typ); err != nil {
				return nil, err
			}
		case 8:
			if t.Name, err = d.str(num, typ); err != nil {
				return nil, err
			}
		case 9:
			if raw, err = d.bytes(num, typ); err != nil {
				return nil, err
			}
			hasRaw = true
		case 10:
			if doubles, err = d.fixed64s(doubles, num, typ); err != nil {
				return nil, err
			}
			typedFields |= 4
		case 13:
			external = true
			if err := d.skip(num, typ); err != nil {
				return nil, err
			}
		case 14:
			v, err := d.varint(num, typ)
			if err != nil {
				return nil, err
			}
			external = external || v != 0
		default:
			if err := d.skip(num, typ); err != nil {
				return nil, err
			}
		}
	}
	if t.Name != "" {
		d.where += fmt.Sprintf(" (%q)", t.Name)
	}
	switch {
	case external:
		return nil, d.errf("the tensor's data is stored outside the model file (external data): not supported; save the model as one file (onnx.save_model(m, path, save_as_external_data=False))")
	case seg:
		return nil, d.errf("a segmented tensor: not supported")
	case strings:
		return nil, d.errf("a string tensor: not supported")
	}
	info, ok := dtypes[t.DataType]
	if !ok {
		return nil, d.errf("%s: not supported", TypeName(t.DataType))
	}
	n, err := elements(dims)
	if err != nil {
		return nil, d.errf("%v", err)
	}
	t.Shape = make([]int, len(dims))
	for i, v := range dims {
		t.Shape[i] = int(v)
	}
	count := -1 // values stored in a typed field
	switch typedFields {
	case 0:
	case 1:
		count = len(floats)
	case 2:
		count = len(ints)
	case 4:
		count = len(doubles)
	default:
		return nil, d.errf("values in several typed fields")
	}
	switch {
	case hasRaw && count >= 0:
		return nil, d.errf("values in raw_data and in a typed field")
	case hasRaw:
		if uint64(len(raw)) != uint64(n)*uint64(info.size) {
			return nil, d.errf("raw_data of %d bytes for %d %s values (%d bytes)", len(raw), n, info.name, n*info.size)
		}
		return t, t.fromRaw(raw, n, info.size, info.float)
	case count < 0 && n > 0:
		return nil, d.errf("no values for shape %v", dims)
	case count >= 0 && count != n:
		return nil, d.errf("%d values for shape %v (%d elements)", count, dims, n)
	}
	// Typed fields: float_data for float32, double_data for float64,
	// int32_data for the small types and float16/bfloat16 (as bits),
	// int64_data for int64.
	want := map[int32]int{TypeFloat: 1, TypeDouble: 4}[t.DataType]
	if want == 0 {
		want = 2
	}
	if count > 0 && typedFields != want {
		return nil, d.errf("%s values in the wrong typed field", info.name)
	}
	if info.float {
		t.F = make([]float64, n)
		for i := range n {
			switch t.DataType {
			case TypeFloat:
				t.F[i] = float64(floats[i])
			case TypeDouble:
				t.F[i] = doubles[i]
			default:
				t.F[i] = halfToFloat(uint16(ints[i]), t.DataType)
			}
		}
		return t, nil
	}
	t.I = make([]int64, n)
	copy(t.I, ints)
	return t, nil
}

// fromRaw converts n little-endian values of size bytes.
func (t *Tensor) fromRaw(raw []byte, n, size int, float bool) error {
	if float {
		t.F = make([]float64, n)
	} else {
		t.I = make([]int64, n)
	}
	for i := range n {
		b := raw[i*size : (i+1)*size]
		switch t.DataType {
		case TypeFloat:
			t.F[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		case TypeDouble:
			t.F[i] = math.Float64frombits(binary.LittleEndian.Uint64(b))
		case TypeFloat16, TypeBfloat16:
			t.F[i] = halfToFloat(binary.LittleEndian.Uint16(b), t.DataType)
		case TypeUint8, TypeBool:
			t.I[i] = int64(b[0])
		case TypeInt8:
			t.I[i] = int64(int8(b[0]))
		case TypeUint16:
			t.I[i] = int64(binary.LittleEndian.Uint16(b))
		case TypeInt16:
			t.I[i] = int64(int16(binary.LittleEndian.Uint16(b)))
		case TypeInt32:
			t.I[i] = int64(int32(binary.LittleEndian.Uint32(b)))
		case TypeInt64:
			t.I[i] = int64(binary.LittleEndian.Uint64(b))
		}
	}
	return nil
}

// halfToFloat converts float16 or bfloat16 bits exactly.
func halfToFloat(h uint16, typ int32) float64 {
	if typ == TypeBfloat16 {
		return float64(math.Float32frombits(uint32(h) << 16))
	}
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10)&0x1f, float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1024+frac, exp-25)
}

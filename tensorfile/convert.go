package tensorfile

import (
	"encoding/binary"
	"math"
)

// dtype is an element type of the files' tensors.
type dtype uint8

const (
	dtInvalid dtype = iota
	dtF64
	dtF32
	dtF16
	dtBF16
	dtI64
	dtI32
	dtI16
	dtI8
	dtU64
	dtU32
	dtU16
	dtU8
	dtBool
)

var dtypeInfo = [...]struct {
	name string
	size int64
}{
	dtInvalid: {"invalid", 1},
	dtF64:     {"F64", 8},
	dtF32:     {"F32", 4},
	dtF16:     {"F16", 2},
	dtBF16:    {"BF16", 2},
	dtI64:     {"I64", 8},
	dtI32:     {"I32", 4},
	dtI16:     {"I16", 2},
	dtI8:      {"I8", 1},
	dtU64:     {"U64", 8},
	dtU32:     {"U32", 4},
	dtU16:     {"U16", 2},
	dtU8:      {"U8", 1},
	dtBool:    {"BOOL", 1},
}

func (d dtype) String() string { return dtypeInfo[d].name }
func (d dtype) size() int64    { return dtypeInfo[d].size }

// dtypeByName returns the dtype called name in safetensors, or dtInvalid.
func dtypeByName(name string) dtype {
	for d := dtF64; d <= dtBool; d++ {
		if dtypeInfo[d].name == name {
			return d
		}
	}
	return dtInvalid
}

// maxExact is the largest magnitude up to which every integer is a float64.
const maxExact = 1 << 53

// decode converts len(dst) elements of type d from src, which holds exactly
// len(dst)·d.size() bytes in byte order bo. It returns -1, or the index of
// the first element that has no exact float64 (an integer beyond 2^53, a
// BOOL byte other than 0 or 1); dst is then partly written.
func decode(dst []float64, src []byte, d dtype, bo binary.ByteOrder) int {
	switch d {
	case dtF64:
		for i := range dst {
			dst[i] = math.Float64frombits(bo.Uint64(src[8*i:]))
		}
	case dtF32:
		for i := range dst {
			dst[i] = f32to64(bo.Uint32(src[4*i:]))
		}
	case dtF16:
		for i := range dst {
			dst[i] = f16to64(bo.Uint16(src[2*i:]))
		}
	case dtBF16:
		for i := range dst {
			dst[i] = f32to64(uint32(bo.Uint16(src[2*i:])) << 16)
		}
	case dtI64:
		for i := range dst {
			v := int64(bo.Uint64(src[8*i:]))
			if v > maxExact || v < -maxExact {
				return i
			}
			dst[i] = float64(v)
		}
	case dtU64:
		for i := range dst {
			v := bo.Uint64(src[8*i:])
			if v > maxExact {
				return i
			}
			dst[i] = float64(v)
		}
	case dtI32:
		for i := range dst {
			dst[i] = float64(int32(bo.Uint32(src[4*i:])))
		}
	case dtU32:
		for i := range dst {
			dst[i] = float64(bo.Uint32(src[4*i:]))
		}
	case dtI16:
		for i := range dst {
			dst[i] = float64(int16(bo.Uint16(src[2*i:])))
		}
	case dtU16:
		for i := range dst {
			dst[i] = float64(bo.Uint16(src[2*i:]))
		}
	case dtI8:
		for i := range dst {
			dst[i] = float64(int8(src[i]))
		}
	case dtU8:
		for i := range dst {
			dst[i] = float64(src[i])
		}
	case dtBool:
		for i := range dst {
			if src[i] > 1 {
				return i
			}
			dst[i] = float64(src[i])
		}
	default:
		return 0
	}
	return -1
}

// f32to64 converts the bits of an IEEE binary32 to float64 exactly,
// keeping a NaN's sign and payload (a hardware conversion would quiet a
// signalling NaN).
func f32to64(b uint32) float64 {
	if b&0x7f800000 == 0x7f800000 && b&0x007fffff != 0 {
		return math.Float64frombits(uint64(b>>31)<<63 | 0x7ff<<52 | uint64(b&0x007fffff)<<29)
	}
	return float64(math.Float32frombits(b))
}

// f16to64 converts the bits of an IEEE binary16 to float64 exactly:
// subnormals, ±0, ±Inf and NaN (sign and payload kept).
func f16to64(h uint16) float64 {
	sign := uint64(h>>15) << 63
	exp := uint64(h>>10) & 0x1f
	mant := uint64(h & 0x3ff)
	switch exp {
	case 0: // ±0 and subnormals: mant·2^-24
		return math.Float64frombits(math.Float64bits(math.Ldexp(float64(mant), -24)) | sign)
	case 0x1f: // ±Inf and NaN
		return math.Float64frombits(sign | 0x7ff<<52 | mant<<42)
	}
	return math.Float64frombits(sign | (exp-15+1023)<<52 | mant<<42)
}

// badValue describes why element v of a tensor of type d was refused.
func badValue(d dtype, src []byte, bo binary.ByteOrder) string {
	switch d {
	case dtI64:
		return "element value " + itoa(int64(bo.Uint64(src))) + " is beyond ±2^53 and has no exact float64"
	case dtU64:
		return "element value " + utoa(bo.Uint64(src)) + " is beyond 2^53 and has no exact float64"
	case dtBool:
		return "BOOL element byte " + itoa(int64(src[0])) + " is neither 0 nor 1"
	}
	return "element cannot be converted"
}

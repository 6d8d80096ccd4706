package export

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// WritePyTorch writes tensors as torch.save writes a state_dict (the zip
// format of PyTorch ≥ 1.6): archive/data.pkl, a protocol-2 pickle of an
// OrderedDict of name → torch._utils._rebuild_tensor_v2(DoubleStorage, …)
// in name order, each tensor's little-endian F64 data in archive/data/N
// (stored, 64-byte aligned), archive/byteorder and archive/version. The
// pickle uses only the globals a state_dict needs, so that readers that
// refuse others (torch.load(weights_only=True), package tensorfile) accept
// it. Empty or duplicate names and a shape that does not hold the data
// are errors, found before anything is written.
func WritePyTorch(w io.Writer, tensors []Tensor) error {
	ts := slices.Clone(tensors)
	slices.SortFunc(ts, func(a, b Tensor) int { return strings.Compare(a.Name, b.Name) })
	for i, t := range ts {
		if t.Name == "" {
			return fmt.Errorf("export: empty tensor name")
		}
		if i > 0 && ts[i-1].Name == t.Name {
			return fmt.Errorf("export: two tensors are called %q", t.Name)
		}
		if err := t.check(); err != nil {
			return err
		}
	}
	cw := &countWriter{w: w}
	z := zip.NewWriter(cw)
	store := func(name string, data []byte) error {
		h := &zip.FileHeader{Name: name, Method: zip.Store, CRC32: crc32.ChecksumIEEE(data),
			CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(len(data))}
		// Pad the local header's extra field so that the data starts on a
		// 64-byte boundary, as torch.save does (readers may map it).
		if err := z.Flush(); err != nil {
			return err
		}
		start := cw.n + 30 + int64(len(name)) // after the local header's fixed part and name
		pad := (64 - (start+4)%64) % 64
		h.Extra = make([]byte, 4+pad)
		binary.LittleEndian.PutUint16(h.Extra, 0x4246) // "FB", PyTorch's padding tag
		binary.LittleEndian.PutUint16(h.Extra[2:], uint16(pad))
		f, err := z.CreateRaw(h)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		return err
	}
	if err := store("archive/data.pkl", statePickle(ts)); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := store("archive/byteorder", []byte("little")); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	for i, t := range ts {
		b := make([]byte, 8*len(t.Data))
		for k, v := range t.Data {
			binary.LittleEndian.PutUint64(b[8*k:], math.Float64bits(v))
		}
		if err := store("archive/data/"+strconv.Itoa(i), b); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	if err := store("archive/version", []byte("3\n")); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := z.Close(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// countWriter counts the bytes written, for the alignment of the entries.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// The pickle opcodes WritePyTorch uses.
const (
	opProto      = 0x80
	opGlobal     = 'c'
	opEmptyTuple = ')'
	opReduce     = 'R'
	opMark       = '('
	opTuple      = 't'
	opSetItems   = 'u'
	opBinUnicode = 'X'
	opBinInt     = 'J'
	opBinPersID  = 'Q'
	opNewFalse   = 0x89
	opStop       = '.'
)

// statePickle is the data.pkl of a state_dict of ts (sorted, checked):
// storage i of tensor i holds its data.
func statePickle(ts []Tensor) []byte {
	var b bytes.Buffer
	global := func(module, name string) {
		b.WriteByte(opGlobal)
		b.WriteString(module + "\n" + name + "\n")
	}
	str := func(s string) {
		b.WriteByte(opBinUnicode)
		binary.Write(&b, binary.LittleEndian, uint32(len(s)))
		b.WriteString(s)
	}
	integer := func(v int) {
		b.WriteByte(opBinInt)
		binary.Write(&b, binary.LittleEndian, int32(v))
	}
	tuple := func(v []int) {
		b.WriteByte(opMark)
		for _, x := range v {
			integer(x)
		}
		b.WriteByte(opTuple)
	}
	ordered := func() {
		global("collections", "OrderedDict")
		b.WriteByte(opEmptyTuple)
		b.WriteByte(opReduce)
	}
	b.Write([]byte{opProto, 2})
	ordered()
	b.WriteByte(opMark)
	for i, t := range ts {
		str(t.Name)
		global("torch._utils", "_rebuild_tensor_v2")
		b.WriteByte(opMark)
		// The storage: persistent id ("storage", DoubleStorage, key, "cpu", numel).
		b.WriteByte(opMark)
		str("storage")
		global("torch", "DoubleStorage")
		str(strconv.Itoa(i))
		str("cpu")
		integer(len(t.Data))
		b.WriteByte(opTuple)
		b.WriteByte(opBinPersID)
		integer(0) // storage offset
		tuple(t.Shape)
		stride := make([]int, len(t.Shape))
		s := 1
		for k := len(t.Shape) - 1; k >= 0; k-- {
			stride[k] = s
			s *= t.Shape[k]
		}
		tuple(stride)
		b.WriteByte(opNewFalse) // requires_grad
		ordered()               // backward hooks
		b.WriteByte(opTuple)
		b.WriteByte(opReduce)
	}
	b.WriteByte(opSetItems)
	b.WriteByte(opStop)
	return b.Bytes()
}

// Package export writes LSTM classifiers as PyTorch state_dicts: the
// white-box networks become nn.Embedding (an identity, so that a token id
// embeds as its one-hot row) → nn.LSTM → nn.Linear, as F64 tensors in a
// .safetensors file (WriteSafetensors) or in torch.save's zip format
// (WritePyTorch), which PyTorch and this module's model.Load both read.
package export

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Tensor is a named tensor of float64 values, row-major.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float64
}

// check returns an error for a negative dimension, a shape whose product
// overflows, and one whose product is not len(Data).
func (t Tensor) check() error {
	n := 1
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("export: tensor %q: negative dimension in shape %v", t.Name, t.Shape)
		}
		if d != 0 && n > math.MaxInt/d {
			return fmt.Errorf("export: tensor %q: shape %v is too large", t.Name, t.Shape)
		}
		n *= d
	}
	if n != len(t.Data) {
		return fmt.Errorf("export: tensor %q: shape %v holds %d values, but %d are given", t.Name, t.Shape, n, len(t.Data))
	}
	return nil
}

// WriteSafetensors writes tensors as a safetensors file of F64 tensors:
// the 8-byte little-endian header length, the JSON header (tensors in name
// order, then "__metadata__" if metadata is not empty, padded with spaces
// to a multiple of 8 bytes) and the data, little-endian, in the same
// order. Empty or duplicate names, "__metadata__" as a name and a shape
// that does not hold the data are errors, found before anything is
// written.
func WriteSafetensors(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	ts := slices.Clone(tensors)
	slices.SortFunc(ts, func(a, b Tensor) int { return strings.Compare(a.Name, b.Name) })
	for i, t := range ts {
		if t.Name == "" || t.Name == "__metadata__" {
			return fmt.Errorf("export: tensor name %q is not allowed", t.Name)
		}
		if i > 0 && ts[i-1].Name == t.Name {
			return fmt.Errorf("export: two tensors are called %q", t.Name)
		}
		if err := t.check(); err != nil {
			return err
		}
	}
	var h strings.Builder
	h.WriteByte('{')
	off := 0
	for i, t := range ts {
		if i > 0 {
			h.WriteByte(',')
		}
		name, _ := json.Marshal(t.Name) // a string: no error
		shape := make([]string, len(t.Shape))
		for k, d := range t.Shape {
			shape[k] = strconv.Itoa(d)
		}
		fmt.Fprintf(&h, `%s:{"dtype":"F64","shape":[%s],"data_offsets":[%d,%d]}`, name, strings.Join(shape, ","), off, off+8*len(t.Data))
		off += 8 * len(t.Data)
	}
	if len(metadata) > 0 {
		if len(ts) > 0 {
			h.WriteByte(',')
		}
		m, err := json.Marshal(metadata) // keys sorted
		if err != nil {
			return fmt.Errorf("export: metadata: %w", err)
		}
		h.WriteString(`"__metadata__":`)
		h.Write(m)
	}
	h.WriteByte('}')
	for h.Len()%8 != 0 {
		h.WriteByte(' ')
	}
	bw := bufio.NewWriter(w)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(h.Len()))
	bw.Write(b[:])
	bw.WriteString(h.String())
	for _, t := range ts {
		for _, v := range t.Data {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			bw.Write(b[:])
		}
	}
	if err := bw.Flush(); err != nil {
		return errors.Join(errors.New("export: writing"), err)
	}
	return nil
}

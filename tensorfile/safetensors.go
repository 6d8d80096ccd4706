package tensorfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"unicode/utf8"
)

// stEntry is one tensor of a safetensors header.
type stEntry struct {
	name       string
	dt         dtype
	shape      []int64
	numel      int64
	begin, end int64 // within the data buffer
}

// readSafetensors reads a safetensors file: the 8-byte header length N,
// N bytes of JSON, then the data buffer.
func readSafetensors(c *ctx, r io.ReaderAt, size int64) (*File, error) {
	if size < 8 {
		return nil, c.errf(ErrFormat, "the file has %s; a safetensors file starts with an 8-byte header length (and the file is no zip archive or torch pickle either)", plural(size, "byte"))
	}
	var lenb [8]byte
	if _, err := r.ReadAt(lenb[:], 0); err != nil {
		return nil, c.ioErr(err, "the safetensors header length")
	}
	n := binary.LittleEndian.Uint64(lenb[:])
	if n > uint64(size-8) {
		return nil, c.errf(ErrFormat, "safetensors header length %d is past the end of the file (%s after the length)", n, plural(size-8, "byte"))
	}
	if n > uint64(c.opt.MaxHeaderBytes) {
		return nil, c.errf(ErrLimit, "safetensors header length %d exceeds the limit of %d bytes", n, c.opt.MaxHeaderBytes)
	}
	hdr := make([]byte, n)
	if _, err := r.ReadAt(hdr, 8); err != nil {
		return nil, c.ioErr(err, "the safetensors header")
	}
	if len(hdr) == 0 || hdr[0] != '{' {
		return nil, c.errf(ErrFormat, "the safetensors header does not start with '{' (the file is not safetensors, or is corrupt)")
	}
	if !utf8.Valid(hdr) {
		return nil, c.errf(ErrFormat, "the safetensors header is not valid UTF-8")
	}
	entries, meta, err := parseSTHeader(c, hdr)
	if err != nil {
		return nil, err
	}
	dataStart := 8 + int64(n)
	if err := checkSTLayout(c, entries, size-dataStart); err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	f := &File{Format: "safetensors", Metadata: meta, Tensors: make([]*Tensor, 0, len(entries))}
	buf := make([]byte, 0)
	for i := range entries {
		e := &entries[i]
		t, err := readSTTensor(c, r, dataStart, e, &buf)
		if err != nil {
			return nil, err
		}
		f.Tensors = append(f.Tensors, t)
	}
	return f, nil
}

// readSTTensor reads one tensor whose layout has been checked, in chunks
// of at most 1 MiB through *buf.
func readSTTensor(c *ctx, r io.ReaderAt, dataStart int64, e *stEntry, buf *[]byte) (*Tensor, error) {
	shape, ok := intShape(e.shape)
	if !ok || e.numel > int64(maxInt) {
		return nil, c.terrf(ErrLimit, e.name, "shape %v does not fit this platform's int", e.shape)
	}
	t := &Tensor{Name: e.name, DType: e.dt.String(), Shape: shape, Data: make([]float64, e.numel)}
	es := e.dt.size()
	chunk := (1 << 20) / es
	for i := int64(0); i < e.numel; i += chunk {
		m := min(chunk, e.numel-i)
		nb := m * es
		if int64(cap(*buf)) < nb {
			*buf = make([]byte, nb)
		}
		b := (*buf)[:nb]
		if _, err := r.ReadAt(b, dataStart+e.begin+i*es); err != nil {
			return nil, &Error{File: c.file, Tensor: e.name, Msg: "reading the tensor's data", Kind: ErrFormat, Err: err}
		}
		if bad := decode(t.Data[i:i+m], b, e.dt, binary.LittleEndian); bad >= 0 {
			return nil, c.terrf(ErrFormat, e.name, "element %d: %s", i+int64(bad), badValue(e.dt, b[int64(bad)*es:], binary.LittleEndian))
		}
	}
	return t, nil
}

// checkSTLayout checks each tensor's offsets against its dtype and shape
// and the data buffer's length, that the tensors cover the buffer exactly
// (no overlaps, holes or trailing bytes, as the official implementation
// demands), and that all of them fit the limits.
func checkSTLayout(c *ctx, entries []stEntry, bufLen int64) error {
	total := int64(0)
	maxTotal := c.opt.MaxTotalBytes / 8
	for i := range entries {
		e := &entries[i]
		n, ok := numel(e.shape, c.opt.MaxTensorElements)
		if !ok {
			return c.terrf(ErrLimit, e.name, "shape %v has more than %d elements (MaxTensorElements)", e.shape, c.opt.MaxTensorElements)
		}
		e.numel = n
		if e.end < e.begin {
			return c.terrf(ErrFormat, e.name, "data_offsets [%d, %d] end before they begin", e.begin, e.end)
		}
		if e.end-e.begin != n*e.dt.size() {
			return c.terrf(ErrFormat, e.name, "data_offsets [%d, %d] span %s, but %v %s elements need %d", e.begin, e.end, plural(e.end-e.begin, "byte"), e.shape, e.dt, n*e.dt.size())
		}
		if e.end > bufLen {
			return c.terrf(ErrFormat, e.name, "data_offsets [%d, %d] are past the end of the data buffer (%s)", e.begin, e.end, plural(bufLen, "byte"))
		}
		if total, ok = addCheck(total, n, maxTotal); !ok {
			return c.terrf(ErrLimit, e.name, "the tensors hold more than %d bytes as float64 (MaxTotalBytes)", c.opt.MaxTotalBytes)
		}
	}
	order := make([]*stEntry, len(entries))
	for i := range entries {
		order[i] = &entries[i]
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].begin != order[j].begin {
			return order[i].begin < order[j].begin
		}
		return order[i].end < order[j].end
	})
	pos := int64(0)
	var prev *stEntry
	for _, e := range order {
		switch {
		case e.begin < pos:
			return c.terrf(ErrFormat, e.name, "data_offsets [%d, %d] overlap tensor %q at [%d, %d]", e.begin, e.end, prev.name, prev.begin, prev.end)
		case e.begin > pos:
			return c.terrf(ErrFormat, e.name, "bytes [%d, %d) of the data buffer, before this tensor, belong to no tensor (a hole; safetensors forbids them)", pos, e.begin)
		}
		pos = e.end
		prev = e
	}
	if pos != bufLen {
		return c.errf(ErrFormat, "the data buffer has %s after the last tensor's end (%d); safetensors forbids them", plural(bufLen-pos, "byte"), pos)
	}
	return nil
}

// jsonReader walks a safetensors header token by token, so that duplicate
// keys are seen (encoding/json would keep the last one silently).
type jsonReader struct {
	c   *ctx
	dec *json.Decoder
}

func (j *jsonReader) fail(err error, what string) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return j.c.errf(ErrFormat, "the safetensors header is not valid JSON (%s, at byte %d of the header)", se, se.Offset)
	}
	return j.c.errf(ErrFormat, "the safetensors header is not valid JSON (%s, reading %s)", err, what)
}

func (j *jsonReader) token(what string) (json.Token, error) {
	t, err := j.dec.Token()
	if err != nil {
		return nil, j.fail(err, what)
	}
	return t, nil
}

func (j *jsonReader) delim(want json.Delim, what string) error {
	t, err := j.token(what)
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return j.c.errf(ErrFormat, "safetensors header: %s must be a JSON %s, not %s", what, delimKind(want), describeJSON(t))
	}
	return nil
}

func delimKind(d json.Delim) string {
	if d == '{' {
		return "object"
	}
	return "array"
}

func describeJSON(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		if v == '[' {
			return "an array"
		}
		return fmt.Sprintf("%q", string(v))
	case string:
		return fmt.Sprintf("the string %q", truncate(v))
	case json.Number:
		return "the number " + truncate(string(v))
	case bool:
		return fmt.Sprintf("%v", v)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", t)
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// skip skips one JSON value of any depth.
func (j *jsonReader) skip(what string) error {
	depth := 0
	for {
		t, err := j.token(what)
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// uint reads a non-negative JSON integer.
func (j *jsonReader) uint(tensor, what string) (int64, error) {
	t, err := j.token(what)
	if err != nil {
		return 0, err
	}
	num, ok := t.(json.Number)
	if !ok {
		return 0, j.c.terrf(ErrFormat, tensor, "%s must hold integers, not %s", what, describeJSON(t))
	}
	v, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || v < 0 {
		return 0, j.c.terrf(ErrFormat, tensor, "%s holds %s, not a non-negative integer below 2^63", what, truncate(string(num)))
	}
	return v, nil
}

// parseSTHeader parses the JSON header into tensor entries and metadata.
func parseSTHeader(c *ctx, hdr []byte) ([]stEntry, map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.UseNumber()
	j := &jsonReader{c: c, dec: dec}
	if err := j.delim('{', "the header"); err != nil {
		return nil, nil, err
	}
	var entries []stEntry
	var meta map[string]string
	seen := make(map[string]bool)
	for dec.More() {
		t, err := j.token("a key")
		if err != nil {
			return nil, nil, err
		}
		key := t.(string) // Token returns only strings in key position
		if seen[key] {
			if key == "__metadata__" {
				return nil, nil, c.errf(ErrFormat, "the safetensors header has __metadata__ twice")
			}
			return nil, nil, c.terrf(ErrFormat, key, "the safetensors header names the tensor twice")
		}
		seen[key] = true
		if key == "__metadata__" {
			if meta, err = parseSTMeta(j); err != nil {
				return nil, nil, err
			}
			continue
		}
		e, err := parseSTEntry(j, key)
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, e)
	}
	if err := j.delim('}', "the header"); err != nil {
		return nil, nil, err
	}
	if t, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, nil, j.fail(err, "the end of the header")
		}
		return nil, nil, c.errf(ErrFormat, "the safetensors header has %s after its JSON object", describeJSON(t))
	}
	return entries, meta, nil
}

func parseSTMeta(j *jsonReader) (map[string]string, error) {
	t, err := j.token("__metadata__")
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, nil
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, j.c.errf(ErrFormat, "safetensors header: __metadata__ must be an object of strings, not %s", describeJSON(t))
	}
	meta := make(map[string]string)
	for j.dec.More() {
		t, err := j.token("__metadata__")
		if err != nil {
			return nil, err
		}
		k := t.(string)
		if _, dup := meta[k]; dup {
			return nil, j.c.errf(ErrFormat, "safetensors header: __metadata__ has the key %q twice", k)
		}
		t, err = j.token("__metadata__")
		if err != nil {
			return nil, err
		}
		v, ok := t.(string)
		if !ok {
			return nil, j.c.errf(ErrFormat, "safetensors header: __metadata__ value %q is %s, not a string", k, describeJSON(t))
		}
		meta[k] = v
	}
	if err := j.delim('}', "__metadata__"); err != nil {
		return nil, err
	}
	return meta, nil
}

func parseSTEntry(j *jsonReader, name string) (stEntry, error) {
	c := j.c
	e := stEntry{name: name}
	t, err := j.token("a tensor entry")
	if err != nil {
		return e, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return e, c.terrf(ErrFormat, name, "the header entry must be an object with dtype, shape and data_offsets, not %s", describeJSON(t))
	}
	var haveDType, haveShape, haveOffsets bool
	for j.dec.More() {
		t, err := j.token("a tensor entry")
		if err != nil {
			return e, err
		}
		field := t.(string)
		switch field {
		case "dtype":
			if haveDType {
				return e, c.terrf(ErrFormat, name, "the header entry has dtype twice")
			}
			haveDType = true
			t, err := j.token("dtype")
			if err != nil {
				return e, err
			}
			s, ok := t.(string)
			if !ok {
				return e, c.terrf(ErrFormat, name, "dtype must be a string, not %s", describeJSON(t))
			}
			if e.dt = dtypeByName(s); e.dt == dtInvalid {
				return e, c.terrf(ErrUnsupported, name, "unknown or unsupported dtype %q (supported: F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL)", truncate(s))
			}
		case "shape":
			if haveShape {
				return e, c.terrf(ErrFormat, name, "the header entry has shape twice")
			}
			haveShape = true
			if err := j.delim('[', "shape"); err != nil {
				return e, err
			}
			e.shape = []int64{}
			for j.dec.More() {
				if len(e.shape) == maxRank {
					return e, c.terrf(ErrLimit, name, "shape has more than %d dimensions", maxRank)
				}
				v, err := j.uint(name, "shape")
				if err != nil {
					return e, err
				}
				e.shape = append(e.shape, v)
			}
			if err := j.delim(']', "shape"); err != nil {
				return e, err
			}
		case "data_offsets":
			if haveOffsets {
				return e, c.terrf(ErrFormat, name, "the header entry has data_offsets twice")
			}
			haveOffsets = true
			if err := j.delim('[', "data_offsets"); err != nil {
				return e, err
			}
			var offs []int64
			for j.dec.More() {
				if len(offs) == 2 {
					return e, c.terrf(ErrFormat, name, "data_offsets must hold exactly two integers [begin, end]")
				}
				v, err := j.uint(name, "data_offsets")
				if err != nil {
					return e, err
				}
				offs = append(offs, v)
			}
			if len(offs) != 2 {
				return e, c.terrf(ErrFormat, name, "data_offsets must hold exactly two integers [begin, end]")
			}
			if err := j.delim(']', "data_offsets"); err != nil {
				return e, err
			}
			e.begin, e.end = offs[0], offs[1]
		default:
			if err := j.skip(field); err != nil {
				return e, err
			}
		}
	}
	if err := j.delim('}', "a tensor entry"); err != nil {
		return e, err
	}
	switch {
	case !haveDType:
		return e, c.terrf(ErrFormat, name, "the header entry has no dtype")
	case !haveShape:
		return e, c.terrf(ErrFormat, name, "the header entry has no shape")
	case !haveOffsets:
		return e, c.terrf(ErrFormat, name, "the header entry has no data_offsets")
	}
	return e, nil
}

package tensorfile

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"

	"github.com/whitebox-lstm/whitebox/internal/regfile"
)

// Tensor is one named tensor, its values converted exactly to float64.
type Tensor struct {
	// Name is the tensor's name: the safetensors key, or the state_dict
	// key (dotted through nested dicts).
	Name string
	// DType is the dtype as stored, in safetensors' names: "F64", "F32",
	// "F16", "BF16", "I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8"
	// or "BOOL". Torch storages map to the same names (torch.FloatStorage
	// is "F32", torch.HalfStorage "F16", torch.LongStorage "I64", ...).
	DType string
	// Shape is PyTorch's size; a 0-d tensor has Shape [] and one value.
	Shape []int
	// Data holds the values in row-major (contiguous) order;
	// len(Data) is the product of Shape.
	Data []float64
}

// File is the tensors of one file.
type File struct {
	Path     string            // as given to Open ("" for Read)
	Format   string            // "safetensors", "pytorch" (torch.save's zip format) or "pytorch-legacy"
	Tensors  []*Tensor         // sorted by name
	Metadata map[string]string // safetensors' __metadata__ (nil for other formats, or when absent)
}

// Get returns the tensor called name, or nil if the file has none.
func (f *File) Get(name string) *Tensor {
	i := sort.Search(len(f.Tensors), func(i int) bool { return f.Tensors[i].Name >= name })
	if i < len(f.Tensors) && f.Tensors[i].Name == name {
		return f.Tensors[i]
	}
	return nil
}

// The default limits of Options.
const (
	// DefaultMaxTotalBytes bounds the float64 values of all tensors of a
	// file together: 4 GiB, that is 2^29 values.
	DefaultMaxTotalBytes int64 = 4 << 30
	// DefaultMaxTensorElements bounds the elements of one tensor: 2^29.
	DefaultMaxTensorElements int64 = 1 << 29
	// DefaultMaxHeaderBytes bounds a safetensors JSON header and a PyTorch
	// pickle: 100 MB.
	DefaultMaxHeaderBytes int64 = 100 << 20
)

// maxRank bounds the number of dimensions of a tensor.
const maxRank = 64

// Options bound what a read may allocate. A zero field means its default.
// Limits are checked before anything is allocated; a file beyond them is
// refused with an error wrapping ErrLimit.
type Options struct {
	// MaxTensorElements bounds the number of elements of one tensor
	// (default DefaultMaxTensorElements).
	MaxTensorElements int64
	// MaxTotalBytes bounds the bytes of the Data slices of all tensors of
	// the file together, 8 per element (default DefaultMaxTotalBytes). It
	// bounds too the bytes decompressed from compressed zip entries.
	MaxTotalBytes int64
	// MaxHeaderBytes bounds the safetensors JSON header and the pickle of
	// a PyTorch file (default DefaultMaxHeaderBytes).
	MaxHeaderBytes int64
}

func (o Options) withDefaults() Options {
	if o.MaxTensorElements <= 0 {
		o.MaxTensorElements = DefaultMaxTensorElements
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	return o
}

// Open reads the file at path with the default Options; see Options.Open.
func Open(path string) (*File, error) { return Options{}.Open(path) }

// Read reads size bytes from r with the default Options; see Options.Read.
func Read(r io.ReaderAt, size int64, name string) (*File, error) {
	return Options{}.Read(r, size, name)
}

// Open reads the file at path, choosing the format by its content (detect):
// a safetensors header's frame, whatever its length's bytes; a zip archive
// is torch.save's format, a pickle of torch's magic number its legacy
// format. Anything else is "not a model file", saying what it looks like
// (empty, text, JSON, …). Errors name the file by path.
func (o Options) Open(path string) (*File, error) {
	c := &ctx{file: path, opt: o.withDefaults()}
	// Before opening: a named pipe would block in open, a device never end.
	if err := regfile.Check(path); err != nil {
		if nr, ok := err.(*regfile.NotRegularError); ok {
			return nil, c.errf(ErrFormat, "%s, not a regular file", nr.Kind)
		}
		return nil, &Error{File: path, Msg: "opening the file", Kind: ErrFormat, Err: err}
	}
	fd, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "opening the file", Kind: ErrFormat, Err: err}
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, &Error{File: path, Msg: "reading the file's size", Kind: ErrFormat, Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, c.errf(ErrFormat, "not a regular file")
	}
	f, err := read(c, fd, st.Size())
	if err != nil {
		return nil, err
	}
	f.Path = path
	return f, nil
}

// Read reads a file of size bytes from r, choosing the format as Open does;
// name is used in error messages only ("<input>" when empty). The File's
// Path is "".
func (o Options) Read(r io.ReaderAt, size int64, name string) (*File, error) {
	if name == "" {
		name = "<input>"
	}
	return read(&ctx{file: name, opt: o.withDefaults()}, r, size)
}

var (
	zipMagic      = []byte("PK\x03\x04")
	emptyZipMagic = []byte("PK\x05\x06")
	// torchMagic is the pickle of torch's legacy magic number
	// 0x1950a86a20f9469cfc6c after PROTO n: LONG1 of 10 bytes.
	torchMagic = []byte("\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19")
)

func read(c *ctx, r io.ReaderAt, size int64) (f *File, err error) {
	// The last line of defence: a bug that panics becomes an error.
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, c.errf(ErrFormat, "internal error (please report): %v\n%s", p, debug.Stack())
		}
	}()
	if size < 0 {
		return nil, c.errf(ErrFormat, "negative size %d", size)
	}
	var head [512]byte
	n := int64(len(head))
	if size < n {
		n = size
	}
	if _, err := r.ReadAt(head[:n], 0); err != nil && err != io.EOF {
		return nil, c.ioErr(err, "the first bytes")
	}
	h := head[:n]
	switch detect(h, size) {
	case formatSafetensors:
		f, err := readSafetensors(c, r, size)
		if err != nil && h[0] == 0x80 && h[1] <= 5 && looksSafetensors(h, size) {
			// Only a pickle that passes for a safetensors frame by chance
			// gets here: read it as torch if it is one.
			if f2, err2 := readLegacy(c, r, size); err2 == nil {
				return f2, nil
			}
		}
		return f, err
	case formatZip:
		return readPyTorch(c, r, size)
	case formatLegacy:
		return readLegacy(c, r, size)
	case formatPickle:
		return nil, c.errf(ErrUnsupported, "a Python pickle, but not one written by torch.save (no torch magic number)")
	case formatTar:
		return nil, c.errf(ErrUnsupported, "a tar archive: the tar format of torch.save before PyTorch 0.4 is not supported")
	}
	return nil, c.errf(ErrFormat, "not a model file: neither safetensors, a PyTorch zip nor a pickle (%s)", looksLike(h, size))
}

func plural(n int64, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

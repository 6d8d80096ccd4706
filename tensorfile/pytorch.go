package tensorfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"path"
	"strings"

	"github.com/whitebox-lstm/whitebox/internal/visible"
)

// readPyTorch reads torch.save's zip format: <prefix>/data.pkl and
// <prefix>/data/<key> records.
func readPyTorch(c *ctx, r io.ReaderAt, size int64) (*File, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, &Error{File: c.file, Msg: "a zip archive (torch.save format), but a corrupt one", Kind: ErrFormat, Err: err}
	}
	entries := make(map[string]*zip.File, len(zr.File))
	var pkl *zip.File
	for _, f := range zr.File {
		if _, dup := entries[f.Name]; dup {
			return nil, c.errf(ErrFormat, "the zip archive has two entries named %q", f.Name)
		}
		entries[f.Name] = f
		dir, base := path.Split(f.Name)
		if base == "data.pkl" && dir != "" && strings.Count(dir, "/") == 1 {
			if pkl != nil {
				return nil, c.errf(ErrFormat, "the zip archive has two pickles, %q and %q", pkl.Name, f.Name)
			}
			pkl = f
		}
	}
	if pkl == nil {
		return nil, c.errf(ErrUnsupported, "a zip archive without <prefix>/data.pkl: not a torch.save file")
	}
	prefix := strings.TrimSuffix(pkl.Name, "data.pkl")
	if entries[prefix+"constants.pkl"] != nil || hasPrefix(entries, prefix+"code/") {
		return nil, c.errf(ErrUnsupported, "a TorchScript archive (torch.jit.save), not a torch.save file; save the model's state_dict() with torch.save instead")
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if f := entries[prefix+"byteorder"]; f != nil {
		b, err := readEntry(c, f, size, 16, "")
		if err != nil {
			return nil, err
		}
		switch string(b) {
		case "little":
		case "big":
			bo = binary.BigEndian
		default:
			return nil, c.errf(ErrFormat, "%s is %q, neither \"little\" nor \"big\"", visible.String(f.Name), truncate(string(b)))
		}
	}
	pb, err := readEntry(c, pkl, size, c.opt.MaxHeaderBytes, "")
	if err != nil {
		return nil, err
	}
	in := newPInput(bytes.NewReader(pb), 0, int64(len(pb)))
	vm := newPVM(c, in, make(map[string]*pstorage))
	vm.what = visible.String(pkl.Name) // the archive's names are the file's: escaped in messages
	root, err := vm.run()
	if err != nil {
		return nil, err
	}
	if in.remaining() != 0 {
		return nil, c.errf(ErrFormat, "%s has %s after the pickle's STOP", visible.String(pkl.Name), plural(in.remaining(), "byte"))
	}
	refs, err := collect(c, root)
	if err != nil {
		return nil, err
	}
	plans, err := checkViews(c, refs, size)
	if err != nil {
		return nil, err
	}
	decompressed := int64(0)
	load := func(tensor string, st *pstorage) ([]byte, error) {
		rec := prefix + "data/" + st.key
		f := entries[rec]
		if f == nil {
			return nil, c.terrf(ErrFormat, tensor, "storage %q has no record %s in the zip archive", st.key, visible.String(rec))
		}
		es := st.dt.size()
		if f.UncompressedSize64 > 1<<62 || int64(f.UncompressedSize64)/es != st.numel || int64(f.UncompressedSize64)%es != 0 {
			return nil, c.terrf(ErrFormat, tensor, "storage %q has %d bytes (%s), the pickle declares %d %s elements (%d bytes)",
				st.key, f.UncompressedSize64, visible.String(rec), st.numel, st.dt, mul(st.numel, es))
		}
		n := int64(f.UncompressedSize64)
		if f.Method != zip.Store {
			if decompressed, _ = addCheck(decompressed, n, 1<<62); decompressed > c.opt.MaxTotalBytes {
				return nil, c.terrf(ErrLimit, tensor, "storages decompress to more than %d bytes (MaxTotalBytes)", c.opt.MaxTotalBytes)
			}
		}
		return readEntry(c, f, size, n, tensor)
	}
	ts, err := materialize(c, plans, load, bo)
	if err != nil {
		return nil, err
	}
	return &File{Format: "pytorch", Tensors: ts}, nil
}

func hasPrefix(entries map[string]*zip.File, p string) bool {
	for name := range entries {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// maxDeflateRatio bounds the ratio of a deflated entry's declared size to
// its compressed size (deflate cannot exceed about 1032:1).
const maxDeflateRatio = 1040

// readEntry reads a whole zip entry of at most max bytes. Its declared
// sizes are checked before anything is allocated: a stored entry's against
// the file's size, a deflated entry's against the deflate ratio; and what
// is read is bounded and checked against the declared size and CRC.
func readEntry(c *ctx, f *zip.File, fileSize, max int64, tensor string) ([]byte, error) {
	bad := func(kind error, format string, args ...any) error {
		e := c.terrf(kind, tensor, format, args...)
		e.Msg = f.Name + ": " + e.Msg
		return e
	}
	n := f.UncompressedSize64
	if n > uint64(max) {
		return nil, bad(ErrLimit, "the entry has %d bytes, more than the limit of %d (MaxHeaderBytes for a pickle)", n, max)
	}
	var buf []byte
	switch f.Method {
	case zip.Store:
		off, err := f.DataOffset()
		if err != nil {
			return nil, bad(ErrFormat, "corrupt zip entry: %v", err)
		}
		if f.CompressedSize64 != n || off < 0 || n > uint64(fileSize-off) {
			return nil, bad(ErrFormat, "the stored zip entry claims %d bytes (compressed %d) at offset %d, past the end of the file (%d bytes)", n, f.CompressedSize64, off, fileSize)
		}
		buf = make([]byte, n)
	case zip.Deflate:
		if f.CompressedSize64 > uint64(fileSize) || n > f.CompressedSize64*maxDeflateRatio+1024 {
			return nil, bad(ErrFormat, "the deflated zip entry claims %d bytes from %d compressed bytes", n, f.CompressedSize64)
		}
		// Grow with the bytes actually decompressed, not the claim.
		buf = make([]byte, min(n, 1<<20))
	default:
		return nil, bad(ErrUnsupported, "zip compression method %d is not supported", f.Method)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, bad(ErrFormat, "opening the zip entry: %v", err)
	}
	defer rc.Close()
	lr := io.LimitReader(rc, int64(n))
	got := int64(0)
	for got < int64(n) {
		if got == int64(len(buf)) {
			buf = append(buf, make([]byte, min(int64(n)-got, got))...)
		}
		k, err := lr.Read(buf[got:])
		got += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, bad(ErrFormat, "reading the zip entry: %v", err)
		}
	}
	if got != int64(n) {
		return nil, bad(ErrFormat, "the zip entry has %d bytes, not the %d its header declares", got, n)
	}
	// Reach the entry's end, where archive/zip checks the size and CRC.
	var one [1]byte
	if k, err := io.ReadFull(rc, one[:]); k != 0 || err != io.EOF {
		switch err {
		case nil, io.ErrUnexpectedEOF, zip.ErrFormat:
			return nil, bad(ErrFormat, "the zip entry is longer than its header declares")
		case zip.ErrChecksum:
			return nil, bad(ErrFormat, "the zip entry's CRC-32 does not match its bytes (corrupt)")
		}
		return nil, bad(ErrFormat, "reading the zip entry: %v", err)
	}
	return buf[:n], nil
}

package tensorfile

import (
	"encoding/binary"
	"io"
)

// readLegacy reads the legacy format of torch.save(...,
// _use_new_zipfile_serialization=False): five pickles (magic number,
// protocol version, system information, the object, the storage keys),
// then each storage as an 8-byte little-endian element count and its
// bytes, in the order of the keys.
func readLegacy(c *ctx, r io.ReaderAt, size int64) (*File, error) {
	in := newPInput(r, 0, size)
	storages := make(map[string]*pstorage)
	next := func(what string) (any, error) {
		vm := newPVM(c, in, storages)
		vm.what = what
		vm.maxEnd, _ = addCheck(in.pos, c.opt.MaxHeaderBytes, 1<<62)
		return vm.run()
	}
	magic, err := next("the magic number's pickle")
	if err != nil {
		return nil, err
	}
	if m, ok := magic.(pbigint); !ok || string(m) != string(torchMagic[2:]) {
		return nil, c.errf(ErrFormat, "the legacy torch magic number is wrong")
	}
	proto, err := next("the protocol version's pickle")
	if err != nil {
		return nil, err
	}
	if p, ok := proto.(int64); !ok || p != 1001 {
		return nil, c.errf(ErrUnsupported, "legacy torch.save protocol version %s (only 1001 is known)", describe(proto))
	}
	if _, err := next("the system information's pickle"); err != nil {
		return nil, err
	}
	root, err := next("the object's pickle")
	if err != nil {
		return nil, err
	}
	keysv, err := next("the storage keys' pickle")
	if err != nil {
		return nil, err
	}
	kl, ok := keysv.(*plist)
	if !ok {
		return nil, c.errf(ErrFormat, "the storage keys' pickle holds %s, not a list", describe(keysv))
	}
	// Walk the storages: each count is checked against the pickle's and
	// against the bytes that remain before anything is read.
	type rec struct{ off int64 }
	recs := make(map[string]rec, len(kl.items))
	pos := in.pos
	for _, kv := range kl.items {
		key, ok := kv.(string)
		if !ok {
			return nil, c.errf(ErrFormat, "a storage key is %s, not a str", describe(kv))
		}
		st := storages[key]
		if st == nil {
			return nil, c.errf(ErrFormat, "storage %q is listed but no tensor's pickle names it", key)
		}
		if _, dup := recs[key]; dup {
			return nil, c.errf(ErrFormat, "storage %q is listed twice", key)
		}
		if size-pos < 8 {
			return nil, c.errf(ErrFormat, "storage %q: the file ends at byte %d, before the storage's 8-byte element count (truncated)", key, size)
		}
		var nb [8]byte
		if _, err := r.ReadAt(nb[:], pos); err != nil {
			return nil, c.ioErr(err, "storage "+key+"'s element count")
		}
		n := binary.LittleEndian.Uint64(nb[:])
		if n != uint64(st.numel) {
			return nil, c.errf(ErrFormat, "storage %q: the file says %d elements, the pickle %d", key, n, st.numel)
		}
		pos += 8
		nbytes, ok := mulCheck(st.numel, st.dt.size(), size-pos)
		if !ok {
			return nil, c.errf(ErrFormat, "storage %q: %d %s elements need %d bytes, but the file has %s left (truncated)", key, st.numel, st.dt, mul(st.numel, st.dt.size()), plural(size-pos, "byte"))
		}
		recs[key] = rec{pos}
		pos += nbytes
	}
	if pos != size {
		return nil, c.errf(ErrFormat, "%s after the last storage", plural(size-pos, "byte"))
	}
	refs, err := collect(c, root)
	if err != nil {
		return nil, err
	}
	plans, err := checkViews(c, refs, size)
	if err != nil {
		return nil, err
	}
	load := func(tensor string, st *pstorage) ([]byte, error) {
		rc, ok := recs[st.key]
		if !ok {
			return nil, c.terrf(ErrFormat, tensor, "storage %q is not in the file's list of storages", st.key)
		}
		b := make([]byte, st.numel*st.dt.size()) // checked against the file's size above
		if _, err := r.ReadAt(b, rc.off); err != nil {
			return nil, &Error{File: c.file, Tensor: tensor, Msg: "reading storage " + st.key, Kind: ErrFormat, Err: err}
		}
		return b, nil
	}
	ts, err := materialize(c, plans, load, binary.LittleEndian)
	if err != nil {
		return nil, err
	}
	return &File{Format: "pytorch-legacy", Tensors: ts}, nil
}

package tensorfile

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// The formats a file's first bytes can show.
type format int

const (
	formatNone        format = iota // none of the others
	formatSafetensors               // an 8-byte header length, then '{'
	formatZip                       // torch.save's zip archive
	formatLegacy                    // a pickle of torch's magic number
	formatPickle                    // another Python pickle
	formatTar                       // torch.save's tar format (PyTorch < 0.4)
)

// detect chooses the format of a file of size bytes from its first bytes
// h (at most 512).
//
// A safetensors file is recognised by its structure, not by a magic number
// (it has none): the little-endian length n in bytes 0–7 fits in the file,
// byte 8 is the header's '{'. Every valid safetensors file has this,
// whatever n's bytes are (a header of 0x380 bytes starts with 0x80 0x03,
// as a pickle of protocol 3 does), so this test comes first. A torch file
// passes it only by chance (its bytes 2–7 would have to make a length
// within the file and byte 8 a '{': torch's zip and legacy files never
// do), and then read still reads it as torch if it does not parse as
// safetensors.
//
// A file that is none of the formats but whose first 8 bytes look like a
// safetensors length (below 2^40: bytes 5–7 zero, which text never has)
// is taken for a damaged safetensors file, whose reader says what is
// wrong. Anything else is no model file (formatNone).
func detect(h []byte, size int64) format {
	if looksSafetensors(h, size) {
		return formatSafetensors
	}
	switch {
	case bytes.HasPrefix(h, zipMagic) || bytes.HasPrefix(h, emptyZipMagic):
		return formatZip
	case len(h) >= 2+len(torchMagic) && h[0] == 0x80 && bytes.Equal(h[2:2+len(torchMagic)], torchMagic):
		return formatLegacy
	case len(h) >= 2 && h[0] == 0x80 && h[1] <= 5:
		return formatPickle
	case len(h) >= 262 && string(h[257:262]) == "ustar":
		return formatTar
	case len(h) >= 8 && h[5] == 0 && h[6] == 0 && h[7] == 0:
		return formatSafetensors
	}
	return formatNone
}

// looksSafetensors reports whether the file has a safetensors header's
// frame: a length that fits in the file and '{' at byte 8.
func looksSafetensors(h []byte, size int64) bool {
	if len(h) < 10 || h[8] != '{' {
		return false
	}
	n := binary.LittleEndian.Uint64(h)
	return n >= 2 && n <= uint64(size-8)
}

// looksLike says what a file that is no model file seems to be, for the
// error: "empty", "JSON", "text", "gzip-compressed data", ….
func looksLike(h []byte, size int64) string {
	if size == 0 {
		return "it is empty: the file has 0 bytes"
	}
	t := bytes.TrimLeft(h, " \t\r\n\ufeff")
	switch {
	case bytes.HasPrefix(h, []byte{0x1f, 0x8b}):
		return "it looks like gzip-compressed data"
	case bytes.HasPrefix(h, []byte("\x7fELF")):
		return "it looks like an executable (ELF)"
	case bytes.HasPrefix(h, []byte("\x93NUMPY")):
		return "it looks like a NumPy .npy file"
	case bytes.HasPrefix(h, []byte("\x89HDF")):
		return "it looks like an HDF5 file (Keras?)"
	case bytes.HasPrefix(h, []byte("\x08")) && bytes.Contains(h, []byte("onnx")):
		return "it looks like an ONNX model"
	case isText(h) && len(t) > 0 && (t[0] == '{' || t[0] == '['):
		return "it looks like JSON"
	case isText(h) && (bytes.HasPrefix(t, []byte("<")) || bytes.HasPrefix(t, []byte("<!"))):
		return "it looks like HTML or XML"
	case isText(h):
		return "it looks like text"
	}
	return plural(size, "byte") + " of binary data"
}

// isText reports whether b is UTF-8 without control characters other than
// white space (an incomplete last rune, cut at the window's end, allowed).
func isText(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			return len(b) < utf8.UTFMax && !utf8.FullRune(b)
		}
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' || r == 0x7f {
			return false
		}
		b = b[n:]
	}
	return true
}

// Package tensorfile reads named tensors from model files that may come from
// anyone: safetensors files and the two formats of PyTorch's torch.save. It
// is the lowest layer of the model importer: it turns a file into named
// float64 tensors and knows nothing about what the names mean.
//
// # Formats
//
// Open and Read choose the format from the file's first bytes:
//
//   - "PK\x03\x04" (a zip archive): the torch.save format of PyTorch ≥ 1.6,
//     Format "pytorch". The archive holds <prefix>/data.pkl, a pickle of the
//     object, and one record <prefix>/data/<key> of raw storage bytes per
//     storage. The prefix varies (the file's stem, or "archive"); the single
//     entry named <prefix>/data.pkl is used. A <prefix>/byteorder record of
//     "big" makes the storages be read big-endian. TorchScript archives
//     (torch.jit.save) are refused.
//   - a pickle of torch's magic number 0x1950a86a20f9469cfc6c: the legacy
//     format of torch.save(..., _use_new_zipfile_serialization=False),
//     Format "pytorch-legacy": the magic number, the protocol version (1001),
//     a dict of system information, the object's pickle, the pickle of the
//     list of storage keys, then each storage as an 8-byte little-endian
//     element count and its little-endian bytes.
//   - safetensors, Format "safetensors": an 8-byte little-endian header
//     length N, N bytes of JSON naming each tensor's dtype, shape and
//     data_offsets, then the data buffer. It has no magic number: a file is
//     safetensors when N fits in the file and byte 8 is '{' (checked first,
//     since N's first byte may be a pickle's 0x80), or, damaged, when bytes
//     5–7 are zero (a length below 2^40).
//   - anything else is "not a model file", with what it looks like (empty,
//     text, JSON, binary data, …).
//
// # What is accepted
//
// safetensors headers are checked as the official implementation checks them
// and a little more: the JSON is a well-formed UTF-8 object without duplicate
// keys, every dtype is known, data_offsets agree with dtype and shape, and the
// tensors cover the data buffer exactly, without overlaps, holes or trailing
// bytes. Unknown fields inside a tensor's entry are ignored, as the official
// implementation ignores them.
//
// A PyTorch file must hold a dict (normally the OrderedDict of
// model.state_dict()). Its tensor values are returned under their keys. A
// dict inside the dict, such as a training checkpoint
// {"model": state_dict, "optimizer": ..., "epoch": 3}, is flattened with
// dotted names ("model.lstm.weight_ih_l0"), and so are lists and tuples
// (by index) and integer keys (in decimal); values that are not tensors
// (numbers, strings, None) are ignored. A file that holds a single tensor, a
// list, or a whole pickled model (torch.save(model)) is refused with an error
// that says so.
//
// Tensors may be views: an offset into a storage, any non-negative strides
// (a transposed tensor, an expanded one) and several tensors sharing one
// storage. They are read through their strides with bounds checks; the
// returned Data is always contiguous and row-major. Because views can
// repeat a storage's bytes (stride 0, or many views of one storage), the
// tensors of a PyTorch file may have at most 8 elements per byte of the
// file, plus 2^20, besides the limits of Options.
//
// Every dtype is converted exactly: F64, F32, F16 and BF16 (subnormals,
// infinities and NaN payloads included), and the integer dtypes I64, I32,
// I16, I8, U64, U32, U16, U8 and BOOL where |v| ≤ 2^53; a larger integer, or
// a BOOL byte other than 0 and 1, is an error, never a rounded value.
//
// # What is not supported
//
// Refused with ErrUnsupported, each with a message that says what it is:
// whole pickled models and other objects (any global outside the
// allow-list), TorchScript archives, torch.save's pre-0.4 tar format,
// sparse, quantized, complex, meta and other special tensors, numpy
// arrays, storage views of the legacy format (view_metadata, written by
// very old PyTorch), safetensors dtypes other than those above (F8_E4M3,
// F8_E5M2, ...), dict keys other than str, int, float, bool and None on the
// way to a tensor, pickle opcodes torch.save does not emit for a state_dict
// (protocol-0 persistent ids, sets, NEWOBJ_EX, out-of-band buffers, ...),
// and zip compression methods other than store and deflate.
//
// # Safety
//
// The input is untrusted. Reading never panics, never executes anything,
// and never allocates from a size read from the file before that size has
// been checked against the real size of the file (or of the zip entry) and
// against the limits of Options. Every error is an *Error that names the
// file, the problem and, where one is involved, the tensor.
//
// # Why there is no pickle dependency
//
// PyTorch files are Python pickles. A general pickle library either executes
// the pickle's instructions (calls arbitrary callables, which is how a
// malicious .pt file runs code) or constructs arbitrary objects, and in
// either case bounds nothing. This package has its own small pickle reader
// instead: a stack machine over the opcodes torch.save emits, with an
// allow-list of globals (collections.OrderedDict,
// torch._utils._rebuild_tensor_v2, _rebuild_tensor, _rebuild_parameter and
// _rebuild_parameter_with_state, torch._tensor._rebuild_from_type_v2 of
// plain tensors and parameters, torch's typed storages and dtypes,
// torch.Size), whose only
// "calls" build the few values a state_dict needs, and whose stack, memo,
// nesting and object count are bounded. Anything else is refused with the
// name of the global. It is a few hundred lines and needs nothing outside
// the standard library.
package tensorfile

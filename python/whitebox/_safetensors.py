"""A .safetensors writer: the tensors of a state_dict as the file format
says (an 8-byte little-endian header length, a JSON header, the bytes)."""

import json
import struct

import torch

_DTYPES = {torch.float32: "F32", torch.float64: "F64"}


def write(path, tensors, metadata=None):
    """Writes the float32/float64 tensors (a name -> tensor dict) to path."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        if t.dtype not in _DTYPES:
            raise TypeError("tensor %s is %s: whitebox reads float32 and float64 weights" % (name, t.dtype))
        b = t.numpy().tobytes()
        header[name] = {"dtype": _DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


_READ_DTYPES = {"F32": torch.float32, "F64": torch.float64}


def read(path):
    """The tensors (F32, F64) and the metadata of a .safetensors file."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, v in header.items():
        if v["dtype"] not in _READ_DTYPES:
            raise TypeError("tensor %s is %s: read here are F32 and F64" % (name, v["dtype"]))
        a, b = v["data_offsets"]
        tensors[name] = torch.frombuffer(bytearray(data[a:b]), dtype=_READ_DTYPES[v["dtype"]]).reshape(v["shape"]).clone()
    return tensors, meta

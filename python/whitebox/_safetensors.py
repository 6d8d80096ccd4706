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

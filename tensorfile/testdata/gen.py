#!/usr/bin/python3
"""Writes the fixtures of package tensorfile's tests, and expected.json.

Run from anywhere with a python3 that has torch (Debian's python3-torch is
/usr/bin/python3):  /usr/bin/python3 tensorfile/testdata/gen.py
numpy and the safetensors package are not needed: safetensors files are
written here from their specification (8-byte length, JSON, bytes).
"""
import json
import os
import struct
from collections import OrderedDict

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(1)

DTYPES = {
    torch.float64: ("F64", "<d", 8), torch.float32: ("F32", "<f", 4),
    torch.float16: ("F16", "<e", 2), torch.bfloat16: ("BF16", None, 2),
    torch.int64: ("I64", "<q", 8), torch.int32: ("I32", "<i", 4),
    torch.int16: ("I16", "<h", 2), torch.int8: ("I8", "<b", 1),
    torch.uint8: ("U8", "<B", 1), torch.bool: ("BOOL", "<?", 1),
}

expected = {}


def values(t):
    """The tensor's values, row-major, as repr strings of float64."""
    flat = t.detach().reshape(-1)
    if t.dtype == torch.bool:
        return [repr(float(bool(v))) for v in flat.tolist()]
    if t.dtype.is_floating_point:
        return [repr(float(v)) for v in flat.to(torch.float64).tolist()]
    return [repr(float(v)) for v in flat.tolist()]


def record(fname, fmt, tensors, metadata=None):
    entry = {"format": fmt, "tensors": {}}
    for name, t in tensors.items():
        entry["tensors"][name] = {
            "dtype": DTYPES[t.dtype][0],
            "shape": list(t.shape),
            "values": values(t),
        }
    if metadata is not None:
        entry["metadata"] = metadata
    expected[fname] = entry


def tensor_bytes(t):
    t = t.detach().contiguous().reshape(-1)
    name, fmt, size = DTYPES[t.dtype]
    if name == "BF16":
        out = b""
        for v in t.to(torch.float32).tolist():
            bits = struct.unpack("<I", struct.pack("<f", v))[0]
            out += struct.pack("<H", bits >> 16)
        return out
    return b"".join(struct.pack(fmt, v) for v in t.tolist())


def write_safetensors(fname, tensors, metadata=None):
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    data = b""
    for name, t in tensors.items():
        b = tensor_bytes(t)
        header[name] = {"dtype": DTYPES[t.dtype][0], "shape": list(t.shape),
                        "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # pad as the official writer does
    with open(os.path.join(HERE, fname), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)
    record(fname, "safetensors", tensors, metadata)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(5, 3)
        self.lstm = torch.nn.LSTM(3, 4, batch_first=True)
        self.linear = torch.nn.Linear(4, 2)


def save(fname, obj, legacy=False, fmt=None, tensors=None):
    torch.save(obj, os.path.join(HERE, fname), _use_new_zipfile_serialization=not legacy)
    if tensors is not None:
        record(fname, fmt or ("pytorch-legacy" if legacy else "pytorch"), tensors)


net = Net()
sd32 = net.state_dict()
save("lstm_f32.pt", sd32, tensors=sd32)
sd64 = net.double().state_dict()
save("lstm_f64.pt", sd64, tensors=sd64)
save("lstm_legacy.pt", sd64, legacy=True, tensors=sd64)
# Other pickle protocols: 1 (MARK-built tuples, I01 booleans) and 4
# (FRAME, MEMOIZE, SHORT_BINUNICODE, STACK_GLOBAL).
for proto in (1, 4):
    fname = "lstm_p%d.pt" % proto
    torch.save(sd64, os.path.join(HERE, fname), pickle_protocol=proto)
    record(fname, "pytorch", sd64)
net.float()

# Views: a transposed tensor, offsets into a storage, a column (stride 4),
# an expanded tensor (stride 0), two tensors sharing one storage, and the
# other dtypes.
base = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 8
views = {
    "base": base,
    "transposed": base.t(),
    "row": base[1],
    "column": base[:, 2],
    "block": base[1:, 1:3],
    "flat_shared": base.view(12),
    "expanded": torch.tensor([1.5, -2.0]).expand(3, 2),
    "scalar": torch.tensor(3.25, dtype=torch.float64),
    "empty": torch.zeros(0, 3),
    "half": torch.tensor([1.0, -0.5, 65504.0, 6e-8, float("inf")], dtype=torch.float16),
    "bfloat": torch.tensor([1.0, -3.0e38, 1e-40, float("-inf")], dtype=torch.bfloat16),
    "long": torch.tensor([[-(2**53), 2**53], [7, -1]], dtype=torch.int64),
    "int": torch.tensor([-2**31, 2**31 - 1], dtype=torch.int32),
    "short": torch.tensor([-3, 4], dtype=torch.int16),
    "char": torch.tensor([-128, 127], dtype=torch.int8),
    "byte": torch.tensor([0, 255], dtype=torch.uint8),
    "bool": torch.tensor([True, False, True]),
}
assert views["transposed"].storage().data_ptr() == base.storage().data_ptr()
save("views.pt", views, tensors=views)
save("views_legacy.pt", views, legacy=True, tensors=views)

# A training checkpoint: nested dicts are flattened with dotted names.
small = OrderedDict([("linear.weight", net.linear.weight.detach()), ("linear.bias", net.linear.bias.detach())])
ckpt = {"model": small, "epoch": 3, "history": [0.5, torch.tensor([1.0, 2.0])]}
flat = OrderedDict([("model.linear.weight", small["linear.weight"]), ("model.linear.bias", small["linear.bias"]),
                    ("history.1", ckpt["history"][1])])
save("checkpoint.pt", ckpt, tensors=flat)

# A whole pickled model: refused.
torch.save(net, os.path.join(HERE, "model.pt"))

# safetensors, the LSTM state_dict in four float dtypes.
meta = {"format": "pt", "note": "tensorfile fixture"}
for dt in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
    name = DTYPES[dt][0].lower()
    write_safetensors("lstm_%s.safetensors" % name, OrderedDict((k, v.to(dt)) for k, v in sd32.items()), meta)

# Special values: zeros, subnormals, extremes, infinities, NaN.
special = [0.0, -0.0, 1.0, -2.5, 6e-8, 5.960464477539063e-08, 6.1e-05, 65504.0, float("inf"), float("-inf"), float("nan")]
write_safetensors("special.safetensors", OrderedDict([
    ("f16", torch.tensor(special, dtype=torch.float16)),
    ("bf16", torch.tensor(special + [1e-40, 3e38], dtype=torch.bfloat16)),
    ("f32", torch.tensor(special + [1e-45], dtype=torch.float32)),
    ("i64", torch.tensor([2**53, -(2**53), 0], dtype=torch.int64)),
    ("u8", torch.tensor([0, 1, 255], dtype=torch.uint8)),
    ("bool", torch.tensor([False, True])),
    ("scalar", torch.tensor(1.0, dtype=torch.float64)),
    ("empty", torch.zeros(2, 0, dtype=torch.float32)),
]))

with open(os.path.join(HERE, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
    f.write("\n")

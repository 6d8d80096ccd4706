#!/usr/bin/env python3
"""Reference fixtures for padded inputs (testdata/padding/): models trained
with pack_padded_sequence, run on padded batches with their true lengths.

Run from the repository root (torch only; about a second; deterministic:
run it twice, the same bytes):

    /usr/bin/python3 model/testdata/padding/gen_padding.py

The models
----------
Embedding(20, 5, padding_idx=0) -> nn.LSTM(5, 6) -> h_n -> Linear(., 3),
float32, whose forward packs the embedded batch with its lengths:

    e = self.embedding(ids)
    packed = pack_padded_sequence(e, lengths, batch_first=..., enforce_sorted=False)
    _, (h_n, _) = self.lstm(packed)
    return self.fc(h_n[-1])                            # uni
    return self.fc(torch.cat((h_n[-2], h_n[-1]), 1))   # bi (whitebox's hn)

* uni1_seqfirst: one layer, one direction, batch_first=False: ids are
  (T, B), the layout changes nothing in the state_dict;
* bi2: two layers, bidirectional, batch_first=True; its .safetensors names
  the pad id in its metadata ("whitebox.pad": "0"). A packed bidirectional
  LSTM's backward direction starts at the last real token, not at the last
  pad.

Each is saved as torch.save(model.state_dict()) (<name>.pt) and as
<name>.safetensors (F32).

The inputs: one padded batch of T = 7 (pad id 0, trailing), lengths 3, 7,
3, 1, 5; the third has a 0 inside (position 1), which pack_padded_sequence
keeps (a token whose embedding row is zero).

References (float64: the float32 weights upcast, model.double()), in
<name>.json, per row of the batch, from ONE call on the whole padded batch
with its lengths, as a user's own packed model computes them:

* logits: the packed model's; logits_unpacked: the same model run over the
  whole padded row (no packing; what a run without -pad computes);
* class: the predicted class (another one on row 1);
* saliency (d logit_c / d e, T x E: the pads' rows are exactly zero, as the
  packed model never reads them), gxi (e * saliency), ig (Gauss-Legendre, 50
  nodes, float64 weights, zero baseline, on the padded batch) with
  ig_delta, occlusion (f_c(e) - f_c(e with row t set to zero), per token;
  0 at the pads). Every row of the batch is attributed together, as Captum
  attributes a batch.

Checked here: the packed logits equal the model run on the unpadded ids
alone (1e-12), and differ from the unpacked ones on every padded row (the
defect -pad removes); the pads' scores are exactly 0.

<name>.verify.jsonl: lines {"ids": [...], "length": L, "logits": [...]}
written by scripts/record_logits.py (pad=0): the float32 model's logits on
padded inputs, as a user records them (`-verify` with `-pad 0`).
"""

import importlib.util
import json
import os
import struct

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
IG_STEPS = 50
PAD = 0

IDS = [
    [3, 14, 15, 0, 0, 0, 0],
    [9, 2, 6, 5, 11, 8, 7],
    [4, 0, 13, 0, 0, 0, 0],
    [17, 0, 0, 0, 0, 0, 0],
    [12, 19, 1, 10, 3, 0, 0],
]
OTHER_CLASS_ROW = 1
VERIFY_INPUTS = [[3, 14, 15, 0, 0], [9, 2, 6, 5, 11, 8, 7], [4, 0, 13, 0, 0], [17, 0, 0, 0], [5, 9]]


def length(ids):
    n = len(ids)
    while n > 0 and ids[n - 1] == PAD:
        n -= 1
    return n


class Packed(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s
        self.embedding = nn.Embedding(20, 5, padding_idx=PAD)
        self.lstm = nn.LSTM(5, 6, num_layers=s["layers"], bidirectional=s["bidirectional"],
                            batch_first=s["batch_first"])
        self.fc = nn.Linear(6 * (2 if s["bidirectional"] else 1), 3)

    def from_embedded(self, e, lengths):  # e: (B, T, E), whatever the layout
        if not self.s["batch_first"]:
            e = e.transpose(0, 1)
        packed = pack_padded_sequence(e, lengths, batch_first=self.s["batch_first"], enforce_sorted=False)
        _, (h_n, _) = self.lstm(packed)
        v = torch.cat((h_n[-2], h_n[-1]), dim=1) if self.s["bidirectional"] else h_n[-1]
        return self.fc(v)

    def forward(self, ids, lengths):  # ids: (B, T) batch_first, (T, B) otherwise
        if not self.s["batch_first"]:
            ids = ids.t()
        return self.from_embedded(self.embedding(ids), lengths)


SPECS = [
    {"name": "uni1_seqfirst", "layers": 1, "bidirectional": False, "batch_first": False, "metadata": False, "seed": 1},
    {"name": "bi2", "layers": 2, "bidirectional": True, "batch_first": True, "metadata": True, "seed": 2},
]


def make_model(s):
    torch.manual_seed(2000 + s["seed"])
    m = Packed(s).float()
    with torch.no_grad():
        for _, p in m.lstm.named_parameters():
            p.mul_(2.0)  # livelier gates than PyTorch's default init
    m.eval()
    return m


def write_safetensors(path, tensors, metadata):
    header, blobs, off = {}, [], 0
    for k, t in tensors.items():
        b = t.detach().contiguous().numpy().astype("<f4").tobytes()
        header[k] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def fl(a):
    return [float(x) for x in np.asarray(a, dtype=np.float64).reshape(-1)]


def rows(a):
    return [fl(r) for r in np.asarray(a)]


def refs(m64, ids):
    """float64 references for the padded batch ids (B x T), row by row."""
    B, T = len(ids), len(ids[0])
    lengths = torch.tensor([length(r) for r in ids], dtype=torch.long)
    e = m64.embedding(torch.tensor(ids)).detach()
    with torch.no_grad():
        y = m64.from_embedded(e, lengths)
        y_all = m64.from_embedded(e, torch.full((B,), T, dtype=torch.long))
        y0 = m64.from_embedded(torch.zeros_like(e), lengths)
        for b in range(B):  # packing is running the unpadded ids alone
            L = int(lengths[b])
            alone = m64.from_embedded(e[b:b + 1, :L], torch.tensor([L]))[0]
            assert torch.allclose(alone, y[b], rtol=0, atol=1e-12), (b, alone, y[b])
            if L < T:  # the pads change the unpacked logits: the defect
                assert (y_all[b] - y[b]).abs().max() > 1e-3, b
    cls = torch.argmax(y, dim=1)
    cls[OTHER_CLASS_ROW] = (cls[OTHER_CLASS_ROW] + 1) % y.shape[1]
    pick = lambda out: out.gather(1, cls[:, None]).sum()

    x = e.clone().requires_grad_(True)
    (sal,) = torch.autograd.grad(pick(m64.from_embedded(x, lengths)), x)
    nodes, w = np.polynomial.legendre.leggauss(IG_STEPS)
    total = torch.zeros_like(e)
    for a, wk in zip((nodes + 1) / 2, w / 2):
        x = (float(a) * e).requires_grad_(True)
        (g,) = torch.autograd.grad(pick(m64.from_embedded(x, lengths)), x)
        total += float(wk) * g
    ig = e * total
    with torch.no_grad():
        occ = torch.zeros(B, T, dtype=torch.float64)
        yc = y.gather(1, cls[:, None])[:, 0]
        for t in range(T):
            z = e.clone()
            z[:, t] = 0
            occ[:, t] = yc - m64.from_embedded(z, lengths).gather(1, cls[:, None])[:, 0]
    cases = []
    for b in range(B):
        L, c = int(lengths[b]), int(cls[b])
        for a in (sal, ig):
            assert torch.count_nonzero(a[b, L:]) == 0, b
        assert torch.count_nonzero(occ[b, L:]) == 0, b
        delta = float(ig[b].sum() - (y[b, c] - y0[b, c]))
        assert abs(delta) < 1e-2 * max(1.0, abs(float(y[b, c] - y0[b, c]))), delta
        cases.append({"ids": ids[b], "length": L, "logits": fl(y[b]), "logits_unpacked": fl(y_all[b]),
                      "baseline_logits": fl(y0[b]), "predicted": int(torch.argmax(y[b])), "class": c,
                      "saliency": rows(sal[b]), "gxi": rows(e[b] * sal[b]), "ig": rows(ig[b]), "ig_delta": delta,
                      "occlusion": fl(occ[b])})
    return cases


def record_logits_module():
    spec = importlib.util.spec_from_file_location("record_logits", os.path.join(ROOT, "scripts", "record_logits.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build(s, record_logits):
    m = make_model(s)
    sd = {k: v.detach().clone() for k, v in m.state_dict().items()}
    name = s["name"]
    pt, st = name + ".pt", name + ".safetensors"
    torch.save(m.state_dict(), os.path.join(HERE, pt))
    meta = {"format": "pt"}
    if s["metadata"]:
        meta["whitebox.pad"] = str(PAD)
    write_safetensors(os.path.join(HERE, st), sd, meta)
    m64 = make_model(s)
    m64.load_state_dict(sd)
    m64 = m64.double()
    j = {k: s[k] for k in ("name", "layers", "bidirectional", "batch_first")}
    j.update(files=[pt, st], pad=PAD, pad_in_metadata=s["metadata"], ig_steps=IG_STEPS, cases=refs(m64, IDS))
    write(os.path.join(HERE, name + ".json"), json.dumps(j, separators=(",", ":"), allow_nan=False) + "\n")
    # The float32 model's logits, as a user records them: the script's
    # own forward for ids of the model's layout.
    if s["batch_first"]:
        forward = None
    else:
        forward = lambda model, ids, lengths: model(ids.t(), lengths)
    path = os.path.join(HERE, name + ".verify.jsonl")
    record_logits.record_logits(m, VERIFY_INPUTS, path, forward=forward, pad=PAD)
    with open(path) as f:
        print("wrote %s (%d bytes)" % (name + ".verify.jsonl", len(f.read())), flush=True)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    print("wrote %s (%d bytes)" % (os.path.basename(path), len(text)), flush=True)


def main():
    rl = record_logits_module()
    for s in SPECS:
        build(s, rl)


if __name__ == "__main__":
    main()

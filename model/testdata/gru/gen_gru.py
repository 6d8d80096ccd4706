#!/usr/bin/env python3
"""Reference fixtures for GRU models (testdata/gru/).

Writes, next to this file, small float32 PyTorch GRU classifiers, saved as a
user saves them -- torch.save(model.state_dict()) (.pt) and/or a
.safetensors file (F32) -- and for each model

* <name>.json: the model's description and float64 references (the float32
  weights upcast, model.double()) on a few inputs (T from 1 to 12);
* <name>.verify.jsonl: lines {"ids": [...], "logits": [...]}, the logits of
  the FLOAT32 model as a user would record them (for `-head auto -verify`).

Run from the repository root (torch only):

    /usr/bin/python3 model/testdata/gru/gen_gru.py

It is deterministic: run twice, the same bytes.

The models: Embedding(V, E) -> nn.GRU(E, H, num_layers=L, bidirectional=bi,
batch_first=True, bias=...) -> head -> classifier, with output, h_n =
gru(e), the heads and classifiers of gen_heads.py (hn, hn-bf, last, mean,
max; fc, or fc1/fc2 or classifier.0/.2 with ReLU or Tanh between).

References (float64, on the embedded input e = Embedding(ids), T x E), as
gen_heads.py: logits f(e), baseline_logits f(0); saliency d f_c / d e; gxi
e * saliency; ig Gauss-Legendre with 50 nodes (numpy leggauss on [0, 1],
float64 weights), zero baseline, and its delta; occlusion f_c(e) - f_c(e
with row t zero). c is the predicted class, except in one case per model.

DeepLIFT ("deeplift" in <name>.json: entries {case, ids, baseline_id,
class, reference_logits, features}; the logits are the case's): the
definition of package cell (stacked_deeplift.go, stacked_gru_deeplift.go),
written independently, as testdata/gen_deeplift.py does for the LSTM. The
GRU is unrolled by hand in float64 (PyTorch's equations, gates r, z, n of
weight_ih/weight_hh, h' = (1 - z) * n + z * h) and checked against nn.GRU
(to 1e-12); the reference x0 runs first, then x with torch.autograd.Functions
in place of every nonlinearity and product, each holding its counterpart on
x0:

* Rescale at r = sigmoid, z = sigmoid, n = tanh and the classifier's hidden
  ReLU/Tanh: backward multiplies by (f(v) - f(v0)) / (v - v0), or by
  f'((v + v0)/2) where |v - v0| < 1e-6;
* Product at r * (W_hn h + b_hn), (1 - z) * n and z * h: a gets the factor
  b0 + (b - b0)/2, b the factor a0 + (a - a0)/2;
* MaxPool for the max head (gen_deeplift.py's split).

Linear maps, sums and the other heads are ordinary autograd. Scores are
(x - x0) * multipliers; the script checks that they sum to f_c(x) - f_c(x0)
(to 1e-10). References: the zero reference on every case, the embedding row
of token 0 on DEEPLIFT_ROW_CASES, and DEEPLIFT_EXTRA (token 0 at both ends,
so the first step of each direction has v == v0: the midpoint rule).

ONNX (onnx/<name>.onnx and onnx/<name>.json, for the models of ONNX_SPECS):
the float32 model with the embedding, ids -> logits, exported as

    torch.onnx.export(IdsNet(model), ids, path, input_names=["ids"],
                      output_names=["logits"], dynamic_axes={"ids": {1: "T"}},
                      opset_version=N)

(ONNX GRU nodes, linear_before_reset = 1, gates z, r, h), and
onnx/<name>.json: the export's description (as gen_onnx.py's, "source" the
model's <name>.json, whose references apply) and per case the float64
logits and "logits_f32", the float32 model's.

The benchmark model (bench_gru_h256, written to ../, beside gen.py's
bench_h256, which it mirrors): Embedding(200, 100) -> nn.GRU(100, 256) ->
Linear(256, 5) on h_n[-1], F32 weights initialised as gen.py initialises
its models (numpy RandomState(BENCH["seed"]): the embedding N(0, 1), every
other weight and bias 2 * U(-1/sqrt(H), 1/sqrt(H))), in
../bench_gru_h256.safetensors, with ../bench_gru_h256.json: its
description in gen.py's schema (prefixes, sizes, "lstm_bias" for the GRU's
biases, "kind": "gru") and no cases -- bench/torch/bench_ig.py checks
whitebox against PyTorch on it at bench time (BenchmarkImportedIG's model).
"""

import json
import os
import struct

import numpy as np
import torch
from torch import nn

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
IG_STEPS = 50


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


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", None)
    body = data[8 + n:]
    out = {}
    for k, v in header.items():
        a, b = v["data_offsets"]
        out[k] = torch.from_numpy(np.frombuffer(body[a:b], dtype="<f4").astype(np.float32)).reshape(v["shape"])
    return out, meta


class GRUNet(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s
        dirs = 2 if s["bidirectional"] else 1
        D = s["hidden"] * dirs
        self.embedding = nn.Embedding(s["vocab"], s["input"])
        self.gru = nn.GRU(s["input"], s["hidden"], num_layers=s["layers"], bidirectional=s["bidirectional"],
                          batch_first=True, bias=s["bias"])
        act = {"relu": nn.ReLU, "tanh": nn.Tanh}.get(s["act"])
        if act is None:
            self.fc = nn.Linear(D, s["classes"])
        elif s["style"] == "fc":
            self.fc1 = nn.Linear(D, s["units"])
            self.act = act()
            self.fc2 = nn.Linear(s["units"], s["classes"])
        else:
            self.classifier = nn.Sequential(nn.Linear(D, s["units"]), act(), nn.Linear(s["units"], s["classes"]))

    def forward(self, e):  # e: (B, T, E) -> logits (B, C)
        output, h_n = self.gru(e)
        head, bi = self.s["head"], self.s["bidirectional"]
        if head == "hn":
            v = torch.cat((h_n[-2], h_n[-1]), dim=1) if bi else h_n[-1]
        elif head == "hn-bf":
            v = torch.cat((h_n[-1], h_n[-2]), dim=1) if bi else h_n[-1]
        elif head == "last":
            v = output[:, -1, :]
        elif head == "mean":
            v = output.mean(dim=1)
        elif head == "max":
            v = output.max(dim=1).values
        else:
            raise ValueError(head)
        if self.s["act"] is None:
            return self.fc(v)
        if self.s["style"] == "fc":
            return self.fc2(self.act(self.fc1(v)))
        return self.classifier(v)


def spec(name, layers, bi, head, act=None, style=None, metadata=False, seed=0, formats=("pt",), bias=True):
    return {"name": name, "vocab": 20, "input": 5, "hidden": 6, "layers": layers, "bidirectional": bi,
            "classes": 3, "units": 5 if act else 0, "head": head, "act": act, "style": style,
            "metadata": metadata, "seed": seed, "formats": formats, "bias": bias}


SPECS = [
    spec("gru_hn_uni1", 1, False, "hn", seed=1, formats=("pt", "safetensors")),
    spec("gru_hn_bi2_fc12tanh", 2, True, "hn", "tanh", "fc", seed=2),
    spec("gru_hnbf_bi1", 1, True, "hn-bf", seed=3, formats=("safetensors",)),
    spec("gru_last_uni2_nobias", 2, False, "last", seed=4, bias=False),
    spec("gru_mean_bi1_seqrelu", 1, True, "mean", "relu", "seq", metadata=True, seed=5, formats=("safetensors",)),
    spec("gru_max_bi2", 2, True, "max", seed=6, formats=("pt",)),
]

INPUTS = [[3], [7, 1, 4, 1], [2, 2, 2, 9, 15, 0, 5], [19, 4, 8, 8, 1, 12, 6, 3, 0, 11, 17, 2]]
OTHER_CLASS_CASE = 2
VERIFY_INPUTS = [[1], [5, 9], [0, 3, 3, 7, 12], [18, 2, 6, 4, 4, 10, 1, 13], [11, 15, 16, 2, 0, 9, 9, 7, 5, 3, 14]]


DEEPLIFT_ROW_CASES = [1, 2]
DEEPLIFT_EXTRA = [0, 7, 1, 0]
DL_EPS = 1e-6


def sigmoid_prime(v):
    s = torch.sigmoid(v)
    return s * (1 - s)


def tanh_prime(v):
    t = torch.tanh(v)
    return 1 - t * t


FUNCS = {"sigmoid": (torch.sigmoid, sigmoid_prime), "tanh": (torch.tanh, tanh_prime),
         "relu": (torch.relu, lambda v: (v > 0).to(v.dtype))}


class Rescale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, v, v0, kind):
        f, _ = FUNCS[kind]
        y, y0 = f(v), f(v0)
        ctx.save_for_backward(v, v0, y, y0)
        ctx.kind = kind
        return y

    @staticmethod
    def backward(ctx, g):
        v, v0, y, y0 = ctx.saved_tensors
        dv = v - v0
        near = dv.abs() < DL_EPS
        safe = torch.where(near, torch.ones_like(dv), dv)
        return g * torch.where(near, FUNCS[ctx.kind][1]((v + v0) / 2), (y - y0) / safe), None, None


class Product(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, a0, b0):
        ctx.save_for_backward(a, b, a0, b0)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b, a0, b0 = ctx.saved_tensors
        return g * (b0 + (b - b0) / 2), g * (a0 + (a - a0) / 2), None, None


def first_argmax(seq):
    T, D = seq.shape
    arg = [0] * D
    for j in range(D):
        best = seq[0, j]
        for t in range(1, T):
            if seq[t, j] > best:
                best, arg[j] = seq[t, j], t
    return arg


class MaxPool(torch.autograd.Function):
    @staticmethod
    def forward(ctx, seq, seq0):
        a, b = first_argmax(seq), first_argmax(seq0)
        ctx.save_for_backward(seq, seq0)
        ctx.ab = (a, b)
        return torch.stack([seq[a[j], j] for j in range(seq.shape[1])])

    @staticmethod
    def backward(ctx, g):
        seq, seq0 = ctx.saved_tensors
        a, b = ctx.ab
        out = torch.zeros_like(seq)
        for j in range(seq.shape[1]):
            if a[j] == b[j]:
                out[a[j], j] = g[j]
                continue
            gap = seq[a[j], j] - seq[b[j], j]
            gap0 = seq0[b[j], j] - seq0[a[j], j]
            lam = gap / (gap + gap0)
            out[a[j], j] = lam * g[j]
            out[b[j], j] = (1 - lam) * g[j]
        return out, None


def unrolled(m64, s, x, ref=None):
    """The float64 model m64 on x (T x E), the GRU unrolled by hand; with
    ref (the trace of x0), DeepLIFT's Functions in place of the
    nonlinearities and products. Returns the logits and the trace."""
    tr = {}

    def act(name, v, kind):
        tr[name] = v.detach()
        return FUNCS[kind][0](v) if ref is None else Rescale.apply(v, ref[name], kind)

    def prod(name, a, b):
        tr[name + ".a"], tr[name + ".b"] = a.detach(), b.detach()
        return a * b if ref is None else Product.apply(a, b, ref[name + ".a"], ref[name + ".b"])

    T, H, L = x.shape[0], s["hidden"], s["layers"]
    dirs = 2 if s["bidirectional"] else 1
    P = dict(m64.gru.named_parameters())
    inp = [x[t] for t in range(T)]
    finals = {}
    for k in range(L):
        outs = [[None] * T for _ in range(dirs)]
        for d in range(dirs):
            suf = "_l%d%s" % (k, "_reverse" if d else "")
            wih, whh = P["weight_ih" + suf], P["weight_hh" + suf]
            bih = P["bias_ih" + suf] if s["bias"] else torch.zeros(3 * H, dtype=torch.float64)
            bhh = P["bias_hh" + suf] if s["bias"] else torch.zeros(3 * H, dtype=torch.float64)
            h = torch.zeros(H, dtype=torch.float64)
            for t in (range(T - 1, -1, -1) if d else range(T)):
                gi, gh = wih @ inp[t] + bih, whh @ h + bhh
                n = "%d.%d.%d." % (k, d, t)
                r = act(n + "r", gi[:H] + gh[:H], "sigmoid")
                z = act(n + "z", gi[H:2 * H] + gh[H:2 * H], "sigmoid")
                nv = act(n + "n", gi[2 * H:] + prod(n + "rq", r, gh[2 * H:]), "tanh")
                h = prod(n + "zn", 1 - z, nv) + prod(n + "zh", z, h)
                outs[d][t] = h
            finals[d] = h
        inp = [torch.cat([outs[d][t] for d in range(dirs)]) for t in range(T)]
    seq = torch.stack(inp)
    head = s["head"]
    if head in ("hn", "hn-bf"):
        parts = [finals[d] for d in range(dirs)]
        v = torch.cat(parts[::-1] if head == "hn-bf" else parts)
    elif head == "last":
        v = seq[T - 1]
    elif head == "mean":
        v = seq.mean(dim=0)
    else:
        tr["max"] = seq.detach()
        v = seq.max(dim=0).values if ref is None else MaxPool.apply(seq, ref["max"])
    if s["act"] is None:
        return m64.fc.weight @ v + m64.fc.bias, tr
    l1, l2 = (m64.fc1, m64.fc2) if s["style"] == "fc" else (m64.classifier[0], m64.classifier[2])
    return l2.weight @ act("hidden", l1.weight @ v + l1.bias, s["act"]) + l2.bias, tr


def deeplift_refs(m64, s, e, e0, c):
    """DeepLIFT's feature scores of class c for input e against e0."""
    y0, ref = unrolled(m64, s, e0)
    xg = e.clone().requires_grad_(True)
    y, _ = unrolled(m64, s, xg, ref)
    with torch.no_grad():
        want, want0 = m64(e[None])[0], m64(e0[None])[0]
    assert torch.allclose(y.detach(), want, rtol=0, atol=1e-12), (y, want)
    assert torch.allclose(y0, want0, rtol=0, atol=1e-12), (y0, want0)
    (mult,) = torch.autograd.grad(y[c], xg)
    feats = (e - e0) * mult
    delta = float(y[c] - y0[c])
    assert abs(float(feats.sum()) - delta) <= 1e-10 * max(1.0, abs(delta)), (float(feats.sum()), delta)
    return fl(y0.detach()), rows(feats.detach())


ONNX_SPECS = {"gru_hn_uni1": 17, "gru_hn_bi2_fc12tanh": 14, "gru_last_uni2_nobias": 11,
              "gru_mean_bi1_seqrelu": 13, "gru_max_bi2": 17}
EXPORT_IDS = [4, 11, 0, 7, 7, 13, 2]


class IdsNet(nn.Module):
    """ids (B, T) -> logits: the model with its embedding, as exported."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids):
        return self.m(self.m.embedding(ids))


def export_onnx(s, m, m64, cases):
    import onnx  # only for the exports
    name, opset = s["name"], ONNX_SPECS[s["name"]]
    os.makedirs(os.path.join(HERE, "onnx"), exist_ok=True)
    path = os.path.join(HERE, "onnx", name + ".onnx")
    torch.onnx.export(IdsNet(m).eval(), torch.as_tensor([EXPORT_IDS]), path, input_names=["ids"],
                      output_names=["logits"], dynamic_axes={"ids": {1: "T"}}, opset_version=opset)
    g = onnx.load(path)
    onnx.checker.check_model(g)
    grus = [n for n in g.graph.node if n.op_type == "GRU"]
    assert len(grus) == s["layers"], [n.op_type for n in g.graph.node]
    for n in grus:
        lbr = [a.i for a in n.attribute if a.name == "linear_before_reset"]
        assert lbr == [1], lbr
    out = []
    with torch.no_grad():
        for c in cases:
            y32 = IdsNet(m)(torch.as_tensor([c["ids"]]))[0]
            y64 = IdsNet(m64)(torch.as_tensor([c["ids"]]))[0]
            assert fl(y64) == c["logits"]
            assert np.allclose(fl(y32), c["logits"], rtol=1e-4, atol=1e-5)
            out.append({"ids": c["ids"], "logits": c["logits"], "logits_f32": fl(y32)})
    j = {"name": name, "file": name + ".onnx", "source": name + ".json", "opset": opset, "head": s["head"],
         "act": s["act"] or "", "layers": s["layers"], "bidirectional": s["bidirectional"], "batch_first": True,
         "seq_len": None, "units": s["units"], "dense": False, "bias": s["bias"], "cases": out}
    write(os.path.join(HERE, "onnx", name + ".json"), json.dumps(j, separators=(",", ":"), allow_nan=False) + "\n")
    print("wrote onnx/%s.onnx (%d bytes)" % (name, os.path.getsize(path)), flush=True)


def make_model(s):
    torch.manual_seed(1000 + s["seed"])
    m = GRUNet(s).float()
    with torch.no_grad():
        for name, p in m.gru.named_parameters():
            p.mul_(2.0)  # livelier gates than PyTorch's default init
    m.eval()
    return m


def fl(a):
    return [float(x) for x in np.asarray(a, dtype=np.float64).reshape(-1)]


def rows(a):
    return [fl(r) for r in np.asarray(a)]


def case_refs(m64, e, cls):
    """float64 references for the embedded input e (T x E) and class cls."""
    T = e.shape[0]
    with torch.no_grad():
        y = m64(e[None])[0]
        y0 = m64(torch.zeros_like(e)[None])[0]
    c = int(torch.argmax(y)) if cls is None else cls

    def grad_at(x):
        x = x.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(m64(x[None])[0, c], x)
        return g

    sal = grad_at(e)
    x, w = np.polynomial.legendre.leggauss(IG_STEPS)
    alphas, weights = (x + 1) / 2, w / 2
    batch = torch.stack([float(a) * e for a in alphas]).requires_grad_(True)
    (gb,) = torch.autograd.grad(m64(batch)[:, c].sum(), batch)
    total = torch.zeros_like(e)
    for k in range(IG_STEPS):
        total += float(weights[k]) * gb[k]
    ig = e * total
    with torch.no_grad():
        occ = []
        for t in range(T):
            z = e.clone()
            z[t] = 0
            occ.append(float(y[c] - m64(z[None])[0, c]))
    return {"logits": fl(y), "baseline_logits": fl(y0), "predicted": int(torch.argmax(y)), "class": c,
            "saliency": rows(sal), "gxi": rows(e * sal), "ig": rows(ig),
            "ig_delta": float(ig.sum() - (y[c] - y0[c])), "occlusion": occ}


def build(s):
    m = make_model(s)
    sd = {k: v.detach().clone() for k, v in m.state_dict().items()}
    name = s["name"]
    pt, st = name + ".pt", name + ".safetensors"
    files = []
    if "pt" in s["formats"]:
        torch.save(m.state_dict(), os.path.join(HERE, pt))
        back_pt = torch.load(os.path.join(HERE, pt))
        for k, v in sd.items():
            assert v.dtype == torch.float32 and torch.equal(back_pt[k], v), k
        files.append(pt)
    if "safetensors" in s["formats"]:
        meta = {"format": "pt"}
        if s["metadata"]:
            meta["whitebox.head"] = s["head"] + ("+" + s["act"] if s["act"] else "")
        write_safetensors(os.path.join(HERE, st), sd, meta)
        back_st, back_meta = read_safetensors(os.path.join(HERE, st))
        assert back_meta == meta
        for k, v in sd.items():
            assert torch.equal(back_st[k], v), k
        files.append(st)
    m64 = make_model(s)
    m64.load_state_dict(sd)
    m64 = m64.double()
    emb = m64.embedding.weight.detach()
    cases = []
    for i, ids in enumerate(INPUTS):
        e = emb[torch.as_tensor(ids)].clone()
        cls = None
        if i == OTHER_CLASS_CASE:
            with torch.no_grad():
                cls = (int(torch.argmax(m64(e[None])[0])) + 1) % s["classes"]
        r = case_refs(m64, e, cls)
        # 50 Gauss-Legendre nodes integrate these smooth models closely
        assert abs(r["ig_delta"]) < 1e-2 * max(1.0, abs(r["logits"][r["class"]] - r["baseline_logits"][r["class"]])), r["ig_delta"]
        cases.append(dict(ids=ids, **r))
    dl = []
    for i, ids in enumerate(INPUTS + [DEEPLIFT_EXTRA]):
        e = emb[torch.as_tensor(ids)].clone()
        c = cases[i]["class"] if i < len(cases) else int(torch.argmax(m64(e[None])[0]))
        bases = [None] if i < len(cases) and i not in DEEPLIFT_ROW_CASES else ([None, 0] if i < len(cases) else [0])
        for base in bases:
            e0 = torch.zeros_like(e) if base is None else emb[base].expand_as(e).clone()
            y0, feats = deeplift_refs(m64, s, e, e0, c)
            dl.append({"ids": ids, "baseline_id": base, "class": c, "reference_logits": y0, "features": feats})
    dec = {"embedding": "embedding", "lstm": "gru"}
    if s["act"] is None:
        dec.update(decoder="fc", output_layer=None)
    elif s["style"] == "fc":
        dec.update(decoder="fc1", output_layer="fc2")
    else:
        dec.update(decoder="classifier.0", output_layer="classifier.2")
    j = {k: s[k] for k in ("name", "vocab", "input", "hidden", "layers", "bidirectional", "classes", "units",
                           "head", "act", "style", "bias")}
    j.update(files=files, dtype="F32", head_in_metadata=s["metadata"] and "safetensors" in s["formats"], prefixes=dec, ig_steps=IG_STEPS,
             cases=cases, deeplift=dl)
    write(os.path.join(HERE, name + ".json"), json.dumps(j, separators=(",", ":"), allow_nan=False) + "\n")
    if name in ONNX_SPECS:
        export_onnx(s, m, m64, cases)
    lines = []
    with torch.no_grad():
        for ids in VERIFY_INPUTS:
            y = m(m.embedding(torch.as_tensor([ids])))  # the float32 model, as a user runs it
            lines.append(json.dumps({"ids": ids, "logits": [float(v) for v in y[0]]}, separators=(",", ":")))
    write(os.path.join(HERE, name + ".verify.jsonl"), "\n".join(lines) + "\n")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    print("wrote %s (%d bytes)" % (os.path.relpath(path, HERE), len(text)), flush=True)


BENCH = {"name": "bench_gru_h256", "vocab": 200, "input": 100, "hidden": 256, "classes": 5, "seed": 2560, "scale": 2.0}


def build_bench(b):
    """The benchmark model b (BENCH) in ../<name>.safetensors and its spec
    ../<name>.json (see the doc string)."""
    s = spec(b["name"], 1, False, "hn", seed=b["seed"], formats=("safetensors",))
    s.update(vocab=b["vocab"], input=b["input"], hidden=b["hidden"], classes=b["classes"])
    m = GRUNet(s)
    rs = np.random.RandomState(b["seed"])
    bound = 1 / np.sqrt(s["hidden"])
    with torch.no_grad():
        for name, p in m.named_parameters():
            v = (rs.standard_normal(p.shape) if name == "embedding.weight"
                 else b["scale"] * rs.uniform(-bound, bound, size=p.shape))
            p.copy_(torch.from_numpy(v).float())
    m.eval()
    sd = {k: v.detach().clone() for k, v in m.state_dict().items()}
    out = os.path.normpath(os.path.join(HERE, ".."))
    st = b["name"] + ".safetensors"
    meta = {"format": "pt"}
    write_safetensors(os.path.join(out, st), sd, meta)
    back, back_meta = read_safetensors(os.path.join(out, st))
    assert back_meta == meta and list(back) == list(sd)
    for k, v in sd.items():
        assert v.dtype == torch.float32 and torch.equal(back[k], v), k
    print("wrote ../%s (%d bytes)" % (st, os.path.getsize(os.path.join(out, st))), flush=True)
    j = {"name": b["name"], "kind": "gru", "files": [st], "dtype": "F32", "file_dtypes": {st: "F32"},
         "prefixes": {"embedding": "embedding", "lstm": "gru", "decoder": "fc"}, "vocab": s["vocab"],
         "input": s["input"], "hidden": s["hidden"], "layers": 1, "bidirectional": False, "classes": s["classes"],
         "lstm_bias": True, "decoder_bias": True, "init_scale": b["scale"], "seed": b["seed"], "cases": []}
    write(os.path.join(out, b["name"] + ".json"), json.dumps(j, separators=(",", ":"), allow_nan=False) + "\n")


def main():
    os.makedirs(HERE, exist_ok=True)
    for s in SPECS:
        build(s)
    build_bench(BENCH)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""DeepLIFT references (testdata/deeplift/): an independent float64 reference.

For models already in testdata (every head and classifier of heads/, and
uni1, bi2, uni3nobias), writes deeplift/<name>.json with DeepLIFT's feature
and token scores on a few inputs, against the zero reference and against
the embedding row of token 0 at every position, for the predicted class and
another one.

Run from the repository root (torch only):

    /usr/bin/python3 model/testdata/gen_deeplift.py

It is deterministic: run twice, the same bytes.

The definition (package cell's, stacked_deeplift.go)
----------------------------------------------------
The LSTM is unrolled by hand in float64 (PyTorch's equations, gate order
i, f, g, o, biases b_ih + b_hh), every layer and direction, and checked
against nn.LSTM's logits with the same weights (to 1e-12). The reference
input x0 runs through it first; then x runs through it with two
torch.autograd.Functions in place of the nonlinearities and the products,
each holding its counterpart on x0:

* Rescale, for every sigmoid, tanh (tanh(c) included) and ReLU y = f(z):
  backward multiplies by (f(z) - f(z0)) / (z - z0), or by f'((z + z0)/2)
  where |z - z0| < 1e-6;
* Product, for every product a*b of two varying quantities (f*c_{t-1},
  i*g, o*tanh(c)): backward gives a the factor b0 + (b - b0)/2 and b the
  factor a0 + (a - a0)/2;
* MaxPool, for the max head: per unit, with a the maximising step of x and
  b that of x0 (the earliest on ties), all of the multiplier to a when
  a == b, else lam to a and 1 - lam to b, lam = (h_a - h_b) / ((h_a - h_b)
  + (h0_b - h0_a)).

Linear layers, sums, the mean head and the selections of hn, hn-bf and last
are ordinary autograd. The multipliers are the gradient of the logit of
class c with respect to x under these backward rules; the feature scores
are (x - x0) * multipliers, the token scores their sums over features. The
script checks summation-to-delta (the scores sum to f_c(x) - f_c(x0)).

Why not Captum: Captum's DeepLift applies its rules to nonlinear modules
only, so inside nn.LSTM it backpropagates the plain gradient, and on an
unrolled LSTM it takes the gradient at the gate products; neither sums to
delta. This script is the definition written independently of the Go code.
"""

import json
import os
import struct

import numpy as np
import torch
from torch import nn

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)

ROOT = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(ROOT, "deeplift")
EPS = 1e-6


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    kinds = {"F32": "<f4", "F64": "<f8"}
    out = {}
    for k, v in header.items():
        a, b = v["data_offsets"]
        arr = np.frombuffer(body[a:b], dtype=kinds[v["dtype"]]).astype(np.float64)
        out[k] = torch.from_numpy(arr.copy()).reshape(v["shape"])
    return out


def sigmoid_prime(z):
    s = torch.sigmoid(z)
    return s * (1 - s)


def tanh_prime(z):
    t = torch.tanh(z)
    return 1 - t * t


def relu_prime(z):
    return (z > 0).to(z.dtype)


FUNCS = {"sigmoid": (torch.sigmoid, sigmoid_prime), "tanh": (torch.tanh, tanh_prime),
         "relu": (torch.relu, relu_prime)}


class Rescale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z, z0, kind):
        f, _ = FUNCS[kind]
        y, y0 = f(z), f(z0)
        ctx.save_for_backward(z, z0, y, y0)
        ctx.kind = kind
        return y

    @staticmethod
    def backward(ctx, g):
        z, z0, y, y0 = ctx.saved_tensors
        _, prime = FUNCS[ctx.kind]
        dz = z - z0
        near = dz.abs() < EPS
        safe = torch.where(near, torch.ones_like(dz), dz)
        m = torch.where(near, prime((z + z0) / 2), (y - y0) / safe)
        return g * m, None, None


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
    """seq: T x D -> the earliest maximising step of each column."""
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


class Model:
    """The weights of an LSTM classifier: cells[(k, d)] = (W_ih, W_hh, b),
    the head, and the classifier layers."""

    def __init__(self, tensors, spec):
        self.s = spec
        lstm = spec["lstm"]
        self.layers, self.bi = spec["layers"], spec["bidirectional"]
        self.dirs = 2 if self.bi else 1
        self.cells = {}
        for k in range(self.layers):
            for d in range(self.dirs):
                suf = "_l%d%s" % (k, "_reverse" if d else "")
                wih, whh = tensors[lstm + ".weight_ih" + suf], tensors[lstm + ".weight_hh" + suf]
                b = torch.zeros(wih.shape[0])
                if lstm + ".bias_ih" + suf in tensors:
                    b = tensors[lstm + ".bias_ih" + suf] + tensors[lstm + ".bias_hh" + suf]
                self.cells[(k, d)] = (wih, whh, b)
        self.emb = tensors[spec["embedding"] + ".weight"]
        self.H = self.cells[(0, 0)][1].shape[1]
        self.linears = []
        for p in spec["linears"]:
            w = tensors[p + ".weight"]
            self.linears.append((w, tensors.get(p + ".bias", torch.zeros(w.shape[0]))))
        self.tensors = tensors

    def run(self, x, ref=None):
        """Logits of x (T x E); with ref (the trace of x0), DeepLIFT's
        Functions in place of the nonlinearities and products. Returns the
        logits and the trace."""
        tr = {}

        def act(name, z, kind):
            tr[name + ".z"] = z.detach()
            if ref is None:
                return FUNCS[kind][0](z)
            return Rescale.apply(z, ref[name + ".z"], kind)

        def prod(name, a, b):
            tr[name + ".a"], tr[name + ".b"] = a.detach(), b.detach()
            if ref is None:
                return a * b
            return Product.apply(a, b, ref[name + ".a"], ref[name + ".b"])

        T, H = x.shape[0], self.H
        inp = [x[t] for t in range(T)]
        finals = {}
        for k in range(self.layers):
            outs = [[None] * T for _ in range(self.dirs)]
            for d in range(self.dirs):
                wih, whh, b = self.cells[(k, d)]
                h, c = torch.zeros(H), torch.zeros(H)
                steps = range(T - 1, -1, -1) if d else range(T)
                for t in steps:
                    z = wih @ inp[t] + whh @ h + b
                    n = "%d.%d.%d." % (k, d, t)
                    i = act(n + "i", z[0:H], "sigmoid")
                    f = act(n + "f", z[H:2 * H], "sigmoid")
                    g = act(n + "g", z[2 * H:3 * H], "tanh")
                    o = act(n + "o", z[3 * H:4 * H], "sigmoid")
                    c = prod(n + "fc", f, c) + prod(n + "ig", i, g)
                    h = prod(n + "oh", o, act(n + "c", c, "tanh"))
                    outs[d][t] = h
                finals[(k, d)] = h
            inp = [torch.cat([outs[d][t] for d in range(self.dirs)]) for t in range(T)]
        seq = torch.stack(inp)  # T x D, the top layer's outputs
        head, top = self.s["head"], self.layers - 1
        if head in ("hn", "hn-bf"):
            parts = [finals[(top, d)] for d in range(self.dirs)]
            if head == "hn-bf":
                parts = parts[::-1]
            v = torch.cat(parts)
        elif head == "last":
            v = seq[T - 1]
        elif head == "mean":
            v = seq.mean(dim=0)
        else:
            tr["max.seq"] = seq.detach()
            v = seq.max(dim=0).values if ref is None else MaxPool.apply(seq, ref["max.seq"])
        (w1, b1) = self.linears[0]
        a = w1 @ v + b1
        if len(self.linears) == 2:
            w2, b2 = self.linears[1]
            a = w2 @ act("hidden", a, self.s["act"]) + b2
        return a, tr

    def torch_logits(self, x):
        """The same model through nn.LSTM and PyTorch's head expression."""
        E = x.shape[1]
        lstm = nn.LSTM(E, self.H, num_layers=self.layers, bidirectional=self.bi, batch_first=True,
                       bias=self.s["lstm_bias"]).double()
        sd = {k[len(self.s["lstm"]) + 1:]: v for k, v in self.tensors.items() if k.startswith(self.s["lstm"] + ".")}
        lstm.load_state_dict(sd)
        with torch.no_grad():
            output, (h_n, _) = lstm(x[None])
            head = self.s["head"]
            if head == "hn":
                v = torch.cat((h_n[-2], h_n[-1]), dim=1) if self.bi else h_n[-1]
            elif head == "hn-bf":
                v = torch.cat((h_n[-1], h_n[-2]), dim=1) if self.bi else h_n[-1]
            elif head == "last":
                v = output[:, -1, :]
            elif head == "mean":
                v = output.mean(dim=1)
            else:
                v = output.max(dim=1).values
            w1, b1 = self.linears[0]
            y = v @ w1.T + b1
            if len(self.linears) == 2:
                y = {"relu": torch.relu, "tanh": torch.tanh}[self.s["act"]](y)
                w2, b2 = self.linears[1]
                y = y @ w2.T + b2
        return y[0]


def deeplift(m, x, x0, cls):
    y0, ref = m.run(x0)
    xg = x.clone().requires_grad_(True)
    y, _ = m.run(xg, ref)
    plain, _ = m.run(x)
    want, want0 = m.torch_logits(x), m.torch_logits(x0)
    assert torch.allclose(y.detach(), want, rtol=0, atol=1e-12), (y, want)
    assert torch.allclose(plain, want, rtol=0, atol=1e-12)
    assert torch.allclose(y0, want0, rtol=0, atol=1e-12)
    c = int(torch.argmax(y)) if cls is None else cls
    (mult,) = torch.autograd.grad(y[c], xg)
    feats = (x - x0) * mult
    delta = float(y[c] - y0[c])
    total = float(feats.sum())
    assert abs(total - delta) <= 1e-10 * max(1.0, abs(delta)), (total, delta)
    return c, y.detach(), y0, feats


def fl(a):
    return [float(v) for v in np.asarray(a, dtype=np.float64).reshape(-1)]


def spec_from(path_json, path_model, head=None, act=None):
    with open(os.path.join(ROOT, path_json)) as f:
        j = json.load(f)
    pre = j["prefixes"]
    head = head or j.get("head", "hn")
    act = act if act is not None else j.get("act")
    linears = [pre["decoder"]] + ([pre["output_layer"]] if pre.get("output_layer") else [])
    return {"name": j["name"], "model": path_model, "embedding": pre["embedding"], "lstm": pre["lstm"],
            "layers": j["layers"], "bidirectional": j["bidirectional"], "head": head, "act": act,
            "linears": linears, "vocab": j["vocab"], "lstm_bias": j.get("lstm_bias", True)}


MODELS = [spec_from("heads/%s.json" % n, "heads/%s.safetensors" % n) for n in (
    "hn_bi1_fc12tanh", "hnbf_bi1", "hnbf_uni2", "last_bi2", "last_uni1_fc12relu", "mean_uni2",
    "mean_bi1_seqtanh", "max_bi2_seqrelu", "max_uni1")] + [
    spec_from("uni1.json", "uni1.safetensors"), spec_from("bi2.json", "bi2.safetensors"),
    spec_from("uni3nobias.json", "uni3nobias.safetensors")]

# Token 0 is the nonzero reference's row: inputs that hold it at a step give
# z == z0 there (the midpoint rule).
INPUTS = [[3], [0, 7, 1, 4], [2, 9, 0, 15, 5, 11], [12, 4, 8, 8, 1, 6, 3, 0, 9]]


def main():
    os.makedirs(OUT, exist_ok=True)
    for s in MODELS:
        tensors = read_safetensors(os.path.join(ROOT, s["model"]))
        m = Model(tensors, s)
        cases = []
        for n, ids in enumerate(INPUTS):
            ids = [i % s["vocab"] for i in ids]
            x = m.emb[torch.as_tensor(ids)].clone()
            for base in (None, 0):
                x0 = torch.zeros_like(x) if base is None else m.emb[base].expand_as(x).clone()
                cls = None
                if n == 2:  # another class than the predicted one
                    with torch.no_grad():
                        cls = (int(torch.argmax(m.run(x)[0])) + 1) % int(m.run(x)[0].shape[0])
                c, y, y0, feats = deeplift(m, x, x0, cls)
                cases.append({"ids": ids, "baseline_id": base, "class": c, "logits": fl(y),
                              "reference_logits": fl(y0), "features": [fl(r) for r in feats],
                              "scores": fl(feats.sum(dim=1))})
        j = {"name": s["name"], "model": s["model"], "head": s["head"], "act": s["act"], "cases": cases}
        text = json.dumps(j, separators=(",", ":"), allow_nan=False) + "\n"
        path = os.path.join(OUT, s["name"] + ".json")
        with open(path, "w") as f:
            f.write(text)
        print("wrote deeplift/%s.json (%d bytes)" % (s["name"], len(text)), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Reference fixtures for LSTM classifiers with an attention head (testdata/attention/).

Writes, next to this file, small float32 PyTorch classifiers
Embedding(V, E) -> nn.LSTM(E, H, num_layers=L, bidirectional=bi,
batch_first=True) -> attention pooling -> classifier, saved as a user saves
them (torch.save(model.state_dict()) and/or .safetensors, F32), and for each

* <name>.json: the model's description and float64 references (the float32
  weights upcast, model.double()) on a few inputs (T from 1 to 12);
* <name>.verify.jsonl: lines {"ids": [...], "logits": [...]}, the float32
  model's logits as a user records them (for `-head auto -verify`).

The head: output, _ = lstm(e); s = score(output) (B x T x 1), alpha =
softmax(s, dim=1), v = (alpha * output).sum(dim=1), with score one
Linear(D, 1) or Linear(D, A) -> Tanh -> Linear(A, 1) (as an nn.Sequential,
or two Linear members of one module), under the names people give it
(attention, attn, att; pool.0/pool.2 to be found by shape only). The
pooling is written as (alpha * output).sum(dim=1), or ("pool" in
<name>.json) with torch.bmm or torch.matmul, the scores squeezed to
(B, T) or not: the same function, exported as other graphs.

References (float64, on the embedded input e = Embedding(ids), T x E), as
gen_gru.py: logits f(e), baseline_logits f(0); saliency d f_c / d e; gxi
e * saliency; ig Gauss-Legendre with 50 nodes (numpy leggauss on [0, 1],
float64 weights), zero baseline, and its delta; occlusion f_c(e) - f_c(e
with row t zero); attention: alpha (T values). c is the predicted class,
except in one case per model.

DeepLIFT ("deeplift": entries {ids, baseline_id, class, reference_logits,
features}, as gen_gru.py's): the definition of package cell
(stacked_deeplift.go, stacked_attention_deeplift.go) written
independently: the LSTM unrolled by hand in float64 (checked against
nn.LSTM to 1e-12), the reference x0 run first, then x with
torch.autograd.Functions holding their counterparts on x0:

* Rescale at every sigmoid/tanh (gates, tanh(c), the score's tanh, the
  classifier's hidden ReLU/Tanh), the midpoint derivative where
  |v - v0| < 1e-6;
* Product at f * c, i * g, o * tanh(c) and alpha_t * out_t: a gets
  b0 + (b - b0)/2, b gets a0 + (a - a0)/2;
* Softmax: alpha_t = exp(u_t), u_t = e_t - L, L = log sum_s exp(e_s);
  m_u = m_alpha * Rescale(exp at u), rho_s = Rescale(log at S) *
  Rescale(exp at e_s) (S = sum_s exp(e_s - c), c the largest score of x and
  x0), m_e = m_u - rho * sum(m_u).

Scores are (x - x0) * multipliers and sum to f_c(x) - f_c(x0) (checked to
1e-10). References: the zero reference on every case, the embedding row of
token 0 on DEEPLIFT_ROW_CASES.

onnx/<name>.onnx: the float32 model (with its embedding, ids -> logits)
exported by torch.onnx.export with a dynamic sequence axis at the opset of
ONNX_OPSETS ("onnx" in <name>.json); its logits and attention weights are
the cases' float64 references.

Run from the repository root (torch only; deterministic):

    /usr/bin/python3 model/testdata/attention/gen_attention.py
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


class AttnNet(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s
        dirs = 2 if s["bidirectional"] else 1
        D = s["hidden"] * dirs
        A = s["attn_units"]
        self.embedding = nn.Embedding(s["vocab"], s["input"])
        self.lstm = nn.LSTM(s["input"], s["hidden"], num_layers=s["layers"], bidirectional=s["bidirectional"],
                            batch_first=True)
        st, bias = s["attn_style"], s["attn_bias"]
        if st == "single":
            setattr(self, s["attn_name"], nn.Linear(D, 1, bias=bias))
        elif st == "seq":
            setattr(self, s["attn_name"], nn.Sequential(nn.Linear(D, A, bias=bias), nn.Tanh(), nn.Linear(A, 1, bias=bias)))
        else:  # a module with two Linear members, W and v
            m = nn.Module()
            m.W = nn.Linear(D, A, bias=bias)
            m.v = nn.Linear(A, 1, bias=bias)
            setattr(self, s["attn_name"], m)
        act = {"relu": nn.ReLU, "tanh": nn.Tanh}.get(s["act"])
        if act is None:
            self.fc = nn.Linear(D, s["classes"])
        elif s["style"] == "fc":
            self.fc1 = nn.Linear(D, s["units"])
            self.act = act()
            self.fc2 = nn.Linear(s["units"], s["classes"])
        else:
            self.classifier = nn.Sequential(nn.Linear(D, s["units"]), act(), nn.Linear(s["units"], s["classes"]))

    def score(self, output):
        a = getattr(self, self.s["attn_name"])
        if self.s["attn_style"] == "pair":
            return a.v(torch.tanh(a.W(output)))
        return a(output)

    def alpha(self, e):
        output, _ = self.lstm(e)
        return torch.softmax(self.score(output), dim=1)

    def pooled(self, output):
        """The pooled vector, written as each "pool" style writes it."""
        p = self.s["pool"]
        if p == "mul":  # alpha (B, T, 1) broadcast over the features
            alpha = torch.softmax(self.score(output), dim=1)
            return (alpha * output).sum(dim=1)
        if p == "bmm":  # alpha transposed to (B, 1, T)
            alpha = torch.softmax(self.score(output), dim=1)
            return torch.bmm(alpha.transpose(1, 2), output).squeeze(1)
        alpha = torch.softmax(self.score(output).squeeze(-1), dim=1)  # (B, T)
        if p == "bmm_t":  # output transposed to (B, D, T)
            return torch.bmm(output.transpose(1, 2), alpha.unsqueeze(2)).squeeze(2)
        if p == "matmul":
            return torch.matmul(alpha.unsqueeze(1), output).squeeze(1)
        assert p == "squeezed", p
        return (alpha.unsqueeze(-1) * output).sum(dim=1)

    def forward(self, e):  # e: (B, T, E) -> logits (B, C)
        output, _ = self.lstm(e)
        v = self.pooled(output)
        if self.s["act"] is None:
            return self.fc(v)
        if self.s["style"] == "fc":
            return self.fc2(self.act(self.fc1(v)))
        return self.classifier(v)


def spec(name, layers, bi, attn_name, attn_style, attn_bias=True, act=None, style=None, metadata=False, seed=0,
         formats=("pt",), by_shape=False, pool="mul"):
    return {"name": name, "vocab": 20, "input": 5, "hidden": 6, "layers": layers, "bidirectional": bi,
            "classes": 3, "units": 5 if act else 0, "head": "attention", "act": act, "style": style,
            "attn_name": attn_name, "attn_style": attn_style, "attn_units": 0 if attn_style == "single" else 4,
            "attn_bias": attn_bias, "metadata": metadata, "seed": seed, "formats": formats, "by_shape": by_shape,
            "pool": pool}


SPECS = [
    spec("att_uni1_single", 1, False, "attention", "single", seed=1, formats=("pt", "safetensors")),
    spec("att_bi1_seq_fc12tanh", 1, True, "attn", "seq", act="tanh", style="fc", seed=2),
    spec("att_bi2_single_nobias_seqrelu", 2, True, "att", "single", attn_bias=False, act="relu", style="seq",
         metadata=True, seed=3, formats=("safetensors",)),
    spec("att_uni2_pair", 2, False, "attention", "pair", seed=4),
    spec("att_bi1_seq_nobias_shape", 1, True, "pool", "seq", attn_bias=False, seed=5, by_shape=True),
    # The pooling as people write it besides (alpha * output).sum(1): with
    # torch.bmm or torch.matmul, the scores squeezed to (B, T) or not.
    spec("att_bi1_single_bmm", 1, True, "attention", "single", seed=6, pool="bmm"),
    spec("att_uni1_seq_bmmt", 1, False, "attn", "seq", seed=7, pool="bmm_t"),
    spec("att_bi2_pair_matmul", 2, True, "attention", "pair", seed=8, pool="matmul"),
    spec("att_uni1_single_squeezed", 1, False, "attention", "single", seed=9, pool="squeezed"),
]

INPUTS = [[3], [7, 1, 4, 1], [2, 2, 2, 9, 15, 0, 5], [19, 4, 8, 8, 1, 12, 6, 3, 0, 11, 17, 2]]
OTHER_CLASS_CASE = 2
VERIFY_INPUTS = [[1], [5, 9], [0, 3, 3, 7, 12], [18, 2, 6, 4, 4, 10, 1, 13], [11, 15, 16, 2, 0, 9, 9, 7, 5, 3, 14]]


DEEPLIFT_ROW_CASES = [1, 3]
DL_EPS = 1e-6


def sigmoid_prime(v):
    g = torch.sigmoid(v)
    return g * (1 - g)


def tanh_prime(v):
    g = torch.tanh(v)
    return 1 - g * g


FUNCS = {"sigmoid": (torch.sigmoid, sigmoid_prime), "tanh": (torch.tanh, tanh_prime),
         "relu": (torch.relu, lambda v: (v > 0).to(v.dtype))}


def rescale(v, v0, y, y0, prime):
    dv = v - v0
    near = dv.abs() < DL_EPS
    safe = torch.where(near, torch.ones_like(dv), dv)
    return torch.where(near, prime((v + v0) / 2), (y - y0) / safe)


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
        return g * rescale(v, v0, y, y0, FUNCS[ctx.kind][1]), None, None


class Product(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, a0, b0):
        ctx.save_for_backward(a, b, a0, b0)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b, a0, b0 = ctx.saved_tensors
        return g * (b0 + (b - b0) / 2), g * (a0 + (a - a0) / 2), None, None


class Softmax(torch.autograd.Function):
    """softmax over the T scores e, DeepLIFT's rule against e0."""

    @staticmethod
    def forward(ctx, e, e0):
        a, a0 = torch.softmax(e, 0), torch.softmax(e0, 0)
        ctx.save_for_backward(e, e0, a, a0)
        return a

    @staticmethod
    def backward(ctx, g):
        e, e0, a, a0 = ctx.saved_tensors
        c = torch.max(torch.max(e), torch.max(e0))
        ex, ex0 = torch.exp(e - c), torch.exp(e0 - c)
        S, S0 = ex.sum(), ex0.sum()
        L, L0 = torch.log(S), torch.log(S0)
        rlog = rescale(S, S0, L, L0, lambda z: 1 / z)
        rho = rlog * rescale(e, e0, ex, ex0, lambda z: torch.exp(z - c))
        mu = g * rescale(e - c - L, e0 - c - L0, a, a0, torch.exp)
        return mu - rho * mu.sum(), None


def unrolled(m64, s, x, ref=None):
    """The float64 model m64 on x (T x E), the LSTM unrolled by hand; with
    ref (the trace of x0), DeepLIFT's Functions in place of the
    nonlinearities, products and the softmax. Returns the logits and the
    trace."""
    tr = {}

    def act(name, v, kind):
        tr[name] = v.detach()
        return FUNCS[kind][0](v) if ref is None else Rescale.apply(v, ref[name], kind)

    def prod(name, a, b):
        tr[name + ".a"], tr[name + ".b"] = a.detach(), b.detach()
        return a * b if ref is None else Product.apply(a, b, ref[name + ".a"], ref[name + ".b"])

    T, H, L = x.shape[0], s["hidden"], s["layers"]
    dirs = 2 if s["bidirectional"] else 1
    P = dict(m64.lstm.named_parameters())
    inp = [x[t] for t in range(T)]
    for k in range(L):
        outs = [[None] * T for _ in range(dirs)]
        for d in range(dirs):
            suf = "_l%d%s" % (k, "_reverse" if d else "")
            wih, whh = P["weight_ih" + suf], P["weight_hh" + suf]
            b = P["bias_ih" + suf] + P["bias_hh" + suf]
            h, cc = torch.zeros(H, dtype=torch.float64), torch.zeros(H, dtype=torch.float64)
            for t in (range(T - 1, -1, -1) if d else range(T)):
                z = wih @ inp[t] + whh @ h + b
                n = "%d.%d.%d." % (k, d, t)
                i = act(n + "i", z[:H], "sigmoid")
                f = act(n + "f", z[H:2 * H], "sigmoid")
                g = act(n + "g", z[2 * H:3 * H], "tanh")
                o = act(n + "o", z[3 * H:], "sigmoid")
                cc = prod(n + "fc", f, cc) + prod(n + "ig", i, g)
                h = prod(n + "oh", o, act(n + "c", cc, "tanh"))
                outs[d][t] = h
        inp = [torch.cat([outs[d][t] for d in range(dirs)]) for t in range(T)]
    seq = torch.stack(inp)  # T x D
    a = getattr(m64, s["attn_name"])
    if s["attn_style"] == "single":
        e = a(seq)[:, 0]
    else:
        l1, l2 = (a.W, a.v) if s["attn_style"] == "pair" else (a[0], a[2])
        e = l2(act("attn", l1(seq), "tanh"))[:, 0]
    tr["e"] = e.detach()
    alpha = torch.softmax(e, 0) if ref is None else Softmax.apply(e, ref["e"])
    v = prod("pool", alpha[:, None].expand_as(seq), seq).sum(dim=0)
    if s["act"] is None:
        return m64.fc(v), tr
    l1, l2 = (m64.fc1, m64.fc2) if s["style"] == "fc" else (m64.classifier[0], m64.classifier[2])
    return l2(act("hidden", l1(v), s["act"])), tr


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


ONNX_OPSETS = {"att_uni1_single": 13, "att_bi1_seq_fc12tanh": 17, "att_bi2_single_nobias_seqrelu": 13,
               "att_uni2_pair": 17, "att_bi1_seq_nobias_shape": 13, "att_bi1_single_bmm": 13, "att_uni1_seq_bmmt": 17,
               "att_bi2_pair_matmul": 13, "att_uni1_single_squeezed": 17}
EXPORT_IDS = [4, 11, 0, 7, 7, 13, 2]


class IdsNet(nn.Module):
    """ids (B, T) -> logits: the model with its embedding, as exported."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids):
        return self.m(self.m.embedding(ids))


def export_onnx(s, m):
    """onnx/<name>.onnx: the float32 model exported with a dynamic T."""
    import onnx  # only for the exports
    name, opset = s["name"], ONNX_OPSETS[s["name"]]
    os.makedirs(os.path.join(HERE, "onnx"), exist_ok=True)
    path = os.path.join(HERE, "onnx", name + ".onnx")
    torch.onnx.export(IdsNet(m).eval(), torch.as_tensor([EXPORT_IDS]), path, input_names=["ids"],
                      output_names=["logits"], dynamic_axes={"ids": {1: "T"}}, opset_version=opset)
    g = onnx.load(path)
    onnx.checker.check_model(g)
    ops = [n.op_type for n in g.graph.node]
    assert "Softmax" in ops and ops.count("LSTM") == s["layers"], ops
    print("wrote onnx/%s.onnx (%d bytes)" % (name, os.path.getsize(path)), flush=True)
    return {"file": "onnx/" + name + ".onnx", "opset": opset}


def make_model(s):
    torch.manual_seed(1000 + s["seed"])
    m = AttnNet(s).float()
    with torch.no_grad():
        for name, p in m.named_parameters():
            if not name.startswith("embedding"):
                p.mul_(2.0)  # livelier gates and sharper attention than the default init
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
    with torch.no_grad():
        alpha = m64.alpha(e[None])[0, :, 0]
    return {"attention": fl(alpha), "logits": fl(y), "baseline_logits": fl(y0), "predicted": int(torch.argmax(y)), "class": c,
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
    for i, ids in enumerate(INPUTS):
        e = emb[torch.as_tensor(ids)].clone()
        for base in ([None, 0] if i in DEEPLIFT_ROW_CASES else [None]):
            e0 = torch.zeros_like(e) if base is None else emb[base].expand_as(e).clone()
            y0, feats = deeplift_refs(m64, s, e, e0, cases[i]["class"])
            dl.append({"ids": ids, "baseline_id": base, "class": cases[i]["class"], "reference_logits": y0,
                       "features": feats})
    dec = {"embedding": "embedding", "lstm": "lstm", "attention": s["attn_name"]}
    if s["act"] is None:
        dec.update(decoder="fc", output_layer=None)
    elif s["style"] == "fc":
        dec.update(decoder="fc1", output_layer="fc2")
    else:
        dec.update(decoder="classifier.0", output_layer="classifier.2")
    j = {k: s[k] for k in ("name", "vocab", "input", "hidden", "layers", "bidirectional", "classes", "units",
                           "head", "act", "style", "attn_name", "attn_style", "attn_units", "attn_bias",
                           "by_shape", "pool")}
    j.update(files=files, dtype="F32", head_in_metadata=s["metadata"] and "safetensors" in s["formats"], prefixes=dec, ig_steps=IG_STEPS,
             cases=cases, deeplift=dl, onnx=export_onnx(s, m))
    write(os.path.join(HERE, name + ".json"), json.dumps(j, separators=(",", ":"), allow_nan=False) + "\n")
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


class Refused(nn.Module):
    """Graphs shaped like attention pooling that compute something else:
    the softmax over the features (of a (B, T, 1) score: every weight 1, a
    sum over the steps), or the weights applied to the embedded input."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.embedding = nn.Embedding(20, 5)
        self.lstm = nn.LSTM(5, 6, batch_first=True)
        self.attention = nn.Linear(6, 1)
        self.fc = nn.Linear(6 if kind == "features_axis" else 5, 3)

    def forward(self, ids):
        e = self.embedding(ids)
        output, _ = self.lstm(e)
        if self.kind == "features_axis":
            alpha = torch.softmax(self.attention(output), dim=2)
            return self.fc(torch.bmm(alpha.transpose(1, 2), output).squeeze(1))
        alpha = torch.softmax(self.attention(output), dim=1)
        return self.fc(torch.bmm(alpha.transpose(1, 2), e).squeeze(1))


def export_refused():
    """onnx/refused_<kind>.onnx: graphs the importer must refuse."""
    for kind in ("features_axis", "input_pooled"):
        torch.manual_seed(77)
        path = os.path.join(HERE, "onnx", "refused_%s.onnx" % kind)
        torch.onnx.export(Refused(kind).eval(), torch.as_tensor([EXPORT_IDS]), path, input_names=["ids"],
                          output_names=["logits"], dynamic_axes={"ids": {1: "T"}}, opset_version=13)
        print("wrote onnx/refused_%s.onnx (%d bytes)" % (kind, os.path.getsize(path)), flush=True)


def main():
    os.makedirs(HERE, exist_ok=True)
    for s in SPECS:
        build(s)
    export_refused()


if __name__ == "__main__":
    main()

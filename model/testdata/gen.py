#!/usr/bin/env python3
"""Reference fixtures for the imported-model attribution engine.

Writes, next to this file, PyTorch LSTM classifiers (safetensors and/or
torch.save files) and one JSON per model with float64 references for
Saliency, Gradient×Input, Integrated Gradients, Occlusion and LRP on a few
inputs. Run it as README.md says; it is deterministic (run twice: same bytes).

The model family
----------------
Embedding(V,E) -> nn.LSTM(E, H, num_layers=L, bidirectional=bi,
batch_first=True, bias=lstm_bias) -> Linear(H*dirs, C, bias=dec_bias); logits
= Linear(h_n[-1]) (uni) or Linear(cat(h_n[-2], h_n[-1])) (bidirectional: the
forward direction's state after token T-1, the backward direction's state
after reading token 0). Zero initial states. Dense models have no embedding.
Attribution is on the embedded input e = Embedding(ids) (T x E); f(e) = logits;
baseline e = 0.

References (float64 everywhere)
-------------------------------
* saliency: Captum Saliency(f).attribute(e, target=c, abs=False)
  (checked against torch.autograd.grad);
* gxi: Captum InputXGradient;
* ig: Captum IntegratedGradients(f).attribute(e, baselines=0, target=c,
  n_steps=n, method=m, return_convergence_delta=True), all steps in one batch.
  NOTE: Captum multiplies the gradients by torch.tensor(step_sizes).float(),
  i.e. its quadrature WEIGHTS ARE ROUNDED TO FLOAT32 (the nodes, alphas, stay
  float64). "features"/"tokens"/"delta" are Captum's output as is; "weights"
  holds the float32-rounded weights Captum used (as float64 numbers),
  "weights_f64" the unrounded ones, and "features_f64"/"tokens_f64"/
  "delta_f64" the same integral computed here in pure float64 (features_f64
  only for T <= 7, null above, to keep the directory small) (Captum's
  alphas, unrounded weights, same batched forward/backward). Captum's
  riemann_trapezoid uses nodes linspace(0,1,n) with weights 1/n halved at the
  ends (sum (n-1)/n), not 1/(n-1): the recorded alphas/weights are Captum's.
  Riemann nodes come from torch.linspace in float64 (torch's two-sided
  linspace: start+i*step for i < n/2, end-(n-1-i)*step above).
  delta = sum(attributions) - (f_c(e) - f_c(0)).
* occlusion: R_t = f_c(e) - f_c(e with row t set to 0) (token scores only).
* lrp: the epsilon-rule of Arras et al. (LSTM_bidi.lrp + lrp_linear of
  github.com/ArrasL/LRP_for_LSTM, whose lrp_linear is imported and used
  unchanged), extended to our family by lrp_stack below with these
  conventions (the Go engine follows them):
  - per direction and layer (arrays with T+1 rows, row -1 = row T = the zero
    initial state), for t = T-1 .. 0, with PyTorch's gate order i,f,g,o:
      Rc[t]   += Rh[t]
      Rc[t-1]  = lrp_linear(f[t]*c[t-1], I, 0, c[t], Rc[t], 2H, eps, bf)
      Rg[t]    = lrp_linear(i[t]*g[t],  I, 0, c[t], Rc[t], 2H, eps, bf)
      Rx[t]    = lrp_linear(x[t],   W_ih[g rows].T, b_g, zpre_g[t], Rg[t], H+e_l, eps, bf)
      Rh[t-1] += lrp_linear(h[t-1], W_hh[g rows].T, b_g, zpre_g[t], Rg[t], H+e_l, eps, bf)
    e_l = the layer's input size (E for layer 0, H*dirs above), b_g = b_ih+b_hh
    of the g rows (0 without LSTM bias), zpre_g = W_ih x + W_hh h + b_ih + b_hh
    (g rows). The backward direction runs this on the reversed sequence.
    lrp_linear's stabilizer is eps*sign(hout) with sign(0) = +1; with bf=1
    the term (b + eps*sign)/bias_nb_units is added to EVERY (input, output)
    pair, also for the identity weights of the c-steps.
  - decoder: for each direction k, Rh_k[T-1] = lrp_linear(h_final_k,
    W_dec[:, kH:(k+1)H].T, b_dec (0 if none), logits, logits*onehot(c),
    H*dirs, eps, bf): hout is the full logit vector including the decoder
    bias, Rout is the logit of class c on class c only.
  - stacked layers: layer l>0 reads x_l[t] = cat(h_fwd_{l-1}[t],
    h_bwd_{l-1}[t]) in original time order; the relevance Rx_l[t] of both
    directions (backward one reversed back to original order) is summed and
    split in halves, which INITIALIZE Rh of layer l-1's forward (at t) and
    backward (at original t, i.e. reversed index T-1-t) directions before
    layer l-1's loop; the recurrent term is then added with +=, and for the
    top layer the decoder's share is the initial Rh[T-1].
  - token score = sum over both directions and all dims of layer 0's Rx
    (original order); "features" = that T x E matrix.
  - "rest" = sum over layers and directions of Rh[-1].sum() + Rc[-1].sum()
    (the relevance that reaches the zero initial states: their lrp's third
    return value). With bf=1: sum(tokens) + rest = f_c(e) (asserted).
  For the arras fixture lrp_stack is asserted equal to THEIR LSTM_bidi.lrp
  (per direction, the sum, and the third return value) to 1e-12.

Weights
-------
LSTM parameters ~ scale * U(-1/sqrt(H), 1/sqrt(H)), decoder ~ scale *
U(-1/sqrt(H*dirs), ..), embedding ~ N(0,1), numpy RandomState(seed); then
rounded to the storage dtype (F32/F16/BF16) and the reference is computed from
the rounded weights upcast to float64, so every file of a model holds exactly
the same numbers.
"""
import copy
import hashlib
import json
import math
import os
import pickle
import shutil
import struct
import sys
import tempfile
import zipfile

import numpy as np
import torch
from torch import nn

torch.set_default_dtype(torch.float64)  # before Captum builds any alphas
torch.set_num_threads(1)

from captum.attr import InputXGradient, IntegratedGradients, Saliency  # noqa: E402
from captum.attr._utils.approximation_methods import approximation_parameters  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LRP_MAX_AMPLIFICATION = 1e3  # max |R| / max(1, |f_c|) allowed in a reference
F64_FEATURES_MAX_T = 7
ONLY = [s for s in os.environ.get("GEN_ONLY", "").split(",") if s]  # debugging: rebuild only these  # "features_f64" of IG only for T <= this (size)


def find_lrp_for_lstm():
    cands = [os.environ.get("LRP_FOR_LSTM", "")] + sys.path
    for d in cands:
        if d and os.path.isfile(os.path.join(d, "code", "LSTM", "LSTM_bidi.py")):
            return os.path.abspath(d)
    raise SystemExit("gen.py: set LRP_FOR_LSTM to a checkout of github.com/ArrasL/LRP_for_LSTM")


def import_arras():
    """Imports their package `code` (it shadows the stdlib module `code`;
    the stdlib one is put back afterwards)."""
    root = find_lrp_for_lstm()
    saved = {k: v for k, v in sys.modules.items() if k == "code" or k.startswith("code.")}
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, root)
    try:
        import code.LSTM.LSTM_bidi as their_bidi
        import code.LSTM.LRP_linear_layer as their_linear
    finally:
        sys.path.remove(root)
        for k in [k for k in sys.modules if k == "code" or k.startswith("code.")]:
            del sys.modules[k]
        sys.modules.update(saved)
    return root, their_bidi.LSTM_bidi, their_linear.lrp_linear


LRP_ROOT, LSTM_bidi, lrp_linear = import_arras()

# ---------------------------------------------------------------------------
# safetensors (own writer and reader: the package is not installed here)

ST_NAME = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}
ST_TORCH = {v: k for k, v in ST_NAME.items()}
NP_OF = {"F64": np.float64, "F32": np.float32, "F16": np.float16}


def tensor_bytes(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for k, t in tensors.items():
        b = tensor_bytes(t)
        header[k] = {"dtype": ST_NAME[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
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
    header.pop("__metadata__", None)
    body = data[8 + n:]
    out = {}
    for k, v in header.items():
        a, b = v["data_offsets"]
        raw = body[a:b]
        if v["dtype"] == "BF16":
            t = torch.from_numpy(np.frombuffer(raw, dtype="<i2").copy()).view(torch.bfloat16)
        else:
            t = torch.from_numpy(np.frombuffer(raw, dtype=np.dtype(NP_OF[v["dtype"]]).newbyteorder("<")).astype(NP_OF[v["dtype"]]))
        out[k] = t.reshape(v["shape"])
    return out


def same_tensors(a, b):
    assert list(a.keys()) == list(b.keys()), (list(a.keys()), list(b.keys()))
    for k in a:
        x, y = a[k], b[k]
        assert x.dtype == y.dtype and tuple(x.shape) == tuple(y.shape), k
        assert torch.equal(x.view(torch.int16) if x.dtype == torch.bfloat16 else x,
                           y.view(torch.int16) if y.dtype == torch.bfloat16 else y), k


# ---------------------------------------------------------------------------
# the model family


class Holder(nn.Module):
    pass


class Net(nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.spec = spec
        V, In, H, L, bi, C = spec["vocab"], spec["input"], spec["hidden"], spec["layers"], spec["bidirectional"], spec["classes"]
        p = spec["prefixes"]
        if p["embedding"] is not None:
            setattr(self, p["embedding"], nn.Embedding(V, In))
        lstm = nn.LSTM(In, H, num_layers=L, bidirectional=bi, batch_first=True, bias=spec["lstm_bias"])
        if "." in p["lstm"]:
            outer, inner = p["lstm"].split(".")
            setattr(self, outer, Holder())
            setattr(getattr(self, outer), inner, lstm)
        else:
            setattr(self, p["lstm"], lstm)
        setattr(self, p["decoder"], nn.Linear(H * (2 if bi else 1), C, bias=spec["decoder_bias"]))

    def mod(self, role):
        m = self
        for part in self.spec["prefixes"][role].split("."):
            m = getattr(m, part)
        return m

    def embed_ids(self, ids):
        return self.mod("embedding").weight[torch.as_tensor(ids)].detach().clone()

    def forward(self, e):  # e: (B, T, In) -> logits (B, C)
        _, (h_n, _) = self.mod("lstm")(e)
        hid = torch.cat((h_n[-2], h_n[-1]), dim=-1) if self.spec["bidirectional"] else h_n[-1]
        return self.mod("decoder")(hid)


def init_weights(net, spec, seed):
    rs = np.random.RandomState(seed)
    H, scale = spec["hidden"], spec["scale"]
    dirs = 2 if spec["bidirectional"] else 1
    store = ST_TORCH[spec["dtype"]]
    with torch.no_grad():
        for name, prm in net.named_parameters():
            emb = spec["prefixes"]["embedding"]
            if emb is not None and name == emb + ".weight":
                v = rs.standard_normal(prm.shape)
            elif name.startswith(spec["prefixes"]["decoder"] + "."):
                k = 1 / math.sqrt(H * dirs)
                v = scale * rs.uniform(-k, k, size=prm.shape)
            else:
                k = 1 / math.sqrt(H)
                v = scale * rs.uniform(-k, k, size=prm.shape)
            prm.copy_(torch.from_numpy(v).to(store).to(torch.float64))


def numpy_params(net, spec):
    lstm = net.mod("lstm")
    H, L = spec["hidden"], spec["layers"]
    dirs = 2 if spec["bidirectional"] else 1
    layers = []
    for l in range(L):
        ds = []
        for k in range(dirs):
            sfx = "_l%d%s" % (l, "_reverse" if k else "")
            W_ih = getattr(lstm, "weight_ih" + sfx).detach().numpy().copy()
            W_hh = getattr(lstm, "weight_hh" + sfx).detach().numpy().copy()
            if spec["lstm_bias"]:
                b_ih = getattr(lstm, "bias_ih" + sfx).detach().numpy().copy()
                b_hh = getattr(lstm, "bias_hh" + sfx).detach().numpy().copy()
            else:
                b_ih = np.zeros(4 * H)
                b_hh = np.zeros(4 * H)
            ds.append(dict(W_ih=W_ih, W_hh=W_hh, b_ih=b_ih, b_hh=b_hh))
        layers.append(ds)
    dec = net.mod("decoder")
    W_dec = dec.weight.detach().numpy().copy()
    b_dec = dec.bias.detach().numpy().copy() if spec["decoder_bias"] else np.zeros(spec["classes"])
    return dict(layers=layers, W_dec=W_dec, b_dec=b_dec, H=H)


# ---------------------------------------------------------------------------
# LRP: Arras et al.'s loop extended to stacked / uni / bidirectional LSTMs


def np_forward(P, x):
    """Forward pass in NumPy, in the arithmetic order of their LSTM_bidi.forward
    (PyTorch's gate order i,f,g,o)."""
    H = P["H"]
    T = x.shape[0]
    ii, ff, gg, oo = (np.arange(k * H, (k + 1) * H) for k in range(4))
    ifo = np.hstack((ii, ff, oo))
    states, inp = [], x
    for dirs in P["layers"]:
        st_l = []
        for k, p in enumerate(dirs):
            xs = inp if k == 0 else inp[::-1, :].copy()
            h = np.zeros((T + 1, H))
            c = np.zeros((T + 1, H))
            pre = np.zeros((T, 4 * H))
            gates = np.zeros((T, 4 * H))
            for t in range(T):
                pre[t] = np.dot(p["W_ih"], xs[t]) + np.dot(p["W_hh"], h[t - 1]) + p["b_ih"] + p["b_hh"]
                gates[t, ifo] = 1.0 / (1.0 + np.exp(-pre[t, ifo]))
                gates[t, gg] = np.tanh(pre[t, gg])
                c[t] = gates[t, ff] * c[t - 1] + gates[t, ii] * gates[t, gg]
                h[t] = gates[t, oo] * np.tanh(c[t])
            st_l.append(dict(x=xs, h=h, c=c, pre=pre, gates=gates))
        outs = [st_l[0]["h"][:T]] + ([st_l[1]["h"][:T][::-1, :]] if len(dirs) == 2 else [])
        inp = np.concatenate(outs, axis=1)
        states.append(st_l)
    hfin = np.concatenate([st["h"][T - 1] for st in states[-1]])
    logits = np.dot(P["W_dec"], hfin) + P["b_dec"]
    return states, logits


def lrp_stack(P, x, cls, eps, bias_factor):
    """Returns (features T x E, rest, logits, layer-0 Rx per direction in
    original order)."""
    H = P["H"]
    T = x.shape[0]
    L = len(P["layers"])
    dirs = len(P["layers"][0])
    ii, ff, gg, oo = (np.arange(k * H, (k + 1) * H) for k in range(4))
    states, logits = np_forward(P, x)
    C = logits.shape[0]
    mask = np.zeros(C)
    mask[cls] = 1.0
    I = np.identity(H)
    zH = np.zeros(H)
    rest = 0.0
    R_above = None
    per_dir = None
    for l in reversed(range(L)):
        e_l = x.shape[1] if l == 0 else H * dirs
        R_below = np.zeros((T, e_l))
        per_dir = []
        for k in range(dirs):
            st, p = states[l][k], P["layers"][l][k]
            xs, h, c, pre, gates = st["x"], st["h"], st["c"], st["pre"], st["gates"]
            Rh = np.zeros((T + 1, H))
            Rc = np.zeros((T + 1, H))
            Rx = np.zeros((T, e_l))
            if R_above is None:
                Wk = P["W_dec"][:, k * H:(k + 1) * H]
                Rh[T - 1] = lrp_linear(h[T - 1], Wk.T, P["b_dec"], logits, logits * mask, H * dirs, eps, bias_factor)
            else:
                part = R_above[:, k * H:(k + 1) * H]
                Rh[:T] = part if k == 0 else part[::-1, :]
            b_g = p["b_ih"][gg] + p["b_hh"][gg]
            for t in reversed(range(T)):
                Rc[t] += Rh[t]
                Rc[t - 1] = lrp_linear(gates[t, ff] * c[t - 1], I, zH, c[t], Rc[t], 2 * H, eps, bias_factor)
                Rg = lrp_linear(gates[t, ii] * gates[t, gg], I, zH, c[t], Rc[t], 2 * H, eps, bias_factor)
                Rx[t] = lrp_linear(xs[t], p["W_ih"][gg].T, b_g, pre[t, gg], Rg, H + e_l, eps, bias_factor)
                Rh[t - 1] += lrp_linear(h[t - 1], p["W_hh"][gg].T, b_g, pre[t, gg], Rg, H + e_l, eps, bias_factor)
            rest += Rh[-1].sum() + Rc[-1].sum()
            Rx_orig = Rx if k == 0 else Rx[::-1, :].copy()
            per_dir.append(Rx_orig)
            R_below += Rx_orig
        R_above = R_below
    return R_above, rest, logits, per_dir


# ---------------------------------------------------------------------------
# references

QUAD_NAME = {"gausslegendre": "gauss-legendre", "riemann_left": "riemann-left", "riemann_right": "riemann-right",
             "riemann_middle": "riemann-middle", "riemann_trapezoid": "riemann-trapezoid"}


def fl(a):
    return np.asarray(a, dtype=np.float64).tolist()


def result(method, features, tokens, quadrature=None, steps=0, eps=0.0, bias_factor=0.0, delta=0.0, **extra):
    r = {"method": method, "quadrature": quadrature, "steps": steps, "eps": float(eps), "bias_factor": float(bias_factor),
         "features": None if features is None else fl(features), "tokens": fl(tokens), "delta": float(delta)}
    r.update(extra)
    return r


def ig_f64(net, e, c, alphas, weights):
    """IG in pure float64 with the given nodes and weights (Captum's batching)."""
    scaled = torch.cat([alpha * e for alpha in alphas], dim=0).requires_grad_()
    out = net(scaled)[:, c]
    (g,) = torch.autograd.grad(out.sum(), scaled)
    w = torch.tensor(weights, dtype=torch.float64).view(-1, 1, 1)
    tot = (g * w).sum(0, keepdim=True)
    return (tot * e)[0]


def check_close(a, b, tol, what):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    err = np.max(np.abs(a - b)) if a.size else 0.0
    scale = max(1.0, np.max(np.abs(b)) if b.size else 0.0)
    assert err <= tol * scale, "%s: max |diff| %g > %g" % (what, err, tol * scale)
    return err


def case_refs(net, spec, P, case, extra_ig=False, extra_lrp=False, ig_check=False):
    with torch.no_grad():
        if case["ids"] is not None:
            e = net.embed_ids(case["ids"]).unsqueeze(0)
        else:
            e = torch.tensor(case["features_in"], dtype=torch.float64).unsqueeze(0)
        logits = net(e)[0]
        zero_logits = net(torch.zeros_like(e))[0]
    T = e.shape[1]
    lg = logits.numpy()
    pred = int(np.argmax(lg))
    c = pred if not case["other_class"] else (pred + 1) % spec["classes"]
    assert case["other_class"] == (c != pred)
    fc, f0 = float(lg[c]), float(zero_logits[c])
    results = []

    # saliency, checked against autograd
    sal = Saliency(net).attribute(e, target=c, abs=False).detach()[0]
    e2 = e.clone().requires_grad_()
    (g,) = torch.autograd.grad(net(e2)[0, c], e2)
    check_close(sal.numpy(), g[0].numpy(), 1e-13, "saliency vs autograd")
    results.append(result("saliency", sal.numpy(), sal.sum(-1).numpy()))
    gxi = InputXGradient(net).attribute(e, target=c).detach()[0]
    check_close(gxi.numpy(), (g[0] * e[0]).numpy(), 1e-13, "gxi vs autograd")
    results.append(result("gxi", gxi.numpy(), gxi.sum(-1).numpy()))

    # integrated gradients
    ig = IntegratedGradients(net)
    runs = [("gausslegendre", 50)] + [(m, 20) for m in ("riemann_left", "riemann_right", "riemann_middle", "riemann_trapezoid")]
    if extra_ig:
        runs += [("gausslegendre", 1), ("gausslegendre", 7)]
    for m, n in runs:
        attr, delta = ig.attribute(e, baselines=torch.zeros_like(e), target=c, n_steps=n, method=m,
                                   return_convergence_delta=True)
        attr = attr.detach()[0]
        delta = float(delta.item())
        step_sizes, alphas = (fn(n) for fn in approximation_parameters(m))
        alphas = [float(a) for a in alphas]
        w64 = [float(w) for w in step_sizes]
        w32 = torch.tensor(step_sizes).float().double().tolist()
        # Captum's output = the same sum with float32-rounded weights
        mine32 = ig_f64(net, e, c, alphas, w32).detach()
        check_close(attr.numpy(), mine32.numpy(), 1e-12, "captum IG %s n=%d vs own (f32 weights)" % (m, n))
        assert abs(delta - (float(attr.sum()) - (fc - f0))) <= 1e-12 * max(1, abs(fc), abs(f0)), "captum delta"
        mine64 = ig_f64(net, e, c, alphas, w64).detach()
        d64 = float(mine64.sum()) - (fc - f0)
        results.append(result("ig", attr.numpy(), attr.sum(-1).numpy(), quadrature=QUAD_NAME[m], steps=n, delta=delta,
                              alphas=alphas, weights=w32, weights_f64=w64,
                              features_f64=fl(mine64.numpy()) if T <= F64_FEATURES_MAX_T else None,
                              tokens_f64=fl(mine64.sum(-1).numpy()), delta_f64=d64))
    if ig_check:
        attr, delta = ig.attribute(e, baselines=torch.zeros_like(e), target=c, n_steps=2000, method="gausslegendre",
                                   return_convergence_delta=True)
        lim = 1e-6 * max(1.0, abs(fc - f0))
        assert abs(float(delta)) < lim, "IG 2000 GL steps: |delta| %g >= %g" % (float(delta), lim)
        w_fn, a_fn = approximation_parameters("gausslegendre")
        mine64 = ig_f64(net, e, c, [float(a) for a in a_fn(2000)], [float(w) for w in w_fn(2000)])
        d64 = float(mine64.sum()) - (fc - f0)
        assert abs(d64) < 1e-9 * max(1.0, abs(fc - f0)), "pure-f64 IG 2000 GL steps: |delta| %g" % d64
        case["_ig2000"] = (float(delta), d64)

    # occlusion
    with torch.no_grad():
        occ = e.repeat(T, 1, 1)
        for t in range(T):
            occ[t, t, :] = 0
        occ_logits = net(occ)[:, c]
        single = [float(net(occ[t:t + 1])[0, c]) for t in range(min(T, 3))]
    check_close(occ_logits[:len(single)].numpy(), single, 1e-12, "batched occlusion vs single")
    results.append(result("occlusion", None, (fc - occ_logits).numpy()))

    # LRP
    x = e[0].numpy().copy()
    lrps = [(0.001, 0.0), (0.001, 1.0)] + ([(0.1, 0.0)] if extra_lrp else [])
    lrp_out = []
    for eps, bf in lrps:
        R, rest, np_logits, per_dir = lrp_stack(P, x, c, eps, bf)
        check_close(np_logits, lg, 1e-12, "numpy forward vs torch logits")
        # conditioning: eps-LRP can blow up (relevances of 1e17 on bi3 at T=200,
        # all rounding noise); a reference must not
        amp = max(np.abs(R).max(), abs(rest)) / max(1.0, abs(fc))
        assert amp < LRP_MAX_AMPLIFICATION, "LRP relevances %g times |f_c|: ill-conditioned case" % amp
        case["_lrp_amp"] = max(case.get("_lrp_amp", 0.0), amp)
        if bf == 1.0:
            gap = R.sum() + rest - fc
            assert abs(gap) <= 1e-12 * max(1.0, abs(fc), np.abs(R).sum()), "LRP conservation gap %g" % gap
        lrp_out.append((eps, bf, R, rest, per_dir))
        results.append(result("lrp", R, R.sum(-1), eps=eps, bias_factor=bf, rest=float(rest)))

    out = {"ids": None if case["ids"] is None else [int(i) for i in case["ids"]],
           "features_in": case["features_in"], "logits": fl(lg), "baseline_logits": fl(zero_logits.numpy()),
           "predicted": pred, "class": c, "results": results}
    return out, lrp_out


# ---------------------------------------------------------------------------
# the fixtures


def make_cases(spec, seed, Ts, repeat_at, other_at):
    rs = np.random.RandomState(seed)
    cases = []
    for j, T in enumerate(Ts):
        if spec["prefixes"]["embedding"] is not None:
            ids = rs.randint(0, spec["vocab"], size=T)
            if j == repeat_at:
                tok = int(rs.randint(0, spec["vocab"]))
                k = min(T, max(3, T // 4))
                ids[rs.choice(T, size=k, replace=False)] = tok
            cases.append(dict(ids=[int(i) for i in ids], features_in=None, other_class=(j == other_at)))
        else:
            X = rs.standard_normal((T, spec["input"]))
            if j == repeat_at:
                row = rs.standard_normal(spec["input"])
                k = min(T, max(3, T // 4))
                X[rs.choice(T, size=k, replace=False)] = row
            cases.append(dict(ids=None, features_in=fl(X), other_class=(j == other_at)))
    return cases


def spec_of(name, V, In, H, L, bi, C, dtype, prefixes, lstm_bias=True, decoder_bias=True, scale=2.0):
    return {"name": name, "dtype": dtype, "prefixes": dict(zip(("embedding", "lstm", "decoder"), prefixes)),
            "vocab": V, "input": In, "hidden": H, "layers": L, "bidirectional": bi, "classes": C,
            "lstm_bias": lstm_bias, "decoder_bias": decoder_bias, "scale": scale}


def save_model(net, spec, files):
    """files: list of (filename, torch dtype). Saves and checks the reload."""
    written = []
    for fname, dt in files:
        path = os.path.join(HERE, fname)
        m = copy.deepcopy(net).to(dt)
        sd = m.state_dict()
        ref = {k: v.detach().clone() for k, v in sd.items()}
        if fname.endswith(".safetensors"):
            write_safetensors(path, ref)
            back = read_safetensors(path)
        else:
            if fname == "legacy.pt":
                # the legacy format names each storage by its memory address
                # (str(storage._cdata)) and writes them sorted by that name, so
                # its bytes differ from run to run: keep an equivalent file
                keep = False
                if os.path.exists(path) and not zipfile.is_zipfile(path):
                    try:
                        same_tensors(ref, torch.load(path))
                        keep = True
                    except AssertionError:
                        pass
                if not keep:
                    torch.save(sd, path, _use_new_zipfile_serialization=False)
                assert not zipfile.is_zipfile(path)
            else:
                torch.save(sd, path)
            back = torch.load(path)
        same_tensors(ref, back)
        # the stored numbers upcast are the reference's float64 weights
        for k, v in net.state_dict().items():
            assert torch.equal(back[k].to(torch.float64), v), "%s: %s not the reference weights" % (fname, k)
        written.append((fname, ST_NAME[dt]))
    return written


def model_json(spec, written, cases, **extra):
    j = {"name": spec["name"], "files": [f for f, _ in written], "dtype": spec["dtype"],
         "file_dtypes": {f: d for f, d in written}, "prefixes": spec["prefixes"], "vocab": spec["vocab"],
         "input": spec["input"], "hidden": spec["hidden"], "layers": spec["layers"],
         "bidirectional": spec["bidirectional"], "classes": spec["classes"], "lstm_bias": spec["lstm_bias"],
         "decoder_bias": spec["decoder_bias"], "init_scale": spec["scale"]}
    j.update(extra)
    j["cases"] = cases
    return j


def write_json(name, j):
    path = os.path.join(HERE, name + ".json")
    s = json.dumps(j, separators=(",", ":"), allow_nan=False)
    with open(path, "w") as f:
        f.write(s + "\n")
    with open(path) as f:
        assert json.load(f) == j
    print("wrote %s (%d bytes)" % (name + ".json", len(s) + 1), flush=True)


def build(spec, seed, Ts, repeat_at, other_at, files, extra_case=1, **extra):
    if ONLY and spec["name"] not in ONLY:
        return None, None
    torch.manual_seed(seed)
    net = Net(spec)
    init_weights(net, spec, seed)
    net.eval()
    written = save_model(net, spec, files)
    P = numpy_params(net, spec)
    cases = make_cases(spec, seed + 1, Ts, repeat_at, other_at)
    small = int(np.argmin(Ts))
    out = []
    for j, cs in enumerate(cases):
        r, _ = case_refs(net, spec, P, cs, extra_ig=(j == extra_case), extra_lrp=(j == extra_case), ig_check=(j == small))
        out.append(r)
        if "_ig2000" in cs:
            print("  %s case %d: IG 2000 GL steps delta captum %.3g, pure f64 %.3g" % ((spec["name"], j) + cs["_ig2000"]))
        print("  %s case %d (T=%d): max LRP |R|/max(1,|f_c|) = %.3g" % (spec["name"], j, Ts[j], cs["_lrp_amp"]))
    j = model_json(spec, written, out, **extra)
    write_json(spec["name"], j)
    return net, j


def build_arras():
    """Arras et al.'s trained SST model with a fixed seeded embedding."""
    if ONLY and "arras" not in ONLY:
        return
    with open(os.path.join(LRP_ROOT, "model", "model"), "rb") as f:
        m = pickle.load(f)
    d = m["Wxh_Left"].shape[0] // 4
    e_dim = m["Wxh_Left"].shape[1]
    C = m["Why_Left"].shape[0]
    V = 120
    E = np.random.RandomState(1010).standard_normal((V, e_dim)) * 0.5
    tmp = tempfile.mkdtemp(prefix="arras_model_")
    try:
        shutil.copy(os.path.join(LRP_ROOT, "model", "model"), tmp)
        shutil.copy(os.path.join(LRP_ROOT, "model", "vocab"), tmp)
        np.save(os.path.join(tmp, "embeddings.npy"), E)
        theirs = LSTM_bidi(tmp + "/")
        spec = spec_of("arras", V, e_dim, d, 1, True, C, "F64", ("embedding", "lstm", "classifier"),
                       lstm_bias=True, decoder_bias=False, scale=None)
        net = Net(spec)
        # their gate order i,g,f,o -> PyTorch's i,f,g,o
        perm = np.concatenate([np.arange(0, d), np.arange(2 * d, 3 * d), np.arange(d, 2 * d), np.arange(3 * d, 4 * d)])
        lstm = net.mod("lstm")
        with torch.no_grad():
            net.mod("embedding").weight.copy_(torch.from_numpy(E))
            for side, sfx in (("Left", "_l0"), ("Right", "_l0_reverse")):
                getattr(lstm, "weight_ih" + sfx).copy_(torch.from_numpy(m["Wxh_" + side][perm]))
                getattr(lstm, "weight_hh" + sfx).copy_(torch.from_numpy(m["Whh_" + side][perm]))
                getattr(lstm, "bias_ih" + sfx).copy_(torch.from_numpy(m["bxh_" + side][perm]))
                getattr(lstm, "bias_hh" + sfx).copy_(torch.from_numpy(m["bhh_" + side][perm]))
            net.mod("decoder").weight.copy_(torch.from_numpy(np.hstack((m["Why_Left"], m["Why_Right"]))))
        net.eval()
        written = save_model(net, spec, [("arras.safetensors", torch.float64), ("arras.pt", torch.float64)])
        P = numpy_params(net, spec)
        Ts = [1, 2, 7, 23]
        cases = make_cases(spec, 1011, Ts, 2, 1)
        out = []
        worst = 0.0
        for j, cs in enumerate(cases):
            r, lrp_out = case_refs(net, spec, P, cs, extra_ig=(j == 1), extra_lrp=(j == 1), ig_check=(j == 0))
            c = r["class"]
            # their forward's scores == the PyTorch model's logits
            grad_l, grad_r = theirs.backward(np.array(cs["ids"]), c)
            s = theirs.s.copy()
            worst = max(worst, check_close(s, r["logits"], 1e-12, "arras: their s vs torch logits"))
            sal = [x for x in r["results"] if x["method"] == "saliency"][0]
            check_close(grad_l + grad_r, sal["features"], 1e-12, "arras: their backward vs saliency")
            for eps, bf, R, rest, per_dir in lrp_out:
                Rx, Rx_rev, their_rest = theirs.lrp(np.array(cs["ids"]), c, eps, bf)
                worst = max(worst, check_close(per_dir[0], Rx, 1e-12, "arras LRP left"))
                worst = max(worst, check_close(per_dir[1], Rx_rev, 1e-12, "arras LRP right"))
                worst = max(worst, check_close(R, Rx + Rx_rev, 1e-12, "arras LRP sum"))
                worst = max(worst, check_close(R.sum(-1), (Rx + Rx_rev).sum(-1), 1e-12, "arras LRP tokens"))
                worst = max(worst, check_close([rest], [their_rest], 1e-12, "arras LRP rest"))
            out.append(r)
            if "_ig2000" in cs:
                print("  arras case %d: IG 2000 GL steps delta captum %.3g, pure f64 %.3g" % ((j,) + cs["_ig2000"]))
        print("  arras: max |ours - theirs| (logits, LRP per direction/sum/rest) = %.3g" % worst)
        j = model_json(spec, written, out, embedding_note="embedding.weight = 0.5*N(0,1), numpy RandomState(1010), V=120 "
                       "(their embeddings.npy is not in their repository); LSTM/decoder weights from their model/model "
                       "(gate rows i,g,f,o -> i,f,g,o; bxh -> bias_ih, bhh -> bias_hh; decoder = [Why_Left | Why_Right], no bias)")
        write_json("arras", j)
    finally:
        shutil.rmtree(tmp)


def main():
    f32, f64 = torch.float32, torch.float64
    # 1. uni1
    uni1 = spec_of("uni1", 50, 16, 8, 1, False, 3, "F64", ("embedding", "lstm", "fc"))
    _, j_uni1 = build(uni1, 101, [1, 2, 7, 23, 200], 2, 3, [("uni1.safetensors", f64), ("uni1.pt", f64)])
    # 7. legacy: uni1's weights, legacy torch.save format
    if j_uni1 is None:
        j_uni1 = json.load(open(os.path.join(HERE, "uni1.json")))
    torch.manual_seed(101)
    net = Net(uni1)
    init_weights(net, uni1, 101)
    written = save_model(net, uni1, [("legacy.pt", f64)])
    jl = dict(j_uni1)
    jl.update(name="legacy", files=["legacy.pt"], file_dtypes={"legacy.pt": "F64"}, same_as="uni1",
              note="uni1's weights saved with torch.save(..., _use_new_zipfile_serialization=False); "
                   "the references are uni1's (its cases with T <= 7 are repeated here)",
              cases=[c for c in j_uni1["cases"] if len(c["ids"]) <= 7])
    write_json("legacy", jl)
    # 2. bi2
    build(spec_of("bi2", 40, 12, 16, 2, True, 4, "F32", ("embed", "rnn", "out")), 202, [1, 7, 23, 200], 1, 2,
          [("bi2.safetensors", f32), ("bi2.pt", f32)])
    # 3. uni3nobias (f32-representable weights, stored F64 in safetensors and F32 in .pt)
    build(spec_of("uni3nobias", 30, 10, 32, 3, False, 2, "F32", ("emb", "encoder.lstm", "classifier"),
                  lstm_bias=False, decoder_bias=False, scale=3.0), 303, [1, 7, 50, 200], 2, 1,
          [("uni3nobias.safetensors", f64), ("uni3nobias.pt", f32)])
    # 4. dense_bi1
    build(spec_of("dense_bi1", None, 7, 24, 1, True, 3, "F64", (None, "lstm", "decoder")), 404, [1, 2, 23, 200], 2, 1,
          [("dense_bi1.safetensors", f64), ("dense_bi1.pt", f64)])
    # 5. bi3 (bigger scale 4: ~10% of the gates saturate; T <= 23 because eps-LRP
    # with bias_factor 1 blows up on it for longer inputs: max|R|/|f_c| ~ 5e3 at
    # T=50, 1e7 at T=200 (2e17 at scale 5), all rounding noise)
    build(spec_of("bi3", 25, 6, 8, 3, True, 5, "F32", ("embedding", "lstm", "fc"), scale=4.0), 505, [1, 2, 7, 23], 2, 1,
          [("bi3.safetensors", f32), ("bi3.pt", f32)])
    # 6. f16 and bf16: the same model, rounded to each type
    for name, dt, st in (("f16", torch.float16, "F16"), ("bf16", torch.bfloat16, "BF16")):
        build(spec_of(name, 20, 8, 12, 2, True, 3, st, ("embed", "lstm", "classifier")), 606, [1, 7, 200], 1, 2,
              [(name + ".safetensors", dt)])
    # 8. / 9. benchmark models
    build(spec_of("bench_h256", 200, 100, 256, 1, False, 5, "F32", ("embedding", "lstm", "fc")), 808, [1, 40, 1], 1, 2,
          [("bench_h256.safetensors", f32)])
    build(spec_of("bench_bi2_h64", 200, 16, 64, 2, True, 5, "F32", ("embed", "encoder.lstm", "decoder")), 909,
          [3, 200, 3], 1, 2, [("bench_bi2_h64.safetensors", f32)])
    # 10. arras
    build_arras()
    total = sum(os.path.getsize(os.path.join(HERE, f)) for f in os.listdir(HERE))
    print("model/testdata: %d bytes in all" % total)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""An independent float64 reference for `whitebox attribute`, in PyTorch.

It rebuilds the four white-box networks the way the authors' released code
does (an nn.LSTM plus a linear decoder, weights set in PyTorch's layout) and
computes the five methods the way the paper's set-up does: Captum's Saliency
(abs=False), InputXGradient, IntegratedGradients (zero baseline, Gauss-Legendre
nodes from numpy.polynomial.legendre.leggauss, steps as a batch) and Occlusion
(one row at a time, baseline 0), and Arras et al.'s NumPy LRP loop. Captum
itself is not needed: its few lines of arithmetic are written out below.

Differences from the authors' set-up, on purpose: float64 instead of float32,
and one-hot columns for the alphabet only (their torchtext vocabularies add
<unk> and <pad>, which multiplies their occlusion scores by |alphabet|+2).

Usage: reference.py -net NET -method METHOD [-class C] [-m M] [-u U] [-k K]
                    [-steps N] INPUT...   (prints the CLI's JSON lines)
"""
import argparse
import json
import math

import numpy as np
import torch

torch.set_default_dtype(torch.float64)

ALPHABETS = {"counting": "ab", "sp-counter": "abcd", "sp-fsa": "abcd", "bracket": "([)]"}
CLASSES = {"counting": ["False", "True"], "sp-counter": ["False", "True"],
           "sp-fsa": ["False", "True"], "bracket": [")", "]", "None"]}

SP_DELTA = [[1, 2, 3, 2], [1, 8, 4, 5], [5, 2, 8, 2], [4, 6, 3, 8], [4, 8, 4, 8],
            [5, 8, 8, 5], [7, 6, 8, 8], [7, 8, 8, 8], [8, 8, 8, 8]]


def gates(h, d, m):
    """Default gates as in the authors' WhiteBoxRNN: weights 0, bias m."""
    return {g: [np.zeros((h, h)), np.zeros((h, d)), m * np.ones(h)] for g in "ifgo"}


def counting(m, u):
    h, d = 1, 2
    p = gates(h, d, m)
    p["g"] = [np.zeros((h, h)), np.array([[u, -u]]), np.zeros(h)]
    w = np.array([[0.0], [1.0]])
    b = np.array([np.tanh(np.tanh(u)) / 2, 0.0])
    return p, w, b


def sp_counter(m, u):
    h, d = 7, 4
    p = gates(h, d, m)
    wcx = np.zeros((h, d))
    for i in range(4):
        wcx[i, i] = u
        if i > 0:
            wcx[i + 3, i] = u
    p["g"] = [np.zeros((h, h)), wcx, np.zeros(h)]
    wih = np.zeros((h, h))
    wih[4, 0] = wih[5, 1] = wih[5, 3] = wih[6, 2] = 2 * m
    bi = np.empty(h)
    bi[:4], bi[4:] = m, -m
    p["i"] = [wih, np.zeros((h, d)), bi]
    w = np.zeros((2, h))
    w[1, 4:] = 1.0
    b = np.array([np.tanh(np.tanh(u)) / 20, 0.0])
    return p, w, b


def sp_fsa(m, u):
    n, s = len(SP_DELTA), 4
    h = n * s
    p = gates(h, s, m)
    p["f"][2] = -m * np.ones(h)
    p["g"] = [np.zeros((h, h)), u * np.tile(np.identity(s), (n, 1)), np.zeros(h)]
    bi = -m * np.ones(h)
    for a in range(s):
        bi[SP_DELTA[0][a] * s + a] = m
    wih = np.empty((h, n))
    wih[:] = -m - np.expand_dims(bi, axis=1)
    for q in range(n):
        for a in range(s):
            r = SP_DELTA[q][a] * s + a
            wih[r, q] = m - bi[r]
    p["i"] = [wih.repeat(s, axis=1), np.zeros((h, s)), bi]
    w = np.zeros((2, n))
    w[1, -1] = 1.0
    w[0, :-1] = 1.0
    return p, w.repeat(s, axis=1), np.zeros(2)


def bracket(m, k):
    n, h, d = k, 2 * k + 2, 4
    a = np.identity(n)
    a[:-1, 1:] -= np.identity(n - 1)
    a_up = np.concatenate([a[1:], np.zeros((1, n))])
    a_down = np.concatenate([np.zeros((1, n)), a[:-1]])
    p = gates(h, d, m)
    wfh = np.zeros((h, h))
    wfh[:n, n:2 * n] = a_up
    wfh[n:2 * n, n:2 * n] = a
    wfh *= -2.0 * m
    wfx = np.zeros((h, d))
    wfx[:2 * n, 0] = wfx[:2 * n, 1] = 1
    wfx *= 2.0 * m
    bf = np.ones(h)
    bf[:2 * n] *= m
    bf[2 * n:] *= -m
    p["f"] = [wfh, wfx, bf]
    wch = np.zeros((h, h))
    wch[:n, -2] = 1
    wch[-2, :n] = [2.0 ** (i + 1.0) for i in range(n)]
    wch[-1, n:2 * n] = -np.tanh(1.0)
    wch *= m / np.tanh(1.0)
    wcx = np.zeros((h, d))
    wcx[n:2 * n, 0] = wcx[n:2 * n, 1] = 1
    wcx[-2, 0], wcx[-2, 1] = 2.0 ** (n + 1), -(2.0 ** (n + 1))
    wcx[-1, 0] = wcx[-1, 1] = -2.0
    wcx *= m
    bc = np.zeros(h)
    bc[-1] = 1.5 * m
    p["g"] = [wch, wcx, bc]
    wih = np.zeros((h, h))
    wih[:n, n:2 * n] = a
    wih[n:2 * n, n:2 * n] = a_down
    wih *= 2.0 * m
    wix = np.zeros((h, d))
    wix[:n, 2] = wix[:n, 3] = 2.0
    wix[n, 0] = wix[n, 1] = -2.0
    wix *= -m
    bi = np.ones(h)
    bi[-2:] = -1.0
    bi *= -m
    p["i"] = [wih, wix, bi]
    w = np.zeros((3, h))
    w[:, -1] = 1
    w[0, -2:] = [1.0, 0.0]
    w[1, -2:] = [-1.0, 0.0]
    return p, w, np.zeros(3)


class Classifier(torch.nn.Module):
    def __init__(self, p, w, b):
        super().__init__()
        h, d = p["i"][1].shape
        self.h = h
        self.lstm = torch.nn.LSTM(d, h, batch_first=True)
        self.dec = torch.nn.Linear(h, w.shape[0])
        with torch.no_grad():
            self.lstm.weight_hh_l0.copy_(torch.tensor(np.concatenate([p[g][0] for g in "ifgo"])))
            self.lstm.weight_ih_l0.copy_(torch.tensor(np.concatenate([p[g][1] for g in "ifgo"])))
            self.lstm.bias_hh_l0.copy_(torch.tensor(np.concatenate([p[g][2] for g in "ifgo"])))
            self.lstm.bias_ih_l0.zero_()
            self.dec.weight.copy_(torch.tensor(w))
            self.dec.bias.copy_(torch.tensor(b))
        self.np = {g: [x.astype(np.float64) for x in p[g]] for g in "ifgo"}
        self.w, self.b = w, b

    def forward(self, x):  # x: (batch, T, D)
        _, (h, _) = self.lstm(x)
        return self.dec(h[-1])

    def lrp(self, x, target, eps=0.001):
        """Arras et al.'s LRP, as in the authors' models/lrp_modules.py."""
        from scipy.special import expit
        T = len(x)
        p = self.np
        hs, cs = np.zeros((T, self.h)), np.zeros((T, self.h))
        i, f, g, gpre = (np.zeros((T, self.h)) for _ in range(4))
        for t in range(T):
            hp = np.zeros(self.h) if t == 0 else hs[t - 1]
            cp = np.zeros(self.h) if t == 0 else cs[t - 1]
            i[t] = expit(p["i"][1] @ x[t] + p["i"][0] @ hp + p["i"][2])
            f[t] = expit(p["f"][1] @ x[t] + p["f"][0] @ hp + p["f"][2])
            gpre[t] = p["g"][1] @ x[t] + p["g"][0] @ hp + p["g"][2]
            g[t] = np.tanh(gpre[t])
            o = expit(p["o"][1] @ x[t] + p["o"][0] @ hp + p["o"][2])
            cs[t] = f[t] * cp + i[t] * g[t]
            hs[t] = o * np.tanh(cs[t])

        def lrp_linear(a, y, rel_y, w=None):
            y = y + eps * np.where(y >= 0, 1.0, -1.0)
            if w is None:
                return a * (rel_y / y)
            return (w * a[:, np.newaxis]) @ (rel_y / y)

        out = self.w @ hs[-1] + self.b
        rel_y = np.zeros(len(out))
        rel_y[target] = out[target]
        rel_h = np.zeros((T + 1, self.h))
        rel_c = np.zeros((T + 1, self.h))
        rel_h[T] = lrp_linear(hs[-1], self.w @ hs[-1], rel_y, self.w.T)
        rel_x = np.zeros(x.shape)
        for t in reversed(range(T)):
            rel_c[t + 1] += rel_h[t + 1]
            cp = np.zeros(self.h) if t == 0 else cs[t - 1]
            rel_c[t] = lrp_linear(f[t] * cp, cs[t], rel_c[t + 1])
            rel_g = lrp_linear(i[t] * g[t], cs[t], rel_c[t + 1])
            rel_x[t] = lrp_linear(x[t], gpre[t], rel_g, p["g"][1].T)
            hp = np.zeros(self.h) if t == 0 else hs[t - 1]
            rel_h[t] += lrp_linear(hp, gpre[t], rel_g, p["g"][0].T)
        return rel_x


def gradients(model, x, target):
    x = x.clone().requires_grad_(True)
    y = model(x)[:, target].sum()
    (g,) = torch.autograd.grad(y, x)
    return g


def attribute(model, method, x, target, steps):
    """Token scores (T,) and the IG delta, Captum's arithmetic."""
    xb = x.unsqueeze(0)
    if method == "saliency":
        return gradients(model, xb, target)[0].sum(1), None
    if method == "gxi":
        return (xb * gradients(model, xb, target))[0].sum(1), None
    if method == "ig":
        nodes, weights = np.polynomial.legendre.leggauss(steps)
        alphas = torch.tensor(0.5 * (nodes + 1))
        sizes = torch.tensor(0.5 * weights)
        scaled = alphas.view(-1, 1, 1) * xb
        g = gradients(model, scaled, target)
        total = (g * sizes.view(-1, 1, 1)).sum(0)
        r = (total * x).sum(1)
        with torch.no_grad():
            y = model(xb)[0, target] - model(torch.zeros_like(xb))[0, target]
        return r, float(r.sum() - y)
    if method == "occlusion":
        with torch.no_grad():
            y = model(xb)[0, target]
            out = []
            for t in range(len(x)):
                occ = xb.clone()
                occ[0, t] = 0
                out.append(y - model(occ)[0, target])
        return torch.stack(out), None
    if method == "lrp":
        return torch.tensor(model.lrp(x.numpy(), target).sum(1)), None
    raise SystemExit("unknown method " + method)


def build(net, m, u, k):
    if net == "counting":
        return counting(m, u if u else 0.5)
    if net == "sp-counter":
        return sp_counter(m, u if u else 0.7)
    if net == "sp-fsa":
        return sp_fsa(m, u if u else 1.0)
    return bracket(m, k if k else 50)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-net", required=True)
    ap.add_argument("-method", required=True)
    ap.add_argument("-class", dest="cls", default="")
    ap.add_argument("-m", type=float, default=50.0)
    ap.add_argument("-u", type=float, default=0.0)
    ap.add_argument("-k", type=int, default=0)
    ap.add_argument("-steps", type=int, default=50)
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    model = Classifier(*build(a.net, a.m, a.u, a.k))
    alphabet, classes = ALPHABETS[a.net], CLASSES[a.net]
    for s in a.inputs:
        x = torch.zeros(len(s), len(alphabet))
        for t, c in enumerate(s):
            x[t, alphabet.index(c)] = 1.0
        with torch.no_grad():
            logits = model(x.unsqueeze(0))[0]
        pred = int(torch.argmax(logits))
        target = classes.index(a.cls) if a.cls else pred
        r, delta = attribute(model, a.method, x, target, a.steps)
        out = {"net": a.net, "method": a.method, "input": s, "tokens": list(s),
               "class": classes[target], "prediction": classes[pred],
               "logits": {c: float(v) for c, v in zip(classes, logits)},
               "scores": [float(v) for v in r]}
        if delta is not None:
            out["delta"] = delta
        print(json.dumps(out))


if __name__ == "__main__":
    main()

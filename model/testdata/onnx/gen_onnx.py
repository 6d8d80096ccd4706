#!/usr/bin/env python3
"""ONNX fixtures for the ONNX import (model/testdata/onnx/).

Builds small float32 PyTorch LSTM classifiers with every head (hn, hn-bf,
last, mean, max; uni- and bidirectional; 1-2 layers; one Linear, or two with
ReLU or Tanh between them, as fc1/fc2, nn.Sequential or a hand-written
matmul), exports each with

    torch.onnx.export(model, ids, path, input_names=["ids"],
                      output_names=["logits"], dynamic_axes={"ids": {1: "T"}},
                      opset_version=N)

(opsets 9 to 17; one export with the sequence axis fixed, one model reading
ids sequence-first, one dense model reading features [1, T, 5] without an
embedding, input_names=["features"], its cases' features_in made from the
ids by a seeded generator), and writes <name>.json with float64 references
(model.double(), the float32 weights upcast) on a few inputs: logits,
baseline logits f(0), saliency, gradient x input, integrated gradients
(Gauss-Legendre, 50 nodes on [0, 1], float64 weights, zero baseline on the
embedding) and occlusion (each token's embedding row set to zero), plus
"logits_f32": the float32 model's logits as PyTorch computes them.

It also writes gru.onnx (nn.GRU: once refused, now read; the GRU exports
with references are gru/gen_gru.py's) and models that must be refused: attention.onnx
(attention over the LSTM's outputs: MatMul, Softmax, ...), custom_op.onnx
(hn_bi1_o11 with its classifier's Gemm moved to a custom domain), cn_head.onnx
(the classifier reads c_n), h0_ones.onnx (an initial state of ones) and
external.onnx (+ external.onnx.data: tensors stored outside the file).

Run from the repository root (torch 1.13 and onnx 1.12, Debian 12's
python3-torch and python3-onnx):

    /usr/bin/python3 -W ignore model/testdata/onnx/gen_onnx.py

It is deterministic: run twice, the same bytes.
"""

import json
import os

import numpy as np
import onnx
import torch
from torch import nn

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
IG_STEPS = 50
V, E, H, C, UNITS = 20, 5, 6, 3, 4


class Net(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s
        dirs = 2 if s["bi"] else 1
        D = H * dirs
        self.embedding = nn.Embedding(V, E)
        self.lstm = nn.LSTM(E, H, num_layers=s["layers"], bidirectional=s["bi"], batch_first=s["batch_first"])
        act = {"relu": nn.ReLU, "tanh": nn.Tanh}.get(s["act"])
        style = s["style"]
        if style == "fc":
            self.fc = nn.Linear(D, C)
        elif style == "fc12":
            self.fc1, self.act, self.fc2 = nn.Linear(D, UNITS), act(), nn.Linear(UNITS, C)
        elif style == "seq":
            self.classifier = nn.Sequential(nn.Linear(D, UNITS), act(), nn.Linear(UNITS, C))
        elif style == "matmul":  # written by hand: MatMul + Add in the graph
            self.w1, self.b1 = nn.Parameter(torch.randn(UNITS, D) * 0.4), nn.Parameter(torch.randn(UNITS) * 0.1)
            self.w2, self.b2 = nn.Parameter(torch.randn(C, UNITS) * 0.4), nn.Parameter(torch.randn(C) * 0.1)
        else:
            raise ValueError(style)

    def head(self, output, h_n):  # output: (B, T, D)
        head, bi = self.s["head"], self.s["bi"]
        if head == "hn":
            return torch.cat((h_n[-2], h_n[-1]), dim=1) if bi else h_n[-1]
        if head == "hn-bf":
            return torch.cat((h_n[-1], h_n[-2]), dim=1) if bi else h_n[-1]
        if head == "last":
            return output[:, -1, :]
        if head == "mean":
            return output.mean(dim=1)
        if head == "max":
            return output.max(dim=1).values
        raise ValueError(head)

    def classify(self, v):
        style = self.s["style"]
        if style == "fc":
            return self.fc(v)
        if style == "fc12":
            return self.fc2(self.act(self.fc1(v)))
        if style == "seq":
            return self.classifier(v)
        a = torch.relu if self.s["act"] == "relu" else torch.tanh
        return torch.matmul(a(torch.matmul(v, self.w1.t()) + self.b1), self.w2.t()) + self.b2

    def from_embedded(self, e):  # e: (B, T, E) -> logits (B, C)
        if self.s["batch_first"]:
            output, (h_n, _) = self.lstm(e)
        else:
            output, (h_n, _) = self.lstm(e.transpose(0, 1))
            output = output.transpose(0, 1)
        return self.classify(self.head(output, h_n))

    def forward(self, ids):  # (B, T), or (T, B) for a sequence-first model; (B, T, E) features when dense
        if self.s["dense"]:
            return self.from_embedded(ids)
        if self.s["batch_first"]:
            return self.from_embedded(self.embedding(ids))
        output, (h_n, _) = self.lstm(self.embedding(ids))
        return self.classify(self.head(output.transpose(0, 1), h_n))


def spec(name, layers, bi, head, opset, style="fc", act=None, dynamic=True, batch_first=True, seed=0, dense=False):
    return dict(name=name, layers=layers, bi=bi, head=head, opset=opset, style=style, act=act, dynamic=dynamic,
                batch_first=batch_first, seed=seed, dense=dense)


SPECS = [
    spec("hn_bi1_o11", 1, True, "hn", 11, seed=1),
    spec("hn_uni2_fc12relu_o17", 2, False, "hn", 17, "fc12", "relu", seed=2),
    spec("hnbf_bi2_o13", 2, True, "hn-bf", 13, seed=3),
    spec("last_bi1_seqtanh_o14", 1, True, "last", 14, "seq", "tanh", seed=4),
    spec("last_uni1_o11", 1, False, "last", 11, seed=5),
    spec("mean_bi2_o17", 2, True, "mean", 17, seed=6),
    spec("mean_uni1_matmultanh_o13", 1, False, "mean", 13, "matmul", "tanh", seed=7),
    spec("max_bi1_fc12relu_o17", 1, True, "max", 17, "fc12", "relu", seed=8),
    spec("max_uni2_o9", 2, False, "max", 9, seed=9),
    spec("hn_bi2_fixed_o17", 2, True, "hn", 17, dynamic=False, seed=10),
    spec("last_bi2_seqfirst_o12", 2, True, "last", 12, batch_first=False, seed=11),
    spec("dense_mean_bi1_o14", 1, True, "mean", 14, seed=12, dense=True),
]

INPUTS = [[3], [7, 1], [2, 2, 2, 9, 15, 0, 5], [19, 4, 8, 8, 1, 12, 6, 3, 0, 11, 17, 2]]
EXPORT_IDS = [4, 11, 0, 7, 7, 13, 2]  # T = 7: the fixed-axis model's length
OTHER_CLASS_CASE = 2


def make_model(s):
    torch.manual_seed(2000 + s["seed"])
    m = Net(s).float()
    with torch.no_grad():
        for p in m.lstm.parameters():
            p.mul_(2.0)  # livelier gates than PyTorch's default init
    return m.eval()


def fl(a):
    return [float(x) for x in np.asarray(a, dtype=np.float64).reshape(-1)]


def rows(a):
    return [fl(r) for r in np.asarray(a)]


def case_refs(m64, e, cls):
    """float64 references for the embedded input e (T x E) and class cls."""
    f = lambda x: m64.from_embedded(x)
    with torch.no_grad():
        y = f(e[None])[0]
        y0 = f(torch.zeros_like(e)[None])[0]
    c = int(torch.argmax(y)) if cls is None else cls
    x = e.clone().requires_grad_(True)
    (sal,) = torch.autograd.grad(f(x[None])[0, c], x)
    nodes, w = np.polynomial.legendre.leggauss(IG_STEPS)
    alphas, weights = (nodes + 1) / 2, w / 2
    batch = torch.stack([float(a) * e for a in alphas]).requires_grad_(True)
    (gb,) = torch.autograd.grad(f(batch)[:, c].sum(), batch)
    total = torch.zeros_like(e)
    for k in range(IG_STEPS):
        total += float(weights[k]) * gb[k]
    ig = e * total
    occ = []
    with torch.no_grad():
        for t in range(e.shape[0]):
            z = e.clone()
            z[t] = 0
            occ.append(float(y[c] - f(z[None])[0, c]))
    return {"logits": fl(y), "baseline_logits": fl(y0), "class": c, "saliency": rows(sal), "gxi": rows(e * sal),
            "ig": rows(ig), "ig_delta": float(ig.sum() - (y[c] - y0[c])), "occlusion": occ}


def ids_tensor(s, ids):
    if s["dense"]:
        return features(ids)[None].float()
    t = torch.as_tensor([ids])
    return t if s["batch_first"] else t.t().contiguous()


def features(ids):
    """The dense model's input for a case: T x E features made from the ids."""
    g = torch.Generator().manual_seed(sum(ids) * 31 + len(ids))
    return torch.randn(len(ids), E, generator=g, dtype=torch.float64).float().double()


def export(m, s, path):
    dyn = None
    if s["dynamic"]:
        dyn = {"features" if s["dense"] else "ids": {1 if s["batch_first"] else 0: "T"}}
    torch.onnx.export(m, ids_tensor(s, EXPORT_IDS), path, input_names=["features" if s["dense"] else "ids"],
                      output_names=["logits"],
                      dynamic_axes=dyn, opset_version=s["opset"])


def build(s):
    m = make_model(s)
    path = os.path.join(HERE, s["name"] + ".onnx")
    export(m, s, path)
    onnx.checker.check_model(onnx.load(path))
    m64 = make_model(s).double()
    m64.load_state_dict({k: v.double() for k, v in m.state_dict().items()})
    emb = m64.embedding.weight.detach()
    cases = []
    for i, ids in enumerate(INPUTS + ([EXPORT_IDS] if not s["dynamic"] else [])):
        e = features(ids) if s["dense"] else emb[torch.as_tensor(ids)].clone()
        cls = None
        if i == OTHER_CLASS_CASE:
            with torch.no_grad():
                cls = (int(torch.argmax(m64.from_embedded(e[None])[0])) + 1) % C
        r = case_refs(m64, e, cls)
        with torch.no_grad():
            r["logits_f32"] = fl(m(ids_tensor(s, ids))[0])
            assert np.allclose(r["logits_f32"], r["logits"], rtol=1e-4, atol=1e-5)
        if s["dense"]:
            cases.append(dict(ids=None, features_in=rows(e), **r))
        else:
            cases.append(dict(ids=ids, **r))
    j = {k: s[k] for k in ("name", "layers", "head", "opset", "style", "act", "dynamic", "dense")}
    j.update(bidirectional=s["bi"], batch_first=s["batch_first"], file=s["name"] + ".onnx", vocab=V, input=E,
             hidden=H, classes=C, units=UNITS if s["act"] else 0, seq_len=None if s["dynamic"] else len(EXPORT_IDS),
             ig_steps=IG_STEPS, cases=cases)
    write(os.path.join(HERE, s["name"] + ".json"), json.dumps(j, separators=(",", ":"), allow_nan=False) + "\n")
    print("wrote", s["name"], os.path.getsize(path), "bytes", flush=True)


class GRUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding, self.gru, self.fc = nn.Embedding(V, E), nn.GRU(E, H, batch_first=True), nn.Linear(H, C)

    def forward(self, ids):
        _, h = self.gru(self.embedding(ids))
        return self.fc(h[-1])


class AttentionNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding, self.lstm = nn.Embedding(V, E), nn.LSTM(E, H, batch_first=True)
        self.query, self.fc = nn.Linear(H, 1, bias=False), nn.Linear(H, C)

    def forward(self, ids):
        output, _ = self.lstm(self.embedding(ids))
        a = torch.softmax(self.query(output), dim=1)
        return self.fc((a * output).sum(dim=1))


class CnNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding, self.lstm, self.fc = nn.Embedding(V, E), nn.LSTM(E, H, batch_first=True), nn.Linear(H, C)

    def forward(self, ids):
        _, (_, c_n) = self.lstm(self.embedding(ids))
        return self.fc(c_n[-1])


class H0Net(CnNet):
    def forward(self, ids):
        e = self.embedding(ids)
        h0 = torch.ones(1, 1, H)
        _, (h_n, _) = self.lstm(e, (h0, torch.zeros(1, 1, H)))
        return self.fc(h_n[-1])


def refused():
    for name, cls in [("gru", GRUNet), ("attention", AttentionNet), ("cn_head", CnNet), ("h0_ones", H0Net)]:
        torch.manual_seed(3000)
        path = os.path.join(HERE, name + ".onnx")
        torch.onnx.export(cls().eval(), torch.as_tensor([EXPORT_IDS]), path, input_names=["ids"],
                          output_names=["logits"], dynamic_axes={"ids": {1: "T"}}, opset_version=17)
        print("wrote", name, os.path.getsize(path), "bytes", flush=True)
    m = onnx.load(os.path.join(HERE, "hn_bi1_o11.onnx"))
    for n in m.graph.node:
        if n.op_type == "Gemm":
            n.domain, n.op_type = "com.example", "FancyGemm"
    m.opset_import.append(onnx.helper.make_opsetid("com.example", 1))
    onnx.save(m, os.path.join(HERE, "custom_op.onnx"))
    m = onnx.load(os.path.join(HERE, "hn_bi1_o11.onnx"))
    data = os.path.join(HERE, "external.onnx.data")
    if os.path.exists(data):
        os.remove(data)  # onnx appends to an existing data file
    onnx.save_model(m, os.path.join(HERE, "external.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="external.onnx.data", size_threshold=0)
    print("wrote custom_op, external", flush=True)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def main():
    for s in SPECS:
        build(s)
    refused()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""ONNX exports whose behaviour depends on the input's length
(model/testdata/onnx/length/).

Each is a small float32 LSTM classifier that agrees with a plain model of
the same weights at the short lengths the loader probes (1, 2 and 7 tokens)
and differs from some length on, the traps a loader that checks a few
probes only falls into:

    trunc8        ids[:, :8], the usual max_len guard (here 8, not 512)
    window_mean8  output[:, :8].mean(1), read as the head mean
    tail_max8     output[:, -8:].max(1), read as the head max
    h0_from8      an initial state sliced from a table at row T, zero for
                  T < 8 (a state built from the length)
    fixed5_pick4  exported without a dynamic axis, input [1, 5], head
                  output[:, 4] (read as last); onnxruntime refuses other
                  lengths

It writes NAME.onnx and NAME.json: the float64 logits of the model (the
float32 weights upcast, model.double()) at the lengths in LENGTHS, to show
where the graph is the plain model and where it is not.

Run from the repository root (torch 1.13, onnx 1.12: Debian 12's
python3-torch and python3-onnx):

    /usr/bin/python3 -W ignore model/testdata/onnx/length/gen_length.py

It is deterministic: run twice, the same bytes.
"""

import json
import os

import torch
from torch import nn

torch.set_num_threads(1)

HERE = os.path.dirname(os.path.abspath(__file__))
V, E, H, C = 20, 5, 6, 3
LENGTHS = [1, 2, 5, 7, 8, 9, 12, 20]


class Net(nn.Module):
    def __init__(self, kind, bi):
        super().__init__()
        self.kind = kind
        self.embedding = nn.Embedding(V, E)
        self.lstm = nn.LSTM(E, H, batch_first=True, bidirectional=bi)
        D = H * (2 if bi else 1)
        self.fc = nn.Linear(D, C)
        table = torch.randn(64, H) * 0.5
        table[:8] = 0
        self.register_buffer("h0_table", table)

    def forward(self, ids):  # (1, T)
        k = self.kind
        if k == "trunc8":
            ids = ids[:, :8]
        e = self.embedding(ids)
        if k == "h0_from8":
            n = ids.shape[1]
            h0 = self.h0_table[n:n + 1].view(1, 1, H)
            output, (h_n, _) = self.lstm(e, (h0, torch.zeros_like(h0)))
        else:
            output, (h_n, _) = self.lstm(e)
        if k in ("trunc8", "h0_from8"):
            v = h_n[-1]
        elif k == "window_mean8":
            v = output[:, :8].mean(dim=1)
        elif k == "tail_max8":
            v = output[:, -8:].max(dim=1).values
        elif k == "fixed5_pick4":
            v = output[:, 4]
        return self.fc(v)


MODELS = [("trunc8", False, 1), ("window_mean8", True, 2), ("tail_max8", False, 3), ("h0_from8", False, 4),
          ("fixed5_pick4", False, 5)]


def ids_of(t, seed):
    g = torch.Generator().manual_seed(1000 * seed + t)
    return [int(i) for i in torch.randint(0, V, (t,), generator=g)]


def main():
    for name, bi, seed in MODELS:
        torch.manual_seed(3000 + seed)
        m = Net(name, bi).float().eval()
        with torch.no_grad():
            for p in m.lstm.parameters():
                p.mul_(2.0)
        path = os.path.join(HERE, name + ".onnx")
        fixed = name == "fixed5_pick4"
        example = torch.as_tensor([ids_of(5 if fixed else 7, seed)])
        torch.onnx.export(m, example, path, input_names=["ids"], output_names=["logits"],
                          dynamic_axes=None if fixed else {"ids": {1: "T"}}, opset_version=14)
        m64 = m.double()
        cases = []
        for t in LENGTHS:
            if t > 63 or fixed and t < 5:
                continue
            ids = ids_of(t, seed)
            with torch.no_grad():
                y = m64(torch.as_tensor([ids]))[0]
            cases.append({"ids": ids, "logits": [float(v) for v in y]})
        with open(os.path.join(HERE, name + ".json"), "w") as f:
            json.dump({"name": name, "file": name + ".onnx", "fixed": 5 if fixed else 0, "cases": cases}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()

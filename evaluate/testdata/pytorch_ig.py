"""Integrated Gradients in PyTorch on exported white-box networks: the
fixtures of evaluate's end-to-end test (TestPyTorchFixtures).

    python3 pytorch_ig.py NET.safetensors INPUTS.txt > SCORES.jsonl

Loads the export as README.md shows, then attributes every input for the
predicted class with Captum's IntegratedGradients (Gauss-Legendre, 50
steps, zero baseline) when Captum is installed, and otherwise with the same
rule written out here (numpy's Gauss-Legendre nodes on [0, 1]). The
committed fixtures were made with Captum (commit faac087, on PYTHONPATH)
and PyTorch 1.13, float64: "captum" in each line says which was used.
Captum rounds its step sizes to float32, which the Go test matches with
attrib.Options.Float32Weights. Make them with:

    whitebox export -net sp-fsa -o sp-fsa.safetensors
    whitebox generate -net sp-fsa -n 200 -len 2..12 -seed 3 > sp-fsa.inputs.txt
    python3 pytorch_ig.py sp-fsa.safetensors sp-fsa.inputs.txt > sp-fsa.pytorch-ig.jsonl
    (and the same for bracket)
"""
import json, struct, sys

import numpy as np
import torch
import torch.nn as nn


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header, data = json.loads(f.read(n)), f.read()
    meta = header.pop("__metadata__", {})
    return {k: torch.frombuffer(bytearray(data[v["data_offsets"][0]:v["data_offsets"][1]]),
                                dtype=torch.float64).reshape(v["shape"])
            for k, v in header.items()}, meta


class WhiteBox(nn.Module):
    def __init__(self, v, h, c):
        super().__init__()
        self.embedding = nn.Embedding(v, v)
        self.lstm = nn.LSTM(v, h, batch_first=True)
        self.fc = nn.Linear(h, c)

    def forward(self, x):
        _, (h, _) = self.lstm(x)
        return self.fc(h[-1])


class GaussLegendreIG:
    """Captum's IntegratedGradients(method="gausslegendre"), written out."""

    def __init__(self, f):
        self.f = f

    def attribute(self, x, baselines, target, n_steps=50):
        a, w = np.polynomial.legendre.leggauss(n_steps)
        total = torch.zeros_like(x)
        for alpha, weight in zip(0.5 * (a + 1), 0.5 * w):
            xi = (baselines + float(alpha) * (x - baselines)).detach().requires_grad_(True)
            self.f(xi)[0, target].backward()
            total += float(weight) * xi.grad
        return total * (x - baselines)


def main(model, inputs):
    sd, meta = load_safetensors(model)
    net = WhiteBox(sd["embedding.weight"].shape[0], sd["lstm.weight_hh_l0"].shape[1], sd["fc.weight"].shape[0]).double()
    net.load_state_dict(sd)
    vocab, classes = meta["vocab"].split(), meta["classes"].split()
    try:
        from captum.attr import IntegratedGradients
        ig, captum = IntegratedGradients(net), True
    except ImportError:
        ig, captum = GaussLegendreIG(net), False
    for s in open(inputs).read().split():
        x = net.embedding(torch.tensor([[vocab.index(c) for c in s]])).detach()
        pred = net(x).argmax(-1).item()
        attr = ig.attribute(x, baselines=torch.zeros_like(x), target=pred, n_steps=50)
        print(json.dumps({"input": s, "scores": attr.sum(-1)[0].tolist(), "class": classes[pred], "captum": captum}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

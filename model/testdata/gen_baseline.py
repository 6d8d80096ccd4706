"""References for attrib.Options.Baseline (whitebox -baseline id:N).

For two fixtures (bi2: 2-layer BiLSTM, F32; uni3nobias: 3 layers without
biases, F64) and a few inputs, in float64 PyTorch:

  - ig: Captum's LayerIntegratedGradients(model, model.<embedding>) on the
    token ids with baselines=torch.full_like(ids, N) (Gauss-Legendre, 50
    steps), the token scores attr.sum(-1) and its convergence delta; the
    script asserts that IntegratedGradients on the embedded input with the
    embedding row of N as the baseline gives the same (1e-12);
  - occlusion: f_c(x) − f_c(x with row t replaced by the embedding row of
    N), one t at a time (Captum's Occlusion on the embedded input with
    sliding_window_shapes=(1, E) and that row as baselines).

The class is the predicted one. Writes model/testdata/baseline/refs.json. Run
from the repository root:

    PYTHONPATH=/tmp/captum /usr/bin/python3 -W ignore model/testdata/gen_baseline.py
"""
import json
import struct
import sys
import types

import numpy as np
import torch
from torch import nn
try:
    import matplotlib  # noqa: F401  (Captum imports it for its plots)
except ImportError:  # not needed here: stand-in modules that Captum's imports accept
    import importlib.abc
    import importlib.util

    class _Stub(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path, target=None):
            if name == "matplotlib" or name.startswith(("matplotlib.", "mpl_toolkits")):
                return importlib.util.spec_from_loader(name, self, is_package=True)
            return None

        def create_module(self, spec):
            mod = types.ModuleType(spec.name)
            mod.__path__ = []
            mod.__getattr__ = lambda attr: type(attr, (), {})
            return mod

        def exec_module(self, module):
            pass

    sys.meta_path.insert(0, _Stub())
from captum.attr import IntegratedGradients, LayerIntegratedGradients  # noqa: E402

NP_OF = {"F64": "<f8", "F32": "<f4"}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    return {k: torch.from_numpy(np.frombuffer(body[v["data_offsets"][0]:v["data_offsets"][1]], dtype=NP_OF[v["dtype"]]).astype(np.float64)).reshape(v["shape"])
            for k, v in header.items()}


class Model(nn.Module):
    """Embedding → LSTM → Linear on h_n (the hn head), float64, from ids."""

    def __init__(self, sd, emb, lstm, dec, layers, bi, bias):
        super().__init__()
        V, E = sd[emb + ".weight"].shape
        H = sd[lstm + ".weight_hh_l0"].shape[1]
        C = sd[dec + ".weight"].shape[0]
        self.embedding = nn.Embedding(V, E)
        self.lstm = nn.LSTM(E, H, num_layers=layers, bidirectional=bi, batch_first=True, bias=bias)
        self.fc = nn.Linear(H * (2 if bi else 1), C, bias=dec + ".bias" in sd)
        self.bi = bi
        self.double()
        own = {}
        for k, v in sd.items():
            own[k.replace(emb + ".", "embedding.").replace(lstm + ".", "lstm.").replace(dec + ".", "fc.")] = v
        self.load_state_dict(own)

    def from_embedded(self, e):
        _, (h_n, _) = self.lstm(e)
        hid = torch.cat((h_n[-2], h_n[-1]), dim=-1) if self.bi else h_n[-1]
        return self.fc(hid)

    def forward(self, ids):
        return self.from_embedded(self.embedding(ids))


FIXTURES = [
    ("bi2.safetensors", "embed", "rnn", "out", 2, True, True, [[5, 3], [28, 10, 8, 10, 13, 10, 18], [0, 39, 1]], [0, 7]),
    ("uni3nobias.safetensors", "emb", "encoder.lstm", "classifier", 3, False, False, [[1, 2, 3, 4, 5], [29, 0, 0, 7]], [0, 3]),
]


def main():
    out = []
    for path, emb, lstm, dec, layers, bi, bias, inputs, base_ids in FIXTURES:
        m = Model(read_safetensors("model/testdata/" + path), emb, lstm, dec, layers, bi, bias)
        m.eval()
        lig = LayerIntegratedGradients(m, m.embedding)
        ig = IntegratedGradients(m.from_embedded)
        for ids in inputs:
            x = torch.tensor([ids])
            with torch.no_grad():
                y = m(x)[0]
            c = int(torch.argmax(y))
            for n in base_ids:
                attr, delta = lig.attribute(x, baselines=torch.full_like(x, n), target=c, n_steps=50,
                                            method="gausslegendre", return_convergence_delta=True)
                e = m.embedding(x).detach()
                e0 = m.embedding(torch.full_like(x, n)).detach()
                attr2 = ig.attribute(e, baselines=e0, target=c, n_steps=50, method="gausslegendre")
                assert torch.allclose(attr, attr2, rtol=0, atol=1e-12), (path, ids, n)
                occ = []
                with torch.no_grad():
                    for t in range(len(ids)):
                        e1 = e.clone()
                        e1[0, t] = e0[0, t]
                        occ.append(float(y[c] - m.from_embedded(e1)[0, c]))
                out.append({"file": path, "ids": ids, "baseline_id": n, "class": c,
                            "ig": attr.sum(-1)[0].tolist(), "ig_delta": float(delta[0]), "occlusion": occ})
    with open("model/testdata/baseline/refs.json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

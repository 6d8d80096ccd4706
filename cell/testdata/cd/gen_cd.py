#!/usr/bin/env python3
"""Reference fixtures for contextual decomposition (cell/stacked_cd.go).

The reference is the authors' own CD() (Murdoch, Liu and Yu, ICLR 2018),
train_model/sent_util.py of github.com/jamie-murdoch/ContextualDecomposition,
imported unchanged from a scratch copy that is never part of this
repository:

    git clone https://github.com/jamie-murdoch/ContextualDecomposition /tmp/cdsrc
    mkdir -p /tmp/cdref && cp -r /tmp/cdsrc/train_model /tmp/cdref/
    cd REPO && /usr/bin/python3 cell/testdata/cd/gen_cd.py [/tmp/cdref/train_model]

(torch 1.13, float64). sent_util.py imports torchtext (for its data
loaders, which CD() does not use) and scipy.special.expit; neither is
needed here, so this script stubs both in sys.modules before the import:
torchtext by an empty module, expit by torch.sigmoid in float64 (the
logistic function, correctly rounded to within an ulp or two as scipy's).

CD(batch, model, start, stop) reads model.lstm.state_dict() (weight_ih_l0,
weight_hh_l0, bias_ih_l0, bias_hh_l0, gate order i, f, g, o),
model.embed(batch.text)[:, 0] (the T x E input rows), model.hidden_dim and
model.hidden_to_label.weight; the stand-in below is a float64 nn.LSTM and
nn.Linear, and an nn.Embedding whose rows are the input rows themselves
(batch.text = 0..T-1). An LSTM without biases is an nn.LSTM whose biases
are zero (CD() reads the bias tensors); the fixture then has "b": null.
CD() returns W_out.beta_T and W_out.gamma_T for every class, without the
decoder's bias; the script checks that they add up to nn.LSTM's logits
minus that bias (1e-10).

Each fixture (cd_NAME.json) holds the weights (flat, row-major; "b" is
bias_ih + bias_hh as CD() sums it), and per input its rows "x" (T x E),
"logits", "tokens" (CD(start=t, stop=t)'s relevant part, every class, for
each t) and "spans" (start, stop, both included as in CD(), with the
relevant and irrelevant parts of every class). The white-box networks
(sp-counter, counting) come from `go run ./cmd/whitebox export`; their
inputs are one-hot rows of the strings given in "strings"; uni1 is
model/testdata/uni1.pt, its inputs the embedding rows of the token ids in
"ids".
Deterministic: run twice, same bytes.
"""
import json
import os
import subprocess
import sys
import tempfile
import types

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
REF = sys.argv[1] if len(sys.argv) > 1 else "/tmp/cdref/train_model"

torch.set_default_dtype(torch.float64)

# The stubs sent_util.py's imports need (see above).
sys.modules["torchtext"] = types.SimpleNamespace(data=None, datasets=None)
scipy = types.ModuleType("scipy")
special = types.ModuleType("scipy.special")
special.expit = lambda x: torch.sigmoid(torch.as_tensor(x, dtype=torch.float64)).numpy()
scipy.special = special
sys.modules["scipy"], sys.modules["scipy.special"] = scipy, special
sys.path.insert(0, REF)
import sent_util  # noqa: E402  (the authors' file, unchanged)


class StandIn:
    """What CD() reads of the authors' model."""

    def __init__(self, lstm, linear):
        self.lstm, self.hidden_to_label = lstm, linear
        self.hidden_dim = lstm.hidden_size
        self.embed = None


def model_from(wih, whh, bih, bhh, wy, by):
    h4, e = wih.shape
    h, c = h4 // 4, wy.shape[0]
    lstm = torch.nn.LSTM(e, h)
    linear = torch.nn.Linear(h, c, bias=by is not None)
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.as_tensor(wih))
        lstm.weight_hh_l0.copy_(torch.as_tensor(whh))
        lstm.bias_ih_l0.copy_(torch.as_tensor(bih) if bih is not None else torch.zeros(4 * h))
        lstm.bias_hh_l0.copy_(torch.as_tensor(bhh) if bhh is not None else torch.zeros(4 * h))
        linear.weight.copy_(torch.as_tensor(wy))
        if by is not None:
            linear.bias.copy_(torch.as_tensor(by))
    return StandIn(lstm, linear)


def run_cd(model, x, start, stop):
    t = x.shape[0]
    model.embed = torch.nn.Embedding.from_pretrained(torch.as_tensor(x))
    batch = types.SimpleNamespace(text=torch.arange(t).view(t, 1))
    rel, irrel = sent_util.CD(batch, model, start, stop)
    return [float(v) for v in rel], [float(v) for v in irrel]


def logits(model, x):
    with torch.no_grad():
        out, (hn, cn) = model.lstm(torch.as_tensor(x).unsqueeze(1))
        return model.hidden_to_label(hn[-1, 0]).tolist()


def case(model, x):
    t = x.shape[0]
    y = logits(model, x)
    by = model.hidden_to_label.bias
    tokens = [run_cd(model, x, i, i)[0] for i in range(t)]
    spans = []
    for start, stop in sorted({(0, t - 1), (0, 0), (t - 1, t - 1), (t // 3, (2 * t) // 3), (1, t - 1) if t > 1 else (0, 0)}):
        rel, irrel = run_cd(model, x, start, stop)
        for k in range(len(y)):
            want = y[k] - (float(by[k]) if by is not None else 0.0)
            assert abs(rel[k] + irrel[k] - want) <= 1e-10 * max(1, abs(want)), (rel[k], irrel[k], want)
        spans.append({"start": start, "stop": stop, "rel": rel, "irrel": irrel})
    return {"x": x.reshape(-1).tolist(), "steps": t, "logits": y, "tokens": tokens, "spans": spans}


def fixture(name, wih, whh, bih, bhh, wy, by, inputs, strings=None, ids=None):
    model = model_from(wih, whh, bih, bhh, wy, by)
    b = None if bih is None else (np.asarray(bih) + np.asarray(bhh)).tolist()
    out = {
        "name": name, "input": wih.shape[1], "hidden": wih.shape[0] // 4, "classes": wy.shape[0],
        "wih": wih.reshape(-1).tolist(), "whh": whh.reshape(-1).tolist(), "b": b,
        "wy": wy.reshape(-1).tolist(), "by": None if by is None else list(map(float, by)),
        "cases": [case(model, x) for x in inputs],
    }
    if strings is not None:
        out["strings"] = strings
    if ids is not None:
        out["ids"] = ids
    with open(os.path.join(HERE, "cd_%s.json" % name), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


def random_model(rng, e, h, c, lstm_bias, dec_bias, scale):
    g = lambda *s: rng.uniform(-scale, scale, size=s)
    bih, bhh = (g(4 * h), g(4 * h)) if lstm_bias else (None, None)
    return g(4 * h, e), g(4 * h, h), bih, bhh, g(c, h), (g(c) if dec_bias else None)


def whitebox(name, strings):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, name + ".pt")
        subprocess.run(["go", "run", "./cmd/whitebox", "export", "-net", name, "-o", path], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        sd = torch.load(path)
    n = lambda k: sd[k].numpy()
    emb = n("embedding.weight")  # the identity: token k is symbol k
    alphabet = {"sp-counter": "abcd", "counting": "ab"}[name]
    inputs = [np.stack([emb[alphabet.index(ch)] for ch in s]) for s in strings]
    fixture(name, n("lstm.weight_ih_l0"), n("lstm.weight_hh_l0"), n("lstm.bias_ih_l0"), n("lstm.bias_hh_l0"),
            n("fc.weight"), n("fc.bias"), inputs, strings)


def imported(name, ids):
    """A model of model/testdata (Embedding -> LSTM -> Linear on h_n[-1])."""
    sd = torch.load(os.path.join(ROOT, "model", "testdata", name + ".pt"))
    n = lambda k: sd[k].numpy()
    emb = n("embedding.weight")
    inputs = [emb[np.asarray(seq)] for seq in ids]
    fixture(name, n("lstm.weight_ih_l0"), n("lstm.weight_hh_l0"), n("lstm.bias_ih_l0"), n("lstm.bias_hh_l0"),
            n("fc.weight"), n("fc.bias"), inputs, ids=ids)


def main():
    rng = np.random.default_rng(23)
    for name, e, h, c, lb, db, scale, lengths in [
        ("h3e4c2", 4, 3, 2, True, True, 0.8, [1, 2, 5, 9, 70]),
        ("h5e2c3_nobias", 2, 5, 3, False, False, 0.9, [1, 3, 7]),
        ("h8e6c4_large", 6, 8, 4, True, False, 2.5, [2, 6, 12]),
        ("h16e10c2", 10, 16, 2, True, True, 0.4, [4, 20]),
    ]:
        wih, whh, bih, bhh, wy, by = random_model(rng, e, h, c, lb, db, scale)
        inputs = [rng.normal(size=(t, e)) for t in lengths]
        fixture(name, wih, whh, bih, bhh, wy, by, inputs)
    whitebox("sp-counter", ["accb", "abcdabcdcba", "b", "dcda"])
    whitebox("counting", ["abbaab", "aab", "a"])
    imported("uni1", [[3, 1, 4, 1, 5, 9, 2, 6], [0], [49, 7]])


if __name__ == "__main__":
    main()

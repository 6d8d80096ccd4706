"""The white-box networks from Python: a network as a PyTorch module
(export), its task's inputs (generate), and the ground-truth scoring of
any attribution of them (evaluate)."""

import json
import os
import shutil
import subprocess
import tempfile

import torch
from torch import nn

from ._binary import WhiteboxError, find_binary
from ._safetensors import read as read_safetensors


def _run(args, binary=None, **kw):
    p = subprocess.run([binary or find_binary()] + args, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise WhiteboxError(p.stderr.strip() or "whitebox %s exited with %d" % (args[0], p.returncode))
    return p.stdout


def _net_flags(net, dfa, m, u, k):
    if (net is None) == (dfa is None):
        raise ValueError("give one of net (counting, sp-counter, sp-fsa, bracket) and dfa")
    flags = ["-net", net] if net is not None else []
    for name, v in (("-m", m), ("-u", u), ("-k", k)):
        if v is not None:
            flags += [name, str(v)]
    return flags


class WhiteBoxNet(nn.Module):
    """A white-box network as `whitebox export` writes it: nn.Embedding(V, V)
    (the identity: token id k is symbol k, self.vocab[k]) -> nn.LSTM(V, H,
    batch_first=True) -> nn.Linear(H, C) on h_n[-1], float64. forward(ids)
    maps token ids (batch, tokens) to logits; encode(text) gives the ids
    of a string over the alphabet."""

    def __init__(self, state, vocab, classes, name):
        super().__init__()
        v, h, c = state["embedding.weight"].shape[0], state["lstm.weight_hh_l0"].shape[1], state["fc.weight"].shape[0]
        self.embedding = nn.Embedding(v, state["embedding.weight"].shape[1])
        self.lstm = nn.LSTM(self.embedding.embedding_dim, h, batch_first=True)
        self.fc = nn.Linear(h, c)
        self.double()
        self.load_state_dict(state)
        self.vocab, self.classes, self.name = vocab, classes, name
        self.eval()

    def encode(self, text):
        """The ids (1-D LongTensor) of a string over the network's alphabet."""
        try:
            return torch.tensor([self.vocab.index(ch) for ch in text])
        except ValueError:
            raise ValueError("%r is not over the alphabet %s" % (text, " ".join(self.vocab))) from None

    def forward(self, ids):
        _, (h, _) = self.lstm(self.embedding(ids))
        return self.fc(h[-1])


def export(net=None, dfa=None, m=None, u=None, k=None, binary=None):
    """The white-box network `net` (counting, sp-counter, sp-fsa, bracket;
    or dfa, an automaton as a dict or a JSON file's path) as a PyTorch
    module (WhiteBoxNet, float64) from `whitebox export`, with its
    alphabet (.vocab) and classes (.classes): run any attribution tool on
    it (Captum's LayerIntegratedGradients(net, net.embedding), say) and
    score the result with evaluate()."""
    tmp = tempfile.mkdtemp(prefix="whitebox-export-")
    try:
        path = os.path.join(tmp, "net.safetensors")
        flags = _net_flags(net, dfa, m, u, k)
        if dfa is not None:
            if isinstance(dfa, dict):
                with open(os.path.join(tmp, "dfa.json"), "w") as f:
                    json.dump(dfa, f)
                dfa = os.path.join(tmp, "dfa.json")
            flags += ["-dfa", str(dfa)]
        _run(["export"] + flags + ["-o", path], binary)
        state, meta = read_safetensors(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return WhiteBoxNet(state, meta["vocab"].split(), meta["classes"].split(), meta.get("whitebox.net", "dfa"))


def generate(net, n=100, length="1..20", seed=2020, m=None, u=None, k=None, binary=None):
    """n inputs of the network's task (`whitebox generate`): strings over
    its alphabet, of lengths `length` (an int or "MIN..MAX"), the same for
    the same arguments everywhere."""
    flags = _net_flags(net, None, m, u, k) + ["-n", str(int(n)), "-len", str(length), "-seed", str(int(seed))]
    return _run(["generate"] + flags, binary).split()


def evaluate(net, inputs, scores, target=None, method="scores", binary=None, m=None, u=None, k=None):
    """Runs `whitebox evaluate -net NET` on the explanations: inputs are
    strings over the network's alphabet (generate()'s), scores one
    sequence (list or tensor; a (B, T) tensor for inputs of one length)
    of token scores per input, from any tool (Captum, say); target the
    explained class (a name or index, one for all or a list per input;
    None: the predicted one). Returns the report as a dict (the criteria's
    means, deviations and shares of inputs meeting them)."""
    if len(inputs) != len(scores):
        raise ValueError("%d inputs and %d score rows" % (len(inputs), len(scores)))
    if isinstance(target, torch.Tensor):
        target = target.tolist()
    targets = target if isinstance(target, (list, tuple)) else [target] * len(inputs)
    if len(targets) != len(inputs):
        raise ValueError("%d targets for %d inputs" % (len(targets), len(inputs)))
    lines = []
    for text, s, t in zip(inputs, scores, targets):
        if isinstance(s, torch.Tensor):
            s = s.detach().double().reshape(-1).tolist()
        rec = {"input": text, "scores": [float(v) for v in s], "method": method}
        if t is not None:
            rec["class"] = str(t)
        lines.append(json.dumps(rec))
    out = _run(["evaluate"] + _net_flags(net, None, m, u, k) + ["-scores", "-", "-format", "json"], binary,
               input="\n".join(lines) + "\n")
    return json.loads(out)

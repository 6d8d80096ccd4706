"""Scoring any attribution against the white-box networks' ground truth."""

import json
import subprocess

import torch

from ._binary import WhiteboxError, find_binary


def evaluate(net, inputs, scores, target=None, method="scores", binary=None):
    """Runs `whitebox evaluate -net NET` on the explanations: inputs are
    strings over the network's alphabet (`whitebox generate`'s), scores one
    sequence (list or tensor) of token scores per input, from any tool
    (Captum, say); target the explained class (a name; None: the predicted
    one). Returns the report as a dict (the criteria's means, deviations
    and shares of inputs meeting them)."""
    if len(inputs) != len(scores):
        raise ValueError("%d inputs and %d score rows" % (len(inputs), len(scores)))
    lines = []
    for text, s in zip(inputs, scores):
        if isinstance(s, torch.Tensor):
            s = s.detach().double().reshape(-1).tolist()
        rec = {"input": text, "scores": [float(v) for v in s], "method": method}
        if target is not None:
            rec["class"] = str(target)
        lines.append(json.dumps(rec))
    p = subprocess.run([binary or find_binary(), "evaluate", "-net", net, "-scores", "-", "-format", "json"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True)
    if p.returncode != 0:
        raise WhiteboxError(p.stderr.strip() or "whitebox evaluate exited with %d" % p.returncode)
    return json.loads(p.stdout)

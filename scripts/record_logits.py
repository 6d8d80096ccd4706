"""Record your model's logits for `whitebox ... -verify FILE`.

Copy `record_logits` next to your model (or import this file) and call it
with the model in eval mode and a few inputs (token id lists, several of
two or more tokens: one-token inputs do not tell the heads apart):

    from record_logits import record_logits
    record_logits(model, [[3, 14, 15], [9, 2, 6, 5], [35]], "verify.jsonl")

Each line is {"ids": [...], "logits": [...]}: the model's own forward pass
on one input (batch of one), in its own dtype (float32 is fine: whitebox
compares at relative 1e-4). The model must take a (1, T) LongTensor of
token ids and return (1, C) logits; adapt `forward` below if yours takes
something else (lengths, a mask, batch_first=False).

Self-test (writes a small model, its state_dict and its logits):

    /usr/bin/python3 scripts/record_logits.py /tmp/demo
    whitebox attribute -model /tmp/demo/model.pt -head auto -verify /tmp/demo/verify.jsonl -method ig '3 14 15'
"""
import json
import sys

import torch


def record_logits(model, inputs, path, forward=None):
    forward = forward or (lambda m, ids: m(ids))
    model.eval()
    with open(path, "w") as f, torch.no_grad():
        for ids in inputs:
            logits = forward(model, torch.tensor([list(ids)], dtype=torch.long))
            f.write(json.dumps({"ids": [int(i) for i in ids],
                                "logits": [float(v) for v in logits.reshape(-1).tolist()]}) + "\n")


if __name__ == "__main__":
    import os
    import torch.nn as nn

    class Demo(nn.Module):  # a mean-pooled BiLSTM: whitebox's -head mean
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(40, 8)
            self.lstm = nn.LSTM(8, 6, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(12, 3)

        def forward(self, ids):
            out, _ = self.lstm(self.embedding(ids))
            return self.fc(out.mean(dim=1))

    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = Demo()
    torch.save(model.state_dict(), os.path.join(out, "model.pt"))
    record_logits(model, [[3, 14, 15], [9, 2, 6, 5, 35], [1], [7, 7, 7, 7, 7, 7, 30]],
                  os.path.join(out, "verify.jsonl"))

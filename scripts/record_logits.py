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
something else (a mask, the ids as (T, 1)).

batch_first=False changes only the layout of the ids, not the state_dict:
pass forward=lambda m, ids: m(ids.t()) (ids is (1, T), the model reads
(T, 1)); whitebox needs nothing for it.

Padded batches. A model trained on padded batches with pack_padded_sequence
(forward(ids, lengths) packs the embedded batch with the rows' true
lengths) never runs a row's trailing pad tokens: each row's logits are the
model's on its first `length` ids alone. Give your pad id, and inputs that
end in pads as the rows of your batches do:

    record_logits(model, [[3, 14, 15, 0, 0], [9, 2, 6, 5, 35]], "verify.jsonl", pad=0)

Each input's length is its number of ids before the trailing pads; the model
is called as forward(model, ids, lengths), ids the (1, T) row with its
pads and lengths the LongTensor [length] (default: model(ids, lengths);
with batch_first=False, forward=lambda m, ids, lengths: m(ids.t(), lengths)),
and the line keeps the pads and adds "length". Check it with `-pad 0
-verify verify.jsonl`: whitebox's -pad removes the trailing pads as
pack_padded_sequence does; without -pad the pads run as tokens and the
padded lines do not match.

Self-test (writes two small models, their state_dicts and their logits):

    /usr/bin/python3 scripts/record_logits.py /tmp/demo
    whitebox attribute -model /tmp/demo/model.pt -head auto -verify /tmp/demo/verify.jsonl -method ig '3 14 15'
    whitebox attribute -model /tmp/demo/packed.pt -pad 0 -verify /tmp/demo/packed.verify.jsonl -method ig '3 14 15 0 0'
"""
import json
import sys

import torch


def record_logits(model, inputs, path, forward=None, pad=None):
    if pad is None:
        forward = forward or (lambda m, ids: m(ids))
    else:
        forward = forward or (lambda m, ids, lengths: m(ids, lengths))
    model.eval()
    with open(path, "w") as f, torch.no_grad():
        for ids in inputs:
            ids = [int(i) for i in ids]
            row = torch.tensor([ids], dtype=torch.long)
            line = {"ids": ids}
            if pad is None:
                logits = forward(model, row)
            else:
                n = len(ids)
                while n > 0 and ids[n - 1] == pad:
                    n -= 1
                if n == 0:
                    raise ValueError("input %r is only pad tokens (%d): pack_padded_sequence needs a length of at least 1" % (ids, pad))
                line["length"] = n
                logits = forward(model, row, torch.tensor([n], dtype=torch.long))
            line["logits"] = [float(v) for v in logits.reshape(-1).tolist()]
            f.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    import os
    import torch.nn as nn
    from torch.nn.utils.rnn import pack_padded_sequence

    class Demo(nn.Module):  # a mean-pooled BiLSTM: whitebox's -head mean
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(40, 8)
            self.lstm = nn.LSTM(8, 6, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(12, 3)

        def forward(self, ids):
            out, _ = self.lstm(self.embedding(ids))
            return self.fc(out.mean(dim=1))

    class Packed(nn.Module):  # a packed BiLSTM, batch_first=False: -pad 0 (and the default -head hn)
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(40, 8, padding_idx=0)
            self.lstm = nn.LSTM(8, 6, bidirectional=True)
            self.fc = nn.Linear(12, 3)

        def forward(self, ids, lengths):  # ids: (T, B)
            packed = pack_padded_sequence(self.embedding(ids), lengths, enforce_sorted=False)
            _, (h_n, _) = self.lstm(packed)
            return self.fc(torch.cat((h_n[-2], h_n[-1]), dim=1))

    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = Demo()
    torch.save(model.state_dict(), os.path.join(out, "model.pt"))
    record_logits(model, [[3, 14, 15], [9, 2, 6, 5, 35], [1], [7, 7, 7, 7, 7, 7, 30]],
                  os.path.join(out, "verify.jsonl"))
    packed = Packed()
    torch.save(packed.state_dict(), os.path.join(out, "packed.pt"))
    record_logits(packed, [[3, 14, 15, 0, 0], [9, 2, 6, 5, 35], [4, 0, 13, 0], [7, 7, 7, 7, 7, 7, 30, 0, 0, 0]],
                  os.path.join(out, "packed.verify.jsonl"), forward=lambda m, ids, lengths: m(ids.t(), lengths), pad=0)

"""The long-input model of BENCHMARKS.md's "Checkpoints that keep the
layers' boundaries" (issue 40): a 2-layer bidirectional LSTM classifier,
V 5,000, E 100, H 128, mean of the outputs, Linear -> ReLU -> Linear,
untrained (seed 1), with its logits on three inputs and inputs of 250,
500, 1,000, 2,000, 4,000 and 16,000 random token ids (seed 2).

    /usr/bin/python3 bench/torch/gen_long.py OUT_DIR
    whitebox attribute -model OUT_DIR/m.pt -head auto -verify OUT_DIR/verify.jsonl -method ig < OUT_DIR/in1000.txt
"""
import json
import os
import random
import sys

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(5000, 100)
        self.lstm = nn.LSTM(100, 128, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Sequential(nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 5))

    def forward(self, ids):
        out, _ = self.lstm(self.embedding(ids))
        return self.fc(out.mean(dim=1))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(1)
    m = Classifier().eval()
    torch.save(m.state_dict(), os.path.join(out, "m.pt"))
    with open(os.path.join(out, "verify.jsonl"), "w") as f, torch.no_grad():
        for ids in [[3, 14, 15], [9, 2, 6, 5, 35, 4000], [7, 7, 30, 1]]:
            f.write(json.dumps({"ids": ids, "logits": m(torch.tensor([ids]))[0].tolist()}) + "\n")
    random.seed(2)
    for t in (250, 500, 1000, 2000, 4000, 16000):
        with open(os.path.join(out, "in%d.txt" % t), "w") as f:
            f.write(" ".join(str(random.randrange(5000)) for _ in range(t)) + "\n")


if __name__ == "__main__":
    main()

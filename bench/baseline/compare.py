#!/usr/bin/env python3
"""Compares `whitebox attribute` with reference.py on many inputs.

For every network, method and relevance class (and the predicted class) it
runs both on the paper's Table 2 inputs plus seeded random ones, and reports
every score whose difference exceeds tol * max(1e-5, max |score| of that
heatmap). Exit status 1 when any differ.

Usage: compare.py [-random N] [-tol T] [-whitebox PATH]
"""
import argparse
import json
import random
import subprocess
import sys
import os

HERE = os.path.dirname(os.path.abspath(__file__))
PAPER = {"counting": ["aaabb", "bbbaa", "aaabbb", "aabbb"],
         "sp-counter": ["acb", "acbb", "aacb", "abcab", "aacc", "accb"],
         "sp-fsa": ["acb", "acbb", "aacb", "abcab", "aacc"],
         "bracket": ["([[([", "([[([]", "([[]])", "[([][()"]}
CLASSES = {"counting": ["False", "True"], "sp-counter": ["False", "True"],
           "sp-fsa": ["False", "True"], "bracket": [")", "]", "None"]}


def random_inputs(net, n, rng):
    out = []
    for _ in range(n):
        length = rng.randint(1, 12)
        if net == "bracket":
            s, stack = "", []
            for _ in range(length):
                if stack and rng.random() < 0.5:
                    s += ")" if stack.pop() == "(" else "]"
                else:
                    c = rng.choice("([")
                    stack.append(c)
                    s += c
            out.append(s)
        else:
            out.append("".join(rng.choice("ab" if net == "counting" else "abcd") for _ in range(length)))
    return out


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {p.stderr}")
    return [json.loads(line) for line in p.stdout.splitlines()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-random", type=int, default=20)
    ap.add_argument("-tol", type=float, default=1e-6)
    ap.add_argument("-whitebox", default="whitebox")
    a = ap.parse_args()
    rng = random.Random(1)
    bad = total = 0
    for net, paper in PAPER.items():
        inputs = paper + random_inputs(net, a.random, rng)
        for method in ["occlusion", "saliency", "gxi", "ig", "lrp"]:
            for cls in [""] + CLASSES[net]:
                flags = ["-net", net, "-method", method] + (["-class", cls] if cls else [])
                ours = run([a.whitebox, "attribute"] + flags + inputs)
                ref = run([sys.executable, os.path.join(HERE, "reference.py")] + flags + inputs)
                for o, r in zip(ours, ref):
                    total += 1
                    scale = max(1e-5, max(abs(v) for v in r["scores"]))
                    diffs = [abs(x - y) for x, y in zip(o["scores"], r["scores"])]
                    logit_diff = max(abs(o["logits"][c] - r["logits"][c]) for c in CLASSES[net])
                    same = (o["class"] == r["class"] and o["prediction"] == r["prediction"]
                            and max(diffs) <= a.tol * scale and logit_diff <= 1e-9)
                    if not same:
                        bad += 1
                        print(f"DIFF {net} {method} class={cls or 'predicted'} {o['input']!r}\n"
                              f"  ours {o['class']}/{o['prediction']} {o['scores']}\n"
                              f"  ref  {r['class']}/{r['prediction']} {r['scores']}")
    print(f"{total - bad} agree, {bad} differ (tolerance {a.tol} of each heatmap's max |score|)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Captum's IntegratedGradients on the imported benchmark models, timed.

Loads ../../model/testdata/bench_h256.safetensors (V=200 E=100 H=256 L=1
unidirectional C=5) and bench_bi2_h64.safetensors (V=200 E=16 H=64 L=2
bidirectional C=5) into PyTorch float64 (their F32 weights upcast), draws a
length-200 random token sequence (numpy default_rng(seed), uniform over the
vocabulary) and times

    IntegratedGradients(f).attribute(e, baselines=0, target=predicted,
        n_steps=50, method="gausslegendre", internal_batch_size=50,
        return_convergence_delta=True)

on the embedded input e (the attribution input, as in the Go engine: the
embedding lookup is not timed), one thread, float64. The two forward passes
Captum runs for the convergence delta are included. One warm-up call, then
--repeat (5) timed calls; prints the median as a Go benchmark line
(name, repeat count, ns/op), e.g.

    BenchmarkImportedIG/h256-T200-steps50 	 5 	 123456789 ns/op

Usage: PYTHONPATH=/path/to/captum captum_ig.py [--repeat N] [--T 200] [--seed 1]
"""
import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_default_dtype(torch.float64)  # before Captum builds any alphas
torch.set_num_threads(1)

from captum.attr import IntegratedGradients  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from baseline import Imported  # noqa: E402  (the same loader as baseline.py's cases)

MODELS = [("h256", "bench_h256"), ("bi2-h64", "bench_bi2_h64")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--T", type=int, default=200)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print("goos: linux\ngoarch: amd64\npkg: github.com/whitebox-lstm/whitebox/bench")
    print("# captum_ig.py: Captum IntegratedGradients, torch %s, float64, %d thread(s), %s"
          % (torch.__version__, torch.get_num_threads(), platform.processor() or platform.machine()))
    for short, name in MODELS:
        net = Imported(name).eval()
        spec = net.spec
        with torch.no_grad():  # the loader is right: the fixture's logits
            for case in spec["cases"]:
                got = net(net.emb[torch.tensor(case["ids"])].unsqueeze(0))[0]
                assert torch.allclose(got, torch.tensor(case["logits"]), rtol=0, atol=1e-12), name
        rng = np.random.default_rng(args.seed)
        ids = torch.tensor(rng.integers(0, spec["vocab"], args.T))
        e = net.emb[ids].unsqueeze(0)
        with torch.no_grad():
            target = int(torch.argmax(net(e)[0]))
        ig = IntegratedGradients(net)

        def run():
            return ig.attribute(e, baselines=torch.zeros_like(e), target=target, n_steps=args.steps,
                                method="gausslegendre", internal_batch_size=args.steps,
                                return_convergence_delta=True)

        attr, delta = run()  # warm-up
        samples = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            run()
            samples.append(time.perf_counter() - t0)
        med = statistics.median(samples)
        print("# %s: delta %.3g, samples %s s" % (name, float(delta), " ".join("%.4f" % s for s in samples)))
        print("BenchmarkImportedIG/%s-T%d-steps%d \t %d \t %.0f ns/op" % (short, args.T, args.steps, args.repeat, med * 1e9),
              flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""PyTorch/NumPy timings of issue 4's workloads, for side-by-side ratios.

Each case is the workload of a Go benchmark in ../bench_test.go and prints
Go benchmark lines under the same name, so that `benchreport -baseline` (and
benchstat, with -col engine) can put the two engines side by side:

  IG (Captum's algorithm written out with autograd: zero baseline, the
  alpha-scaled copies as one batch, Gauss-Legendre nodes from
  numpy.polynomial.legendre.leggauss, gradients weighted and summed, times
  the input; target = the predicted class; the forward passes at x and at 0
  that Captum runs for the convergence delta are included, as ours are):
    sp-counter T=256, 50/1000/10000 steps, one batch;
    sp-counter T=4096, 1000/10000 steps, in chunks of --chunk steps (250);
    dense-h256 (H=256, D=128) T=256, 50 steps, one batch.
  Occlusion (Captum's algorithm: every position's row set to 0, the
  occluded copies evaluated --occ-batch (256) at a time without autograd):
    sp-counter and sp-fsa, T=4096.
  LRP (Arras et al.'s NumPy loop, reference.py's Classifier.lrp):
    sp-counter T=256 and T=4096, dense-h256 T=4096.
  DGEMM: one 1024x1024 float64 matrix product (torch.mm, 1 thread), the
  machine's single-core matrix-multiply rate the dense IG bar is judged by.
  Leggauss: the cost of the Gauss-Legendre nodes, computed once per step
  count and cached outside the timed IG calls (Captum recomputes them).

float64 and one thread throughout (torch.set_num_threads(1)). The white-box
networks are reference.py's constructions (m=50, u=0.7 for sp-counter, u=1
for sp-fsa). Inputs are random one-hot strings, uniform over abcd, and for
the dense network N(0, 1) entries with weights ~ N(0, 1/(H+D)) as in
../bench.go: the same distributions as the Go suite, not the same bits.

A case whose first run takes under 2 s is warmed up by that run and then
timed --repeat times; a longer one keeps its first run as a sample and
repeats while the case stays under --case-budget seconds.

Usage: baseline.py [--quick] [--skip-large] [--repeat N] [--only REGEX]
  --quick       T=4096 cases and 10000 steps left out (a test run of seconds)
  --skip-large  leave out IG T=4096 10000 steps and sp-fsa occlusion (the
                two cases of about a minute each)
"""
import os

# One thread for the BLAS too (torch.set_num_threads does not reach a
# generic BLAS such as Debian's OpenBLAS); set before numpy loads it.
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference  # noqa: E402  (sets float64 as torch's default dtype)

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)


def one_hot(rng, t, d):
    x = torch.zeros(t, d)
    x[torch.arange(t), torch.tensor(rng.integers(0, d, t))] = 1.0
    return x


def dense_model(h, d, rng):
    """The random dense LSTM of ../bench.go's DenseParams, in reference.py's layout."""
    sd = 1 / np.sqrt(h + d)
    p = {g: [rng.normal(0, sd, (h, h)), rng.normal(0, sd, (h, d)), rng.normal(0, sd, h)] for g in "ifgo"}
    w = rng.normal(0, 1 / np.sqrt(h), (2, h))
    b = rng.normal(0, 1 / np.sqrt(h), 2)
    return reference.Classifier(p, w, b)


def predicted(model, x):
    with torch.no_grad():
        return int(torch.argmax(model(x.unsqueeze(0))[0]))


CACHE = ""
_rules = {}


def rule(steps):
    """Gauss-Legendre on [0, 1], computed once per step count.

    numpy's leggauss solves a dense n x n eigenproblem, O(n^3): about 0.1 s
    for 1000 nodes but over a minute for 10000, so the nodes are also cached
    on disk (--cache) and the cost of computing them is printed as its own
    Leggauss line when they are computed."""
    if steps not in _rules:
        path = os.path.join(CACHE, f"leggauss-{steps}.npy")
        try:
            nodes, weights = np.load(path)
        except OSError:
            t0 = time.perf_counter()
            nodes, weights = np.polynomial.legendre.leggauss(steps)
            emit(f"BenchmarkLeggauss/steps={steps}", [time.perf_counter() - t0])
            try:
                os.makedirs(CACHE, exist_ok=True)
                np.save(path, np.stack([nodes, weights]))
            except OSError:
                pass
        _rules[steps] = (torch.tensor(0.5 * (nodes + 1)), torch.tensor(0.5 * weights))
    return _rules[steps]


def ig(model, x, steps, chunk):
    """Captum's IntegratedGradients (zero baseline) with internal_batch_size=chunk."""
    alphas, sizes = rule(steps)
    target = predicted(model, x)
    xb = x.unsqueeze(0)
    total = torch.zeros_like(x)
    for k0 in range(0, steps, chunk):
        a = alphas[k0:k0 + chunk]
        scaled = (a.view(-1, 1, 1) * xb).requires_grad_(True)
        y = model(scaled)[:, target].sum()
        (g,) = torch.autograd.grad(y, scaled)
        total += (g * sizes[k0:k0 + chunk].view(-1, 1, 1)).sum(0)
    r = (total * x).sum(1)
    with torch.no_grad():
        delta = r.sum() - (model(xb)[0, target] - model(torch.zeros_like(xb))[0, target])
    return r, float(delta)


def occlusion(model, x, batch):
    """Captum's Occlusion (one row, baseline 0) with perturbations_per_eval=batch."""
    t = len(x)
    with torch.no_grad():
        logits = model(x.unsqueeze(0))[0]
        target = int(torch.argmax(logits))
        out = torch.empty(t)
        for t0 in range(0, t, batch):
            n = min(batch, t - t0)
            occ = x.unsqueeze(0).repeat(n, 1, 1)
            occ[torch.arange(n), torch.arange(t0, t0 + n)] = 0
            out[t0:t0 + n] = logits[target] - model(occ)[:, target]
    return out


TESTDATA = os.path.join(HERE, "..", "..", "model", "testdata")


def read_safetensors(path):
    """The tensors of a .safetensors file (F64, F32, F16), as float64."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    kinds = {"F64": np.float64, "F32": np.float32, "F16": np.float16}
    out = {}
    for k, v in header.items():
        a, b = v["data_offsets"]
        arr = np.frombuffer(body[a:b], dtype=np.dtype(kinds[v["dtype"]]).newbyteorder("<"))
        out[k] = torch.from_numpy(arr.astype(np.float64)).reshape(v["shape"])
    return out


class Imported(torch.nn.Module):
    """Embedding -> nn.LSTM -> Linear on h_n[-1] (cat(h_n[-2], h_n[-1]) when
    bidirectional), from a model/testdata fixture: the imported-model cases.
    forward takes the embedded input, which IG attributes."""

    def __init__(self, name):
        super().__init__()
        spec = json.load(open(os.path.join(TESTDATA, name + ".json")))
        sd = read_safetensors(os.path.join(TESTDATA, name + ".safetensors"))
        p = spec["prefixes"]
        self.bi, self.vocab = spec["bidirectional"], spec["vocab"]
        self.emb = sd[p["embedding"] + ".weight"]
        self.lstm = torch.nn.LSTM(spec["input"], spec["hidden"], num_layers=spec["layers"],
                                  bidirectional=self.bi, batch_first=True, bias=spec["lstm_bias"])
        self.dec = torch.nn.Linear(spec["hidden"] * (2 if self.bi else 1), spec["classes"], bias=spec["decoder_bias"])
        self.lstm.load_state_dict({k[len(p["lstm"]) + 1:]: v for k, v in sd.items() if k.startswith(p["lstm"] + ".")})
        self.dec.load_state_dict({k[len(p["decoder"]) + 1:]: v for k, v in sd.items() if k.startswith(p["decoder"] + ".")})
        self.spec = spec

    def forward(self, e):
        _, (h_n, _) = self.lstm(e)
        return self.dec(torch.cat((h_n[-2], h_n[-1]), dim=-1) if self.bi else h_n[-1])

    def forward_flops(self, t):
        s = self.spec
        h, dirs = s["hidden"], 2 if self.bi else 1
        f = sum(dirs * 8 * h * ((s["input"] if k == 0 else h * dirs) + h) for k in range(s["layers"]))
        return f * t + 2 * s["classes"] * h * dirs


def lrp(model, xn, target):
    return model.lrp(xn, target).sum(1)


def dgemm(n=1024):
    a, b = torch.randn(n, n), torch.randn(n, n)
    return lambda: torch.mm(a, b)


def emit(name, seconds, metrics=()):
    """One Go benchmark line per sample: name, 1 iteration, ns/op, metrics."""
    for s in seconds:
        extra = "".join(f"\t{f(s):.6g} {unit}" for unit, f in metrics)
        print(f"{name}\t1\t{s * 1e9:.0f} ns/op{extra}", flush=True)


def measure(fn, repeat, budget):
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    samples = [] if first < 2 else [first]
    while len(samples) < repeat and (first < 2 or sum(samples) + first <= budget):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return samples


def flops_forward(h, d, c, t):
    """../bench.go's ForwardFLOPs: 2·4H·(D+H) per step plus the decoder."""
    return t * 8 * h * (h + d) + 2 * c * h


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--case-budget", type=float, default=120)
    ap.add_argument("--chunk", type=int, default=250)
    ap.add_argument("--occ-batch", type=int, default=256)
    ap.add_argument("--only", default="", help="run only the cases whose name matches this regex")
    ap.add_argument("--cache", default=os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "whitebox-baseline"),
                    help="where the Gauss-Legendre nodes are cached")
    a = ap.parse_args()
    global CACHE
    CACHE = a.cache

    print(f"engine: pytorch\ntorch: {torch.__version__}\nnumpy: {np.__version__}\n"
          f"python: {platform.python_version()}\nthreads: {torch.get_num_threads()}\n"
          f"ig-chunk: {a.chunk}\nocclusion-batch: {a.occ_batch}")
    print(f"goos: linux\ngoarch: amd64\npkg: github.com/whitebox-lstm/whitebox/bench")

    rng = np.random.default_rng(2)
    sp = reference.Classifier(*reference.sp_counter(50.0, 0.7))
    fsa = reference.Classifier(*reference.sp_fsa(50.0, 1.0))
    dense = dense_model(256, 128, np.random.default_rng(1))
    xs = {t: one_hot(rng, t, 4) for t in (256, 4096)}
    xd = {t: torch.tensor(rng.normal(0, 1, (t, 128))) for t in (256, 4096)}

    cases = []  # (name, fn, metrics)

    def add(name, fn, metrics=()):
        if (not a.only or re.search(a.only, name)):
            cases.append((name, fn, metrics))

    add("BenchmarkDGEMM/n=1024", dgemm(), [("GFLOP/s", lambda s: 2 * 1024 ** 3 / s / 1e9)])
    for t, steps in [(256, 50), (256, 1000), (256, 10000), (4096, 1000), (4096, 10000)]:
        if a.quick and (t > 256 or steps > 1000):
            continue
        if a.skip_large and t == 4096 and steps == 10000:
            continue
        chunk = steps if t <= 256 else a.chunk
        add(f"BenchmarkIG/net=sp-counter/T={t}/steps={steps}",
            lambda t=t, steps=steps, chunk=chunk: ig(sp, xs[t], steps, chunk),
            [("token-steps/s", lambda s, t=t, steps=steps: t * steps / s)])
    f = (2 * 50 + 2) * flops_forward(256, 128, 2, 256)
    add("BenchmarkIG/net=dense-h256/T=256/steps=50", lambda: ig(dense, xd[256], 50, 50),
        [("token-steps/s", lambda s: 256 * 50 / s), ("GFLOP/s", lambda s: f / s / 1e9)])
    # Imported models: Captum's IntegratedGradients algorithm (ig above: all
    # 50 steps in one batch, the forward passes of the delta included) on
    # the embedded input of a random length-200 token sequence.
    for name in ("bench_h256", "bench_bi2_h64"):
        net = Imported(name).eval()
        e = net.emb[torch.tensor(rng.integers(0, net.vocab, 200))]
        f_imp = (2 * 50 + 2) * net.forward_flops(200)
        add(f"BenchmarkImportedIG/model={name}/T=200/steps=50", lambda net=net, e=e: ig(net, e, 50, 50),
            [("token-steps/s", lambda s: 200 * 50 / s), ("GFLOP/s", lambda s, f=f_imp: f / s / 1e9)])
    if not a.quick:
        add("BenchmarkOcclusion/net=sp-counter/T=4096", lambda: occlusion(sp, xs[4096], a.occ_batch),
            [("tokens/s", lambda s: 4096 / s)])
        if not a.skip_large:
            add("BenchmarkOcclusion/net=sp-fsa/T=4096", lambda: occlusion(fsa, xs[4096], a.occ_batch),
                [("tokens/s", lambda s: 4096 / s)])
    for model, net, x, ts in [(sp, "sp-counter", xs, (256, 4096)), (dense, "dense-h256", xd, (4096,))]:
        for t in ts:
            if a.quick and t > 256:
                continue
            target = predicted(model, x[t])
            xn = x[t].numpy()
            metrics = [("tokens/s", lambda s, t=t: t / s)]
            if net.startswith("dense"):
                lf = 1.25 * flops_forward(256, 128, 2, t)
                metrics.append(("GFLOP/s", lambda s, lf=lf: lf / s / 1e9))
            add(f"BenchmarkLRP/net={net}/T={t}",
                lambda model=model, xn=xn, target=target: lrp(model, xn, target), metrics)

    for name, fn, metrics in cases:
        m = re.search(r"steps=(\d+)", name)
        if m:
            rule(int(m.group(1)))  # outside the timed calls
        emit(name, measure(fn, a.repeat, a.case_budget), metrics)


if __name__ == "__main__":
    main()

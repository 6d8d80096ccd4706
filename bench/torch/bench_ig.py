#!/usr/bin/python3
"""PyTorch's time for the IG that `whitebox attribute -method ig` computes.

The imported-model cases of issue 21, the same as BenchmarkImportedIG in
../imported_test.go: the same files (model/testdata/bench_h256.safetensors:
V=200 E=100 H=256, 1 layer; bench_bi2_h64.safetensors: V=200 E=16 H=64, 2
layers, bidirectional; bench_gru_h256.safetensors (issue 38): bench_h256's
shape with an nn.GRU, made by model/testdata/gru/gen_gru.py; all F32
weights, C=5, logits = Linear(h_n)) and the same token ids (bench.TokenIDs:
SplitMix64 seeded with T, id = output mod V).

The computation (Captum's IntegratedGradients with internal_batch_size=None,
written out with autograd so that nothing but PyTorch is timed): on the
embedded input e (T x E; the embedding lookup is not timed, as in Go),

    c      = argmax f(e)                       (one forward pass)
    grads  = d/dx sum_k f_c(alpha_k e)         (the 50 scaled copies as ONE
                                                batch: one forward, one backward)
    scores = sum_E (e * sum_k w_k grads_k)     (one score per token)
    delta  = sum(scores) - (f_c(e) - f_c(0))   (one more forward pass)

with Captum's 50-point Gauss-Legendre rule: alphas 0.5(1 + leggauss nodes)
and weights 0.5 leggauss weights rounded to float32 (Captum's
torch.tensor(step_sizes).float(); whitebox -captum-weights, its default with
-model). The same work as whitebox's: 2*50 + 2 forward-pass equivalents.

In float64 and in float32 (the model, input, alphas and weights cast), at
--threads threads: torch.set_num_threads and OMP/OPENBLAS/MKL_NUM_THREADS,
set here before torch is imported (a BLAS reads them at load). Which BLAS
torch uses is printed (the driver, run.sh, puts OpenBLAS on
LD_LIBRARY_PATH: Debian's torch links the generic libblas.so.3).

--whitebox BIN: before timing, runs `BIN attribute -model FILE -method ig
-steps 50 -head hn` on the same ids and asserts that its logits, token
scores and delta equal PyTorch's float64 ones to --tol (1e-8): the two
compute the same thing. Also prints how far float32's scores are from it.

Timing, per case and dtype: --warmup calls (1), then --repeat (5) timed
calls, stopping early once the case has taken --case-budget seconds (20,
warm-up included) with at least one sample in; a first call longer than
2 s is kept as a sample instead of a warm-up (as ../baseline/baseline.py
does). Past --deadline seconds from the start no case or sample is begun (a
"# skipped" line says so): on an overloaded machine PyTorch's 2-thread calls
can take 10x their 1-thread time (its OpenMP and BLAS threads wait on each
other in turn). Cases run cheapest first, so a deadline drops the longest. Prints Go benchmark
lines, one per sample, under the Go benchmark's names with the thread count
as the -N suffix and "engine: pytorch-float64|pytorch-float32" config lines,
so benchstat reads the output as it is, beside the Go side's.

Usage: bench_ig.py --threads N [--repeat R] [--whitebox BIN] [--only REGEX]
"""
import argparse
import os
import sys

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--repeat", type=int, default=5)
ap.add_argument("--warmup", type=int, default=1)
ap.add_argument("--case-budget", type=float, default=20.0, help="seconds per case and dtype, warm-up included")
ap.add_argument("--dtypes", default="float64,float32")
ap.add_argument("--only", default="", help="regex on the case name")
ap.add_argument("--whitebox", default="", help="the whitebox binary to check the float64 scores against")
ap.add_argument("--tol", type=float, default=1e-8)
ap.add_argument("--check-only", action="store_true", help="check against --whitebox, time nothing")
ap.add_argument("--deadline", type=float, default=0,
                help="seconds from the start after which no case or sample is begun (0: none); what is skipped is said")
ARGS = ap.parse_args()
if ARGS.threads < 1:
    sys.exit("bench_ig.py: --threads must be >= 1")
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = str(ARGS.threads)

import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokens import token_ids  # noqa: E402

torch.set_num_threads(ARGS.threads)

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.normpath(os.path.join(HERE, "..", "..", "model", "testdata"))
STEPS = 50
# (model, T): BenchmarkImportedIG's cases (importedCases in ../imported_test.go)
CASES = [("bench_bi2_h64", 200), ("bench_gru_h256", 200), ("bench_h256", 200),
         ("bench_gru_h256", 1000), ("bench_h256", 1000)]  # cheapest first


def read_safetensors(path):
    """The tensors of a .safetensors file (F64, F32), as float64."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    kinds = {"F64": "<f8", "F32": "<f4"}
    out = {}
    for k, v in header.items():
        a, b = v["data_offsets"]
        arr = np.frombuffer(body[a:b], dtype=kinds[v["dtype"]]).astype(np.float64)
        out[k] = torch.from_numpy(arr).reshape(v["shape"])
    return out


class Classifier(torch.nn.Module):
    """nn.LSTM -> Linear on h_n[-1] (cat(h_n[-2], h_n[-1]) when bidirectional):
    gen.py's model family, taking the embedded input; nn.GRU in place of the
    LSTM where the spec says "kind": "gru" (gen_gru.py's bench model)."""

    def __init__(self, name):
        super().__init__()
        spec = json.load(open(os.path.join(TESTDATA, name + ".json")))
        sd = read_safetensors(os.path.join(TESTDATA, name + ".safetensors"))
        p = spec["prefixes"]
        self.bi, self.vocab = spec["bidirectional"], spec["vocab"]
        self.emb = sd[p["embedding"] + ".weight"]
        self.gru = spec.get("kind", "lstm") == "gru"
        self.lstm = (torch.nn.GRU if self.gru else torch.nn.LSTM)(
            spec["input"], spec["hidden"], num_layers=spec["layers"], bidirectional=self.bi, batch_first=True,
            bias=spec["lstm_bias"])
        self.dec = torch.nn.Linear(spec["hidden"] * (2 if self.bi else 1), spec["classes"],
                                   bias=spec["decoder_bias"])
        self.double()
        self.lstm.load_state_dict({k[len(p["lstm"]) + 1:]: v for k, v in sd.items() if k.startswith(p["lstm"] + ".")})
        self.dec.load_state_dict({k[len(p["decoder"]) + 1:]: v for k, v in sd.items()
                                  if k.startswith(p["decoder"] + ".")})
        self.path = os.path.join(TESTDATA, name + ".safetensors")
        self.eval()

    def forward(self, e):
        _, h_n = self.lstm(e)
        if not self.gru:
            h_n = h_n[0]  # (h_n, c_n)
        return self.dec(torch.cat((h_n[-2], h_n[-1]), dim=-1) if self.bi else h_n[-1])


def rule(dtype):
    """Captum's Gauss-Legendre alphas, and its weights rounded to float32."""
    nodes, weights = np.polynomial.legendre.leggauss(STEPS)
    alphas = torch.tensor(0.5 * (1 + nodes), dtype=torch.float64)
    sizes = torch.tensor(0.5 * weights, dtype=torch.float64).float().double()
    return alphas.to(dtype), sizes.to(dtype)


def ig(model, e, alphas, sizes):
    """The token scores, the completeness gap, the class and the logits."""
    xb = e.unsqueeze(0)
    with torch.no_grad():
        logits = model(xb)[0]
    c = int(torch.argmax(logits))
    scaled = (alphas.view(-1, 1, 1) * xb).requires_grad_(True)
    (g,) = torch.autograd.grad(model(scaled)[:, c].sum(), scaled)
    scores = ((g * sizes.view(-1, 1, 1)).sum(0) * e).sum(1)
    with torch.no_grad():
        delta = scores.sum() - (logits[c] - model(torch.zeros_like(xb))[0, c])
    return scores, float(delta), c, logits


def check(name, t, model, e, res, f32):
    """whitebox's CLI on the same ids: the same logits, scores and delta."""
    ids = token_ids(t, model.vocab)
    cmd = [ARGS.whitebox, "attribute", "-model", model.path, "-method", "ig", "-steps", str(STEPS), "-head", "hn"]
    p = subprocess.run(cmd, input=" ".join(map(str, ids)) + "\n", capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("bench_ig.py: %s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    out = json.loads(p.stdout)
    scores, delta, c, logits = res
    if str(out["class"]) != str(c):  # a class name: "0", "1", ... without -classes
        sys.exit("bench_ig.py: %s T=%d: whitebox's class %s, PyTorch's %d" % (name, t, out["class"], c))
    wb_logits = [out["logits"][str(k)] for k in range(len(logits))]  # {"0": ..., "1": ...} without -classes
    d_logits = float(np.max(np.abs(np.array(wb_logits) - logits.numpy())))
    d_scores = float(np.max(np.abs(np.array(out["scores"]) - scores.numpy())))
    d_delta = abs(out["delta"] - delta)
    f32_scores = f32[0].double().numpy()
    d32 = float(np.max(np.abs(f32_scores - scores.numpy())))
    print("# check %s T=%d: |whitebox - PyTorch float64| max: logits %.2e, scores %.2e, delta %.2e "
          "(tol %.0e; max |score| %.3g); PyTorch float32's scores off float64's by %.2e"
          % (name, t, d_logits, d_scores, d_delta, ARGS.tol, float(scores.abs().max()), d32), flush=True)
    worst = max(d_logits, d_scores, d_delta)
    if not worst <= ARGS.tol:
        sys.exit("bench_ig.py: %s T=%d: whitebox and PyTorch float64 differ by %.3g > %g" % (name, t, worst, ARGS.tol))


def dgemm(dtype, n=1024):
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    torch.mm(a, b)
    best = min(_timed(lambda: torch.mm(a, b)) for _ in range(3))
    return 2 * n ** 3 / best / 1e9


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def blas_library():
    """The BLAS this process loaded (from /proc/self/maps)."""
    try:
        libs = {line.split()[-1] for line in open("/proc/self/maps") if "blas" in line.lower()}
    except OSError:
        return "unknown"
    return ", ".join(sorted(os.path.realpath(x) for x in libs if x.startswith("/"))) or "none"


def main():
    torch.set_grad_enabled(True)
    pat = re.compile(ARGS.only) if ARGS.only else None
    dtypes = [{"float64": torch.float64, "float32": torch.float32}[d] for d in ARGS.dtypes.split(",") if d]
    print("goos: linux\ngoarch: amd64\npkg: github.com/whitebox-lstm/whitebox/bench")
    print("# bench_ig.py: torch %s, numpy %s, python %s, %s" % (torch.__version__, np.__version__,
                                                               platform.python_version(), platform.processor()))
    print("# threads: torch.get_num_threads()=%d, OMP/OPENBLAS/MKL_NUM_THREADS=%d" % (torch.get_num_threads(), ARGS.threads))
    torch.mm(torch.ones(2, 2), torch.ones(2, 2))  # loads the BLAS
    print("# BLAS loaded: %s" % blas_library())
    if not ARGS.check_only:
        print("# torch.mm 1024x1024, %d thread(s): float64 %.1f GFLOP/s, float32 %.1f GFLOP/s"
              % (ARGS.threads, dgemm(torch.float64), dgemm(torch.float32)), flush=True)
    t_start = time.perf_counter()

    def late():
        return ARGS.deadline > 0 and time.perf_counter() - t_start > ARGS.deadline

    for name, t in CASES:
        bench = "ImportedIG/model=%s/T=%d/steps=%d" % (name, t, STEPS)
        if pat and not pat.search(bench):
            continue
        model = Classifier(name)
        e64 = model.emb[torch.tensor(token_ids(t, model.vocab))]
        if ARGS.whitebox:
            m32 = Classifier(name).float()
            r32 = ig(m32, e64.float(), *rule(torch.float32))
            check(name, t, model, e64, ig(model, e64, *rule(torch.float64)), r32)
        if ARGS.check_only:
            continue
        for dtype in dtypes:
            if late():
                print("# skipped %s %s: past --deadline %g s" % (bench, dtype, ARGS.deadline), flush=True)
                continue
            m = model if dtype == torch.float64 else Classifier(name).to(dtype)
            e, (alphas, sizes) = e64.to(dtype), rule(dtype)
            samples, spent = [], 0.0
            for k in range(ARGS.warmup):
                w = _timed(lambda: ig(m, e, alphas, sizes))
                spent += w
                if k == 0 and w > 2:  # long enough to be its own warm-up
                    samples.append(w)
                    break
            while len(samples) < ARGS.repeat and not (samples and (late() or spent >= ARGS.case_budget)):
                samples.append(_timed(lambda: ig(m, e, alphas, sizes)))
                spent += samples[-1]
            print("engine: pytorch-%s" % str(dtype).replace("torch.", ""))
            suffix = "" if ARGS.threads == 1 else "-%d" % ARGS.threads
            for s in samples:
                print("Benchmark%s%s \t       1\t%12d ns/op\t%12.0f token-steps/s" % (bench, suffix, round(s * 1e9), t * STEPS / s))
            print("# %s %s: median %.1f ms, min %.1f, max %.1f (%d samples)" % (
                bench, dtype, statistics.median(samples) * 1e3, min(samples) * 1e3, max(samples) * 1e3, len(samples)),
                flush=True)


if __name__ == "__main__":
    main()

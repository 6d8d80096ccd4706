#!/usr/bin/python3
"""Long inputs (issue 40, point 4): IG with 50 steps on one input of T
tokens of gen_long.py's model (2-layer bidirectional LSTM, V 5,000, E 100,
H 128), whitebox's one-shot CLI beside PyTorch float32 and float64, each
run a process of its own: wall time, time per token and peak RSS
(ru_maxrss of wait4).

  whitebox: -budget default (256 MiB) and SPARE (memory to spare),
            GOMAXPROCS 1 and 2;
  PyTorch:  torch.set_num_threads 1 and 2 (--torch-threads), the α steps
            in batches of at most 50,000 / T (PyTorch keeps every step's
            activations for backprop: 2.6 GB for 50 steps of 1,000 tokens
            in float64), gradients of the embeddings only (no weight
            gradients).

Also prints the FLOPs of the work as PyTorch runs it (a forward and a
backward pass of the data's gradients for each step: 2 × 50 × the forward
pass's 2·4H·(in + H) per token, layer and direction) a second, and that as
a share of the FMA peak of the cores the run had, given by --peak (float64
GFLOP/s of one core: go test ./bench/peak -bench FMAPeak; float32's is
twice it). PyTorch's products are its BLAS's: Debian's python3-torch uses
whichever libblas.so.3 is installed, the reference BLAS unless OpenBLAS
(libopenblas0-openmp) is: 4.4 against 36 GFLOP/s for a float64 1024² mm on
one core of the AMD EPYC of 2026-11-29. Each wall time includes starting
the process and loading the model (whitebox: and checking it against
verify.jsonl; PyTorch: importing torch).

Usage: long.py --whitebox BIN --dir DIR (made by gen_long.py) --peak GFLOPS
       [--T 250,1000,4000,16000] [--spare 16GiB] [--repeat N]
       [--torch-T 250,1000,4000,16000] [--torch-threads 1,2]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

E, H, LAYERS, DIRS, STEPS = 100, 128, 2, 2, 50


def flops(T):
    fwd = 0
    for layer in range(LAYERS):
        inp = E if layer == 0 else DIRS * H
        fwd += DIRS * 2 * 4 * H * (inp + H)
    return 2 * STEPS * fwd * T


def run(cmd, stdin_path, env):
    with open(stdin_path) as stdin, tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=stdin, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        rc = os.waitstatus_to_exitcode(status)
        err.seek(0)
        msg = " ".join(l.strip() for l in err.read().splitlines() if "warning" not in l)[:300]
    return rc, wall, usage.ru_maxrss / 1024.0, msg


def report(name, T, rc, wall, rss, cores, peak, msg):
    """peak: one core's float64 FMA peak (float32's is twice it)."""
    if rc != 0:
        print("# %s/T=%d failed (exit %d): %s" % (name, T, rc, msg), flush=True)
        return
    gf = flops(T) / wall / 1e9
    print("%s/T=%d-%d\t1\t%.0f ns/op\t%.1f µs/token\t%.1f peak-RSS-MiB\t%.1f GFLOP/s\t%.1f %%-of-FMA-peak"
          % (name, T, cores, wall * 1e9, wall / T * 1e6, rss, gf, 100 * gf / (peak * cores)), flush=True)


def torch_case(args):
    import torch
    torch.set_num_threads(args.threads)
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gen_long import Classifier
    m = Classifier()
    m.load_state_dict(torch.load(os.path.join(args.dir, "m.pt")))
    m = m.to(dtype).eval()
    for p in m.parameters():
        p.requires_grad_(False)
    with open(args.input) as f:
        ids = torch.tensor([[int(v) for v in f.read().split()]])
    T = ids.shape[1]
    emb = m.embedding(ids)
    with torch.no_grad():
        c = int(m(ids)[0].argmax())
    alphas = [(k + 0.5) / STEPS for k in range(STEPS)]
    batch = max(1, min(STEPS, 50000 // T))
    total = torch.zeros_like(emb)
    for b0 in range(0, STEPS, batch):
        a = torch.tensor(alphas[b0:b0 + batch], dtype=dtype).view(-1, 1, 1)
        x = (a * emb).requires_grad_(True)
        out, _ = m.lstm(x)
        logits = m.fc(out.mean(dim=1))
        g, = torch.autograd.grad(logits[:, c].sum(), x)
        total += g.sum(dim=0, keepdim=True)
    attr = emb * total / STEPS
    print("sum", float(attr.sum()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--whitebox")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--peak", type=float, default=0)
    ap.add_argument("--T", default="250,1000,4000,16000")
    ap.add_argument("--spare", default="16GiB")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--torch-T", default="250,1000,4000,16000")
    ap.add_argument("--torch-threads", default="1,2")
    ap.add_argument("--torch-case", action="store_true")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--dtype")
    ap.add_argument("--input")
    args = ap.parse_args()
    if args.torch_case:
        torch_case(args)
        return
    d = args.dir
    for T in [int(v) for v in args.T.split(",") if v]:
        inp = os.path.join(d, "in%d.txt" % T)
        for budget in ("default", args.spare):
            for cores in (1, 2):
                for _ in range(args.repeat):
                    cmd = [args.whitebox, "attribute", "-model", os.path.join(d, "m.pt"), "-head", "auto",
                           "-verify", os.path.join(d, "verify.jsonl"), "-method", "ig", "-steps", str(STEPS)]
                    if budget != "default":
                        cmd += ["-budget", budget]
                    env = dict(os.environ, GOMAXPROCS=str(cores))
                    rc, wall, rss, msg = run(cmd, inp, env)
                    report("LongIG/whitebox/budget=%s" % budget, T, rc, wall, rss, cores, args.peak, msg)
    for T in [int(v) for v in args.torch_T.split(",") if v]:
        inp = os.path.join(d, "in%d.txt" % T)
        for dtype in ("float32", "float64"):
            for threads in [int(v) for v in args.torch_threads.split(",") if v]:
                cmd = ["/usr/bin/python3", os.path.abspath(__file__), "--torch-case", "--dir", d,
                       "--threads", str(threads), "--dtype", dtype, "--input", inp]
                rc, wall, rss, msg = run(cmd, inp, dict(os.environ))
                peak = args.peak * (2 if dtype == "float32" else 1)
                report("LongIG/torch-%s" % dtype, T, rc, wall, rss, threads, peak, msg)


if __name__ == "__main__":
    main()

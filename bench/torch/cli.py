#!/usr/bin/python3
"""The one-shot CLI, start to exit: wall time and peak RSS of

    whitebox attribute -model FILE -method ig -steps 50 -head hn < ids

as a new user runs it (one process per input, all cores unless GOMAXPROCS
is set): the peak RSS is the process's own (ru_maxrss of wait4, what
/usr/bin/time -v reports as "Maximum resident set size"), the wall time is
measured here around the process.
The ids are bench.TokenIDs (tokens.py), the same as the in-process cases.

Cases (issue 21; the GRU, issue 38):
  - bench_h256, T = 200: all cores, and GOMAXPROCS=1;
  - bench_gru_h256 (bench_h256's shape with a GRU layer), T = 200: all
    cores, and GOMAXPROCS=1;
  - bench_bi2_h64, T = 50,000 (--long-T; 0: none), the default -budget:
    the long-input case; a refusal (non-zero exit) is recorded as such,
    with the command's message.

Prints Go benchmark lines (one per run; ns/op and peak-RSS-MiB) under the
name CLIIG/model=…/T=…/steps=50, the -N suffix the GOMAXPROCS the run had,
and "# refused …" for a run that did not succeed. Needs no torch.

Usage: cli.py --whitebox BIN [--repeat N] [--long-T 50000]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tokens import token_ids  # noqa: E402

TESTDATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "model", "testdata"))
VOCAB = 200  # every benchmark model (model/testdata/gen.py, model/testdata/gru/gen_gru.py)


def run_once(binary, model, ids_path, env):
    cmd = [binary, "attribute", "-model", os.path.join(TESTDATA, model + ".safetensors"),
           "-method", "ig", "-steps", "50", "-head", "hn"]
    # Output to files, not pipes, so that wait4 reaps the process itself
    # and reports its rusage.
    with open(ids_path) as stdin, tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=stdin, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = rc = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        nout, stderr = len(out.read()), err.read()
    msg = "; ".join(line.strip() for line in stderr.splitlines()
                    if line.startswith("whitebox") and "assuming -head" not in line)
    msg = re.sub(r'line 1: ".*?"… \(\d+ bytes\): ', "line 1: ", msg)  # not the input's echo
    return rc, wall, usage.ru_maxrss, msg, nout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--whitebox", required=True)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--long-T", type=int, default=50000)
    a = ap.parse_args()
    print("goos: linux\ngoarch: amd64\npkg: github.com/whitebox-lstm/whitebox/bench\nengine: whitebox-cli")
    ncpu = os.cpu_count() or 1
    cases = [("bench_h256", 200, None, a.repeat), ("bench_h256", 200, 1, a.repeat),
             ("bench_gru_h256", 200, None, a.repeat), ("bench_gru_h256", 200, 1, a.repeat)]
    if a.long_T > 0:
        cases.append(("bench_bi2_h64", a.long_T, None, 1))
    with tempfile.TemporaryDirectory(prefix="whitebox-cli-") as tmp:
        for model, t, procs, repeat in cases:
            path = os.path.join(tmp, "%s-%d.txt" % (model, t))
            with open(path, "w") as f:
                f.write(" ".join(map(str, token_ids(t, VOCAB))) + "\n")
            env = dict(os.environ)
            env.pop("GOMAXPROCS", None)
            if procs:
                env["GOMAXPROCS"] = str(procs)
            n = procs or ncpu
            name = "BenchmarkCLIIG/model=%s/T=%d/steps=50%s" % (model, t, "" if n == 1 else "-%d" % n)
            walls, rsss = [], []
            for _ in range(repeat):
                rc, wall, rss, msg, nout = run_once(a.whitebox, model, path, env)
                if rc != 0:
                    print("# refused %s: exit status %d after %.2f s, peak RSS %.1f MiB: %s"
                          % (name[len("Benchmark"):], rc, wall, rss / 1024, msg), flush=True)
                    break
                if nout == 0:
                    sys.exit("cli.py: %s wrote nothing" % name)
                walls.append(wall)
                rsss.append(rss / 1024)
                print("%s \t       1\t%12d ns/op\t%10.1f peak-RSS-MiB" % (name, round(wall * 1e9), rss / 1024), flush=True)
            if walls:
                print("# %s: wall median %.3f s (min %.3f, max %.3f), peak RSS median %.1f MiB (max %.1f), %d runs"
                      % (name[len("Benchmark"):], statistics.median(walls), min(walls), max(walls),
                         statistics.median(rsss), max(rsss), len(walls)), flush=True)


if __name__ == "__main__":
    main()

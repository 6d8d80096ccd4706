#!/usr/bin/python3
"""The tables of BENCHMARKS.md's "Imported models beside PyTorch", from a
results directory of bench/torch/run.sh (go.txt, pair.txt, torch.txt,
cli.txt, check.txt, machine.txt, benchstat-threads.txt), as Markdown on
stdout. Where the run has thread counts beyond 2 (THREADS), one more table
gives every case at each. Where it has the GRU (bench_gru_h256, issue 38),
one more table sets it beside the LSTM of the same shape (bench_h256):
times, GFLOP/s and their share of the FMA peak, and the GRU / LSTM time.

Every figure is the median of the samples, with their range in
parentheses; ratios are of medians. Needs no torch.

Usage: summary.py DIR
"""
import os
import re
import statistics
import sys

LINE = re.compile(r"^Benchmark(\S+?)(?:-(\d+))?\s+(\d+)\s+(.*)$")
H256 = "ImportedIG/model=bench_h256/T=200/steps=50"
H256_LONG = "ImportedIG/model=bench_h256/T=1000/steps=50"
BI2 = "ImportedIG/model=bench_bi2_h64/T=200/steps=50"
DENSE = "IG/net=dense-h256/T=256/steps=50"
GRU = "ImportedIG/model=bench_gru_h256/T=200/steps=50"
GRU_LONG = "ImportedIG/model=bench_gru_h256/T=1000/steps=50"
CLI = "CLIIG/model=bench_h256/T=200/steps=50"
CLI_GRU = "CLIIG/model=bench_gru_h256/T=200/steps=50"
MM = re.compile(r"torch\.mm 1024x1024, (\d+) thread\(s\): float64 ([0-9.]+) GFLOP/s")


def parse(path, samples, default_engine=""):
    """Adds {(engine, name, procs): {unit: [values]}} from a benchfmt file."""
    engine = default_engine
    notes = []
    if not os.path.exists(path):
        return notes
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("engine:"):
            engine = line.split(":", 1)[1].strip()
        elif line.startswith("#"):
            notes.append(line[1:].strip())
        m = LINE.match(line)
        if not m:
            continue
        name, procs, rest = m.group(1), int(m.group(2) or 1), m.group(4).split()
        units = samples.setdefault((engine, name, procs), {})
        for v, u in zip(rest[0::2], rest[1::2]):
            units.setdefault(u, []).append(float(v))
    return notes


def dur(ns):
    s = ns / 1e9
    if s >= 1:
        return "%.2f s" % s
    return "%.0f ms" % (s * 1e3) if s >= 0.1 else "%.1f ms" % (s * 1e3)


def cell(samples, key, unit="ns/op", fmt=dur):
    v = samples.get(key, {}).get(unit)
    if not v:
        return "—"
    if len(v) == 1:
        return fmt(v[0])
    return "%s (%s–%s)" % (fmt(statistics.median(v)), fmt(min(v)), fmt(max(v)))


def median(samples, key, unit="ns/op"):
    v = samples.get(key, {}).get(unit)
    return statistics.median(v) if v else None


def ratio(a, b):
    return a / b if a and b else None


def fmt_ratio(r):
    return "%.2f×" % r if r is not None else "—"


def met(r, target):
    return "—" if r is None else ("yes" if r >= target else "**no**")


def gru_vs_lstm(p, s, peaks):
    """The GRU beside the LSTM of its shape (bench_gru_h256, bench_h256):
    time, GFLOP/s (the Go benchmark's count: 2·gH·(in+H) a step, g = 3
    gates for the GRU, 4 for the LSTM) and its share of the FMA peak (one
    core a thread), and the GRU / LSTM time of each engine."""
    w, f64, f32 = "whitebox", "pytorch-float64", "pytorch-float32"
    if not any(k[1] in (GRU, GRU_LONG) for k in s):
        return
    best = max(peaks, key=peaks.get) if peaks else None

    def rate(name, th):
        g = s.get((w, name, th), {}).get("GFLOP/s")
        if not g:
            return "—"
        r = statistics.median(g)
        return "%.1f (%.0f%%)" % (r, 100 * r / (th * peaks[best])) if best else "%.1f" % r

    p("The GRU beside the LSTM of its shape (V = 200, E = 100, H = 256, 1 layer, the same ids): IG with 50 steps, "
      "in-process; GFLOP/s counts 2·3H·(E+H) a step for the GRU's 3 gates, 2·4H·(E+H) for the LSTM's 4, "
      "(2·50 + 2) passes%s:" % (
          ", in brackets its share of %s the FMA peak (%s, %.1f GFLOP/s a core)" % (
              "one or twice", best, peaks[best]) if best else ""))
    p("")
    p("| case | Go, 1 thread | GFLOP/s, 1 thread | Go, 2 threads | GFLOP/s, 2 threads | "
      "PyTorch f64, 1 thread | PyTorch f32, 1 thread | Go 1 thread vs f64 / f32, 1 thread |")
    p("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in (H256, GRU, H256_LONG, GRU_LONG):
        g1 = median(s, (w, name, 1))
        p("| %s | %s | %s | %s | %s | %s | %s | %s / %s |" % (
            name.replace("ImportedIG/", ""), cell(s, (w, name, 1)), rate(name, 1), cell(s, (w, name, 2)),
            rate(name, 2), cell(s, (f64, name, 1)), cell(s, (f32, name, 1)),
            fmt_ratio(ratio(median(s, (f64, name, 1)), g1)), fmt_ratio(ratio(median(s, (f32, name, 1)), g1))))
    p("")
    parts = []
    for gname, lname, t in ((GRU, H256, 200), (GRU_LONG, H256_LONG, 1000)):
        cells = []
        for what, e, th in (("Go 1 thread", w, 1), ("Go 2 threads", w, 2), ("PyTorch f64", f64, 1),
                            ("PyTorch f32", f32, 1)):
            r = ratio(median(s, (e, gname, th)), median(s, (e, lname, th)))
            cells.append("%s %s" % (what, "%.2f" % r if r is not None else "—"))
        parts.append("T = %d: %s" % (t, ", ".join(cells)))
    cg, cl = max((k for k in s if k[1] == CLI_GRU), key=lambda k: k[2], default=None), \
        max((k for k in s if k[1] == CLI), key=lambda k: k[2], default=None)
    if cg and cl and cg[2] == cl[2]:
        parts.append("the one-shot CLI (T = 200, GOMAXPROCS=%d) %.2f" % (cg[2], ratio(median(s, cg), median(s, cl))))
    p("GRU / LSTM time (ratio of medians; the same per token-step, both running the same T and steps; "
      "the FLOPs' ratio is 0.75, 3 gates against 4): %s." % "; ".join(parts))
    p("")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    d = sys.argv[1]
    s = {}
    parse(os.path.join(d, "go.txt"), s, "whitebox")
    parse(os.path.join(d, "pair.txt"), s, "whitebox-pair")
    torch_notes = parse(os.path.join(d, "torch.txt"), s)
    cli_notes = parse(os.path.join(d, "cli.txt"), s, "whitebox-cli")
    machine = open(os.path.join(d, "machine.txt")).read().strip() if os.path.exists(os.path.join(d, "machine.txt")) else ""
    checks = [n for n in parse(os.path.join(d, "check.txt"), {}) if n.startswith("check ")]
    w, f64, f32 = "whitebox", "pytorch-float64", "pytorch-float32"
    n_go = len(s.get((w, H256, 1), {}).get("ns/op", []))
    n_pt = len(s.get((f64, H256, 1), {}).get("ns/op", []))

    out = []
    p = out.append
    p("From `%s` (%d Go samples a case, %d PyTorch samples a case and dtype; median (range)):" % (d, n_go, n_pt))
    p("")
    p("```")
    p(machine)
    for n in torch_notes:
        if n.startswith(("BLAS loaded", "torch.mm", "bench_ig.py")):
            p(n)
            break
    for n in torch_notes:
        if n.startswith("torch.mm"):
            p(n)
    p("```")
    p("")
    p("In-process, IG with 50 Gauss–Legendre steps on one input (Go: `BenchmarkImportedIG`, `-cpu 1` and `-cpu 2`, a process each; "
      "PyTorch: `bench/torch/bench_ig.py`, the 50 scaled copies as one batch):")
    p("")
    p("| case | Go, 1 thread | Go, 2 threads | Go 2 vs 1 | PyTorch f64, 1 thread | f64, 2 threads | "
      "PyTorch f32, 1 thread | f32, 2 threads | Go 1 thread vs f64 / f32, 1 thread |")
    p("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in (H256, H256_LONG, GRU, GRU_LONG, BI2):
        if not any((e, name, n) in s for e in (w, f64, f32) for n in (1, 2)):
            continue  # a run from before the GRU
        g1, g2 = median(s, (w, name, 1)), median(s, (w, name, 2))
        p("| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |" % (
            name.replace("ImportedIG/", ""), cell(s, (w, name, 1)), cell(s, (w, name, 2)), fmt_ratio(ratio(g1, g2)),
            cell(s, (f64, name, 1)), cell(s, (f64, name, 2)), cell(s, (f32, name, 1)), cell(s, (f32, name, 2)),
            fmt_ratio(ratio(median(s, (f64, name, 1)), g1)), fmt_ratio(ratio(median(s, (f32, name, 1)), g1))))
    allocs = [max(v.get("allocs/op", [0])) for (e, _, n), v in s.items() if e == w and n <= 2]
    d1, d2 = median(s, (w, DENSE, 1)), median(s, (w, DENSE, 2))
    p("| dense-h256, T=256 (`BenchmarkIG`) | %s | %s | %s | | | | | |" % (
        cell(s, (w, DENSE, 1)), cell(s, (w, DENSE, 2)), fmt_ratio(ratio(d1, d2))))
    p("")
    # The dense case against this machine's own matrix-product rate (never
    # a figure carried from another machine): torch.mm's float64 GFLOP/s
    # at each thread count, measured in the same run.
    mm = {}
    for n in torch_notes:
        m = MM.match(n)
        if m:
            mm.setdefault(int(m.group(1)), []).append(float(m.group(2)))
    peaks = {name.split("=", 1)[1]: statistics.median(v["GFLOP/s"]) for (e, name, n), v in s.items()
             if e == w and name.startswith("FMAPeak/") and n == 1 and v.get("GFLOP/s")}
    if peaks:
        best = max(peaks, key=peaks.get)
        p("This core's float64 FMA peak (`bench/peak`, %s, median): %s GFLOP/s; the dense rates below are shares "
          "of it (one core), of twice it (two threads), and of OpenBLAS's matrix product in the same run." % (
              ", ".join(peaks), ", ".join("%s %.1f" % (k, peaks[k]) for k in peaks)))
        p("")
    for th in (1, 2):
        dense = s.get((w, DENSE, th), {})
        run, mm_th = dense.get("run-GFLOP/s"), mm.get(th)
        if not run:
            continue
        shares = []
        if peaks:
            share = 100 * statistics.median(run) / (th * peaks[best])
            shares.append("**%.0f%%** of %d× the FMA peak (%s)%s" % (share, th, best, "" if share <= 100 else
                          " — above the peak: `bench.IGRunFLOPs` counts products the engine does not run"))
        if mm_th:
            shares.append("%.0f%% of torch.mm 1024×1024 float64 on OpenBLAS, %d thread(s) (median %.1f GFLOP/s of %d)" % (
                100 * statistics.median(run) / statistics.median(mm_th), th, statistics.median(mm_th), len(mm_th)))
        p("dense-h256 IG, %d thread(s): the engine runs %.1f GFLOP/s (the products it computes; %.1f GFLOP/s counting "
          "every step's products, as a framework computes them) = %s." % (
              th, statistics.median(run), statistics.median(dense["GFLOP/s"]), "; ".join(shares)))
    p("")
    gru_vs_lstm(p, s, peaks)
    pair = s.get(("whitebox-pair", DENSE, 1), {}).get("ns/op", [])
    if d1 and len(pair) >= 2:
        # Each round ran two processes at once (consecutive lines): the work
        # a second of both, against one process alone, is solo/a + solo/b.
        rates = [d1 / pair[i] + d1 / pair[i + 1] for i in range(0, len(pair) - 1, 2)]
        p("Two 1-thread dense-h256 processes at once (`pair.txt`, %d rounds), the most two cores do with no "
          "hand-over between them: each %s; together %s the work a second of one alone (the median 1-thread "
          "time), against %s for one 2-thread process." % (
              len(rates), cell(s, ("whitebox-pair", DENSE, 1)),
              "%.2f× (%.2f–%.2f)" % (statistics.median(rates), min(rates), max(rates)), fmt_ratio(ratio(d1, d2))))
        p("")
    threads = sorted({n for (e, _, n) in s if e == w} | {n for (e, _, n) in s if e in (f64, f32)})
    if any(n > 2 for n in threads):
        p("Every thread count (median; × is the speed-up over the same engine's 1 thread):")
        p("")
        p("| case | engine | " + " | ".join("%d" % n for n in threads) + " |")
        p("| --- | --- | " + " | ".join("---" for _ in threads) + " |")
        for name in (H256, H256_LONG, GRU, GRU_LONG, BI2, DENSE):
            for e in (w, f64, f32):
                one = median(s, (e, name, 1))
                cells = []
                for n in threads:
                    m = median(s, (e, name, n))
                    cells.append("—" if m is None else "%s%s" % (
                        dur(m), "" if n == 1 or one is None else " (%s)" % fmt_ratio(ratio(one, m))))
                if any(c != "—" for c in cells):
                    p("| %s | %s | %s |" % (name.replace("ImportedIG/", ""), e, " | ".join(cells)))
        p("")
    p("One-shot CLI, start to exit (`bench/torch/cli.py`: `whitebox attribute -model FILE -method ig -steps 50`, "
      "one input on standard input, the default `-budget`):")
    p("")
    p("| case | wall | peak RSS |")
    p("| --- | --- | --- |")
    cli_keys = sorted(k for k in s if k[0] == "whitebox-cli")
    for k in cli_keys:
        p("| %s, GOMAXPROCS=%d | %s | %s |" % (k[1].replace("CLIIG/", ""), k[2], cell(s, k),
                                               cell(s, k, "peak-RSS-MiB", lambda v: "%.1f MiB" % v)))
    for n in cli_notes:
        if n.startswith("refused"):
            p("| %s | refused | %s |" % (n.split(":", 1)[0].replace("refused CLIIG/", ""), n.split(":", 1)[1].strip()))
    p("")
    cli2 = min((k for k in cli_keys if k[1] == CLI), key=lambda k: -k[2], default=None)
    h1 = median(s, (w, H256, 1))
    rows = [
        ("in-process 1 thread vs PyTorch float64, 1 thread (h256, T=200)", 2.5, ratio(median(s, (f64, H256, 1)), h1)),
        ("in-process 1 thread vs PyTorch float32, 1 thread (h256, T=200)", 1.0, ratio(median(s, (f32, H256, 1)), h1)),
        ("one-shot CLI (all cores) vs PyTorch float32 in-process, 1 thread (h256, T=200)", 1.0,
         ratio(median(s, (f32, H256, 1)), median(s, cli2)) if cli2 else None),
        ("one 1,000-token input (h256), 2 cores vs 1", 1.8,
         ratio(median(s, (w, H256_LONG, 1)), median(s, (w, H256_LONG, 2)))),
        ("dense-h256 IG (T=256), 2 threads vs 1", 1.9, ratio(d1, d2)),
    ]
    p("| target (issue 21) | bar | measured | met |")
    p("| --- | --- | --- | --- |")
    for what, bar, r in rows:
        p("| %s | ≥ %.1f× | %s | %s |" % (what, bar, fmt_ratio(r), met(r, bar)))
    if cli2:
        rss = median(s, cli2, "peak-RSS-MiB")
        p("| one-shot CLI peak RSS (h256, T=200) | ≤ 64 MiB | %.1f MiB | %s |" % (rss, "yes" if rss <= 64 else "**no**"))
    long_cli = [k for k in cli_keys if "bench_bi2_h64" in k[1]]
    if long_cli:
        rss = median(s, long_cli[0], "peak-RSS-MiB")
        p("| IG 50 steps, 50,000 tokens, bi2-h64, default budget: peak RSS | ≤ 300 MiB | %.1f MiB | %s |" % (
            rss, "yes" if rss <= 300 else "**no**"))
    elif any(n.startswith("refused CLIIG/model=bench_bi2_h64") for n in cli_notes):
        p("| IG 50 steps, 50,000 tokens, bi2-h64, default budget: peak RSS | ≤ 300 MiB | refused | **no** |")
    else:
        p("| IG 50 steps, 50,000 tokens, bi2-h64, default budget: peak RSS | ≤ 300 MiB | not run (CLI_LONG_T) | — |")
    p("| allocs/op in steady state (every Go case, 1 and 2 threads) | 0 | at most %d | %s |" % (
        max(allocs) if allocs else -1, "yes" if allocs and max(allocs) == 0 else "**no**"))
    p("")
    skipped = [n for n in torch_notes if n.startswith("skipped")]
    if skipped:
        p("PyTorch samples not taken (the driver's TORCH_DEADLINE):")
        p("")
        for n in skipped:
            p("- " + n)
        p("")
    if checks:
        p("Same computation (`bench_ig.py --whitebox`, before the timing):")
        p("")
        for c in checks:
            p("- " + c)
        p("")
    bs = os.path.join(d, "benchstat-threads.txt")
    if os.path.exists(bs):
        p("Go, 1 vs 2 threads (`benchstat -col /gomaxprocs go.txt`):")
        p("")
        p("```")
        p(open(bs).read().rstrip())
        p("```")
    print("\n".join(out))


if __name__ == "__main__":
    main()

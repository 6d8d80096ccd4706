#!/bin/sh
# Regenerates BENCHMARKS.md's section "Imported models beside PyTorch"
# (issue 21, point 4; the GRU beside the LSTM, issue 38): IG with 50
# Gauss–Legendre steps on the imported benchmark models (bench_h256,
# bench_bi2_h64, bench_gru_h256) in Go (go test -bench, a process per thread count) and
# in PyTorch (bench_ig.py, float64 and float32, a process per thread
# count), dense-h256 IG beside the core's measured FMA peak (bench/peak)
# and OpenBLAS's matrix product, two 1-thread dense-h256 processes at once, the
# one-shot CLI's wall time and peak RSS (cli.py), and the check that
# PyTorch's float64 scores are whitebox's. About 4–5 minutes on a quiet
# 2-core machine (estimated from the single cases), 17 under a load
# average of 15, before the GRU's cases; with them, 26 minutes on a 2-core
# machine shared with other builds (load 1–2.5), 12.6 of them the
# 50,000-token CLI case.
#
# From the repository root:   sh bench/torch/run.sh
#
# Writes bench/results/<UTC date>_<commit>_torch/ (OUT= overrides): the raw
# outputs (go.txt, pair.txt, torch.txt, cli.txt, check.txt, machine.txt),
# benchstat's tables and summary.md, the section's tables, which it also
# prints.
#
# On a machine without Go (a lent device machine): build the binaries here
# with BUILD=1 BIN=DIR (whitebox, the bench test binary, benchstat, the Go
# version and the commit, into DIR, then exit), carry DIR and the checkout
# there and run with BIN=DIR, THREADS="1 2 4 8 16" for every thread count
# (BENCHMARKS.md has the command).
#
# Knobs (environment): THREADS ("1 2"): the thread counts, Go's -cpu and
# PyTorch's; BIN: the prebuilt binaries (none: built here with go);
# ROUNDS (3): rounds, each of GO_PER_ROUND (2) Go samples of every case at
# each thread count and one PyTorch process per thread count with
# TORCH_REPEAT (2) timed calls per case and dtype, so that the engines and
# thread counts take turns under the machine's other load (6 samples a
# case by default: benchstat -count 6); PAIR (1): with each Go sample, two
# 1-thread dense-h256 processes at once, the most two cores do with no
# hand-over between them (0: none); TORCH_DEADLINE (150; 90 before the
# GRU's two cases): seconds after which a PyTorch process begins no more
# samples (an overloaded machine makes its 2-thread calls very slow);
# CLI_REPEAT (5); CLI_LONG_T (50000):
# the BiLSTM's long input for cli.py (0: none); PYTHON (/usr/bin/python3,
# with torch 1.13); TORCH_BLAS: openblas (default: Debian's
# libopenblas0-pthread, fetched once with apt-get download into CACHE and
# put on PyTorch's LD_LIBRARY_PATH only, as Debian's torch links the
# generic libblas.so.3, which here is the netlib reference BLAS at ~5
# GFLOP/s) or system (whatever libblas.so.3 is).
set -eu
cd "$(git rev-parse --show-toplevel 2>/dev/null || { cd "$(dirname "$0")/../.." && pwd; })"

ROUNDS=${ROUNDS:-3}
GO_PER_ROUND=${GO_PER_ROUND:-2}
TORCH_REPEAT=${TORCH_REPEAT:-2}
CLI_REPEAT=${CLI_REPEAT:-5}
PYTHON=${PYTHON:-/usr/bin/python3}
TORCH_BLAS=${TORCH_BLAS:-openblas}
TORCH_DEADLINE=${TORCH_DEADLINE:-150}
CACHE=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/whitebox-bench}
THREADS=${THREADS:-1 2}
CLI_LONG_T=${CLI_LONG_T:-50000}
PAIR=${PAIR:-1}

build() { # DIR: the binaries a run needs, and the Go version that built them
	go build -o "$1/whitebox" ./cmd/whitebox
	go test -c -o "$1/bench.test" ./bench
	go test -c -o "$1/peak.test" ./bench/peak
	go build -o "$1/benchstat" golang.org/x/perf/cmd/benchstat
	go env GOVERSION >"$1/go-version"
}
checkout_commit() { # HEAD, -dirty where tracked files changed; fails without git
	c=$(git rev-parse --short HEAD 2>/dev/null) || return 1
	[ -z "$(git status --porcelain --untracked-files=no)" ] || c="$c-dirty"
	echo "$c"
}

if [ "${BUILD:-}" = 1 ]; then
	[ -n "${BIN:-}" ] || { echo "run.sh: BUILD=1 needs BIN=DIR" >&2; exit 2; }
	mkdir -p "$BIN"
	build "$BIN"
	checkout_commit >"$BIN/commit"
	echo "run.sh: built $(cat "$BIN/commit") into $BIN" >&2
	exit 0
fi

commit=$(checkout_commit) || commit=$(cat "${BIN:-.}/commit" 2>/dev/null || echo unknown)
OUT=${OUT:-bench/results/$(date -u +%F)_${commit}_torch}
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
say() { echo "run.sh [$(($(date +%s) - start)) s] $*" >&2; }

if [ -n "${BIN:-}" ]; then
	bin=$(cd "$BIN" && pwd)
else
	say "building whitebox, the bench test binary and benchstat"
	bin=$tmp
	build "$bin"
fi
goversion=$(cat "$bin/go-version" 2>/dev/null || echo "prebuilt in $BIN")

blas_path=
if [ "$TORCH_BLAS" = openblas ]; then
	dir=$CACHE/openblas/root/usr/lib/x86_64-linux-gnu/openblas-pthread
	if [ ! -e "$dir/libblas.so.3" ]; then
		say "fetching libopenblas0-pthread into $CACHE/openblas"
		mkdir -p "$CACHE/openblas"
		if (cd "$CACHE/openblas" && rm -f ./*.deb &&
			{ apt-get download libopenblas0-pthread >/dev/null 2>&1 ||
				{ apt-get update -qq >/dev/null 2>&1 && apt-get download libopenblas0-pthread >/dev/null 2>&1; }; } &&
			dpkg -x ./libopenblas0-pthread_*.deb root); then :; else
			say "could not fetch OpenBLAS: PyTorch runs on the system BLAS (see torch.txt's '# BLAS loaded')"
		fi
	fi
	[ -e "$dir/libblas.so.3" ] && blas_path=$dir
fi
torch() { LD_LIBRARY_PATH=$blas_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$PYTHON" bench/torch/bench_ig.py "$@"; }

{
	echo "date: $(date -u +%FT%TZ)"
	echo "commit: $commit"
	echo "go: $goversion"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
	echo "cores: $(nproc)"
	echo "torch-blas: ${blas_path:-system libblas.so.3}"
	echo "command: THREADS='$THREADS' CLI_LONG_T=$CLI_LONG_T PAIR=$PAIR ROUNDS=$ROUNDS GO_PER_ROUND=$GO_PER_ROUND TORCH_REPEAT=$TORCH_REPEAT TORCH_DEADLINE=$TORCH_DEADLINE CLI_REPEAT=$CLI_REPEAT TORCH_BLAS=$TORCH_BLAS sh bench/torch/run.sh"
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/machine.txt"

say "check: PyTorch float64 == whitebox attribute (1e-8)"
torch --threads 1 --whitebox "$bin/whitebox" --check-only >"$OUT/check.txt"
grep '^# check' "$OUT/check.txt" >&2

# One process per thread count: with -test.cpu 1,2 the first benchmark of
# a process runs with the GOMAXPROCS of before (golang/go#49980; seen here
# with Go 1.26.8: the 1-thread row of the first case ran on 2 cores).
dense='^BenchmarkIG$/^net=dense-h256$/^T=256$/^steps=50$'
gobench() { # one sample of every Go case at each thread count, and of the core's FMA peak
	"$bin/peak.test" -test.run '^$' -test.cpu 1 -test.count 1 -test.bench '^BenchmarkFMAPeak$' | grep -e '^Benchmark'
	for cpu in $THREADS; do
		(cd bench && "$bin/bench.test" -test.run '^$' -test.benchmem -test.cpu "$cpu" -test.count 1 \
			-test.bench '^BenchmarkImportedIG$') | grep -v -e '^PASS' -e '^ok'
		(cd bench && "$bin/bench.test" -test.run '^$' -test.benchmem -test.cpu "$cpu" -test.count 1 \
			-test.bench "$dense") | grep -e '^Benchmark'
	done
}
pair() { # two 1-thread processes of dense-h256 at once (not $i: sh has no local variables)
	for p in 1 2; do
		(cd bench && "$bin/bench.test" -test.run '^$' -test.cpu 1 -test.count 1 -test.bench "$dense" >"$tmp/pair$p.txt") &
	done
	wait
	grep -h '^Benchmark' "$tmp/pair1.txt" "$tmp/pair2.txt"
}
echo "engine: whitebox" >"$OUT/go.txt"
echo "engine: whitebox-pair" >"$OUT/pair.txt"
: >"$OUT/torch.txt"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	i=1
	while [ "$i" -le "$GO_PER_ROUND" ]; do
		say "round $r/$ROUNDS: Go sample $i"
		gobench >>"$OUT/go.txt"
		[ "$PAIR" = 0 ] || pair >>"$OUT/pair.txt"
		i=$((i + 1))
	done
	for th in $THREADS; do
		say "round $r/$ROUNDS: PyTorch, $th thread(s)"
		torch --threads "$th" --repeat "$TORCH_REPEAT" --warmup 1 --deadline "$TORCH_DEADLINE" >>"$OUT/torch.txt"
	done
	echo "load after round $r: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"
	r=$((r + 1))
done

say "one-shot CLI: wall time and peak RSS"
"$PYTHON" bench/torch/cli.py --whitebox "$bin/whitebox" --repeat "$CLI_REPEAT" --long-T "$CLI_LONG_T" >"$OUT/cli.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"

"$bin/benchstat" -col /gomaxprocs "$OUT/go.txt" >"$OUT/benchstat-threads.txt"
"$bin/benchstat" -table '' -col engine -filter '.unit:sec/op' "$OUT/go.txt" "$OUT/torch.txt" >"$OUT/benchstat-engines.txt"
"$PYTHON" bench/torch/summary.py "$OUT" >"$OUT/summary.md"
cat "$OUT/summary.md"
say "done: $OUT"

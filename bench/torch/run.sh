#!/bin/sh
# Regenerates BENCHMARKS.md's section "Imported models beside PyTorch"
# (issue 21, point 4): IG with 50 Gauss–Legendre steps on the imported
# benchmark models in Go (go test -bench, -cpu 1 and 2, a process each) and in PyTorch
# (bench_ig.py, float64 and float32, 1 and 2 threads), the one-shot CLI's
# wall time and peak RSS (cli.py), dense-h256 IG on 1 and 2 threads, and
# the check that PyTorch's float64 scores are whitebox's. About 4–5
# minutes on a quiet 2-core machine (estimated from the single cases), 17
# under a load average of 15.
#
# From the repository root:   sh bench/torch/run.sh
#
# Writes bench/results/<UTC date>_<commit>_torch/ (OUT= overrides): the raw
# outputs (go.txt, torch.txt, cli.txt, check.txt, machine.txt), benchstat's
# tables and summary.md, the section's tables, which it also prints.
#
# Knobs (environment): ROUNDS (3): rounds, each of GO_PER_ROUND (2) Go
# samples of every case at -cpu 1 and 2 and one PyTorch process per thread
# count with TORCH_REPEAT (2) timed calls per case and dtype, so that the
# engines and thread counts take turns under the machine's other load
# (6 samples a case by default: benchstat -count 6); TORCH_DEADLINE (90):
# seconds after which a PyTorch process begins no more samples (an
# overloaded machine makes its 2-thread calls very slow); CLI_REPEAT (5);
# PYTHON (/usr/bin/python3, with torch 1.13); TORCH_BLAS: openblas
# (default: Debian's libopenblas0-pthread, fetched once with apt-get
# download into CACHE and put on PyTorch's LD_LIBRARY_PATH only, as
# Debian's torch links the generic libblas.so.3, which here is the netlib
# reference BLAS at ~5 GFLOP/s) or system (whatever libblas.so.3 is).
set -eu
cd "$(git rev-parse --show-toplevel)"

ROUNDS=${ROUNDS:-3}
GO_PER_ROUND=${GO_PER_ROUND:-2}
TORCH_REPEAT=${TORCH_REPEAT:-2}
CLI_REPEAT=${CLI_REPEAT:-5}
PYTHON=${PYTHON:-/usr/bin/python3}
TORCH_BLAS=${TORCH_BLAS:-openblas}
TORCH_DEADLINE=${TORCH_DEADLINE:-90}
CACHE=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/whitebox-bench}

commit=$(git rev-parse --short HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] || commit="$commit-dirty"
OUT=${OUT:-bench/results/$(date -u +%F)_${commit}_torch}
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
say() { echo "run.sh [$(($(date +%s) - start)) s] $*" >&2; }

say "building whitebox, the bench test binary and benchstat"
go build -o "$tmp/whitebox" ./cmd/whitebox
go test -c -o "$tmp/bench.test" ./bench
go build -o "$tmp/benchstat" golang.org/x/perf/cmd/benchstat

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
	echo "go: $(go env GOVERSION)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
	echo "cores: $(nproc)"
	echo "torch-blas: ${blas_path:-system libblas.so.3}"
	echo "command: ROUNDS=$ROUNDS GO_PER_ROUND=$GO_PER_ROUND TORCH_REPEAT=$TORCH_REPEAT TORCH_DEADLINE=$TORCH_DEADLINE CLI_REPEAT=$CLI_REPEAT TORCH_BLAS=$TORCH_BLAS sh bench/torch/run.sh"
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/machine.txt"

say "check: PyTorch float64 == whitebox attribute (1e-8)"
torch --threads 1 --whitebox "$tmp/whitebox" --check-only >"$OUT/check.txt"
grep '^# check' "$OUT/check.txt" >&2

# One process per thread count: with -test.cpu 1,2 the first benchmark of
# a process runs with the GOMAXPROCS of before (golang/go#49980; seen here
# with Go 1.26.8: the 1-thread row of the first case ran on 2 cores).
gobench() { # one sample of every Go case at 1 and 2 threads
	for cpu in 1 2; do
		(cd bench && "$tmp/bench.test" -test.run '^$' -test.benchmem -test.cpu "$cpu" -test.count 1 \
			-test.bench '^BenchmarkImportedIG$') | grep -v -e '^PASS' -e '^ok'
		(cd bench && "$tmp/bench.test" -test.run '^$' -test.benchmem -test.cpu "$cpu" -test.count 1 \
			-test.bench '^BenchmarkIG$/^net=dense-h256$/^T=256$/^steps=50$') | grep -e '^Benchmark'
	done
}
echo "engine: whitebox" >"$OUT/go.txt"
: >"$OUT/torch.txt"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	i=1
	while [ "$i" -le "$GO_PER_ROUND" ]; do
		say "round $r/$ROUNDS: Go sample $i"
		gobench >>"$OUT/go.txt"
		i=$((i + 1))
	done
	for th in 1 2; do
		say "round $r/$ROUNDS: PyTorch, $th thread(s)"
		torch --threads "$th" --repeat "$TORCH_REPEAT" --warmup 1 --deadline "$TORCH_DEADLINE" >>"$OUT/torch.txt"
	done
	echo "load after round $r: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"
	r=$((r + 1))
done

say "one-shot CLI: wall time and peak RSS"
"$PYTHON" bench/torch/cli.py --whitebox "$tmp/whitebox" --repeat "$CLI_REPEAT" >"$OUT/cli.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"

"$tmp/benchstat" -col /gomaxprocs "$OUT/go.txt" >"$OUT/benchstat-threads.txt"
"$tmp/benchstat" -table '' -col engine -filter '.unit:sec/op' "$OUT/go.txt" "$OUT/torch.txt" >"$OUT/benchstat-engines.txt"
"$PYTHON" bench/torch/summary.py "$OUT" >"$OUT/summary.md"
cat "$OUT/summary.md"
say "done: $OUT"

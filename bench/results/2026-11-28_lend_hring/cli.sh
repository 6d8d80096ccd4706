#!/bin/bash
# The one-shot CLI, old and new binaries alternating: wall time and peak RSS.
# usage: cli.sh OLD NEW ROUNDS  (run from the repository root; ids from bench/torch/tokens.py)
old=$1 new=$2 rounds=${3:-5}
M=model/testdata/bench_h256.safetensors
for i in $(seq "$rounds"); do
  for b in "$old" "$new"; do
    n=$(basename "$b")
    /usr/bin/time -f "$n stdin-200 %e s %M KB" "$b" attribute -model $M -method ig -steps 50 -head hn < /tmp/ids200 > /dev/null
    GOMAXPROCS=1 /usr/bin/time -f "$n stdin-200-GOMAXPROCS=1 %e s %M KB" "$b" attribute -model $M -method ig -steps 50 -head hn < /tmp/ids200 > /dev/null
    /usr/bin/time -f "$n arg-200 %e s %M KB" "$b" attribute -model $M -method ig -steps 50 -head hn "$(cat /tmp/ids200)" > /dev/null
    /usr/bin/time -f "$n stdin-1000 %e s %M KB" "$b" attribute -model $M -method ig -steps 50 -head hn < /tmp/ids1000 > /dev/null
    /usr/bin/time -f "$n stdin-8x200 %e s %M KB" "$b" attribute -model $M -method ig -steps 50 -head hn < /tmp/ids200x8 > /dev/null
  done
done

#!/bin/bash
# usage: pair.sh rounds input ; prints 1-core, 2-core, ratio per round (alternating order)
rounds=$1; in=$2; bin=${3:-/tmp/wb}
t() { /usr/bin/time -f "%e" bash -c "$1 attribute -model /tmp/long2/m.pt -head auto -verify /tmp/long2/verify.jsonl -method ig < $in > /dev/null 2>/dev/null" 2>&1 | tail -1; }
for i in $(seq $rounds); do
  if [ $((i%2)) = 1 ]; then a=$(t "taskset -c 0 $bin"); b=$(t "$bin"); else b=$(t "$bin"); a=$(t "taskset -c 0 $bin"); fi
  echo "$a $b $(echo "scale=2; $a/$b" | bc)"
done

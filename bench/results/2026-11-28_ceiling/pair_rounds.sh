#!/bin/bash
# Ceiling of this VM's two vCPUs against a team of two, dense-h256 IG.
cd /work/main/bench
B='BenchmarkIG/net=dense-h256/T=256/steps=50$'
one() { /tmp/bench.test -test.run '^$' -test.bench "$B" -test.cpu "$1" -test.benchtime 20x -test.count 1 | grep ^Benchmark; }
for r in $(seq 1 ${ROUNDS:-6}); do
  one 1 | sed 's/^/solo1 /' >> /tmp/ceil/out.txt
  one 2 | sed 's/^/team2 /' >> /tmp/ceil/out.txt
  ( one 1 | sed 's/^/pairA /' > /tmp/ceil/a.txt ) & ( one 1 | sed 's/^/pairB /' > /tmp/ceil/b.txt ) & wait
  cat /tmp/ceil/a.txt /tmp/ceil/b.txt >> /tmp/ceil/out.txt
  echo "round $r $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/ceil/out.txt
done

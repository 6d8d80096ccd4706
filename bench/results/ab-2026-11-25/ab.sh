#!/bin/bash
# A/B: the bench package at 3e268c9 (before this stop) and at HEAD, interleaved, -count 6.
# /tmp/bench_old.test and /tmp/bench_new.test are `go test -c ./bench` at each commit.
cd "$(dirname "$0")/../.."  # bench/, where the benchmarks read their testdata
for i in 1 2 3 4 5 6; do
  for v in old new; do
    for pat in 'ImportedIG' 'IG/net=(sp-fsa|dense-h64)/T=256/steps=50$' 'Saliency/net=(sp-fsa|dense-h64)/T=256$' 'LRP/net=sp-fsa/T=256$' 'Occlusion/net=dense-h64/T=256$'; do
      /tmp/bench_$v.test -test.run '^$' -test.bench "$pat" -test.benchtime 1s -test.benchmem -test.count 1 | grep '^Benchmark' >> /tmp/ab_$v.txt  # stored here as 3e268c9.txt (old) and f556b0b.txt (new)
    done
  done
done

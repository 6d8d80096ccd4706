#!/bin/bash
# Six alternating rounds: dense-h256 IG on the build before (57ab6fb) and
# after; BenchmarkMulAddRows with and without the scan for ±0 (after); the
# FMA peak before and after. Test binaries: go test -c -o ... ./bench,
# ./kernel, ./bench/peak.
old=/tmp/z4/bold.test; new=/tmp/z4/bnew2.test; k=/tmp/z4/knew3.test; peak=/tmp/z4/peak.test
out=${1:-.}
$peak -test.run XXX -test.bench . -test.count 2 > $out/peak_before_rounds.txt
rm -f $out/dense_h256_57ab6fb.txt $out/dense_h256_head.txt $out/muladdrows_nonzero.txt
for r in 1 2 3 4 5 6; do
  $old -test.run XXX -test.bench 'BenchmarkIG/net=dense-h256/T=256/steps=50$' -test.cpu 1 -test.count 1 >> $out/dense_h256_57ab6fb.txt
  $new -test.run XXX -test.bench 'BenchmarkIG/net=dense-h256/T=256/steps=50$' -test.cpu 1 -test.count 1 >> $out/dense_h256_head.txt
  $k -test.run XXX -test.bench 'MulAddRows/impl=(avx512|avx2)/kernel=(muladdrows|nonzero)/h=(128|256)/lanes=(8|16|18|50)$' -test.benchtime 200ms >> $out/muladdrows_nonzero.txt
done
$peak -test.run XXX -test.bench . -test.count 2 > $out/peak_after_rounds.txt

#!/bin/bash
# Rounds of every configuration, in turn; prints "T=… BUILD cores=… budget=… seconds peakRSS(KiB)".
# BIN_DIR holds wb_old and wb_new, LONG_DIR the inputs of bench/torch/gen_long.py, REPO this repository.
cd "${OUT_DIR:-.}"
go_peak() { (cd "$REPO" && go test ./bench/peak -run XXX -bench FMAPeak -benchtime=1s -count 1 2>&1 | grep GFLOP); }
one() { # build cores budget(- for the default) tokens
  local bin=$1 cores=$2 bud=$3 T=$4 ts="" bf=""
  [ "$cores" = 1 ] && ts="taskset -c 0"
  [ "$bud" != - ] && bf="-budget $bud"
  /usr/bin/time -o tm.txt -f "%e %M" $ts "$BIN_DIR/wb_$bin" attribute $bf -model "$LONG_DIR/m.pt" -head auto \
    -verify "$LONG_DIR/verify.jsonl" -method ig < "$LONG_DIR/in$T.txt" > "out_${bin}_$T.txt" 2>/dev/null
  echo "T=$T $bin cores=$cores budget=$bud $(cat tm.txt)"
}
go_peak
for round in 1 2 3; do
  for T in 250 1000 2000; do
    for cfg in "new 1 -" "new 1 16GiB" "new 2 -" "new 2 16GiB" "old 1 -" "old 2 -"; do
      set -- $cfg
      if [ $T = 250 ] && [ $1 = old ]; then continue; fi
      if [ $round = 3 ] && [ $T = 2000 ]; then continue; fi
      one $1 $2 $3 $T
    done
  done
done
for cfg in "new 1 -" "new 2 -" "new 1 16GiB"; do
  one $cfg 4000
done
go_peak
md5sum out_*
echo END

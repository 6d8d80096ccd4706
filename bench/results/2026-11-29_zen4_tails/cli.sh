#!/bin/bash
# The CLI on the long-input model (bench/torch/gen_long.py /tmp/long2), IG
# 50 steps: the build before (57ab6fb, /tmp/z4/wb_old) and after
# (/tmp/z4/wb_head), alternating, 1 core (taskset -c 0) and 2, the default
# budget and -budget 4GiB; wall, user and system seconds, and the output's
# md5 (the same bytes in every row of one input).
d=/tmp/long2
run() { # binary cores budget tokens
  local pre=""; [ "$2" = 1 ] && pre="taskset -c 0"
  local bud=""; [ -n "$3" ] && bud="-budget $3"
  t=$( { $pre /usr/bin/time -f "%e s wall, %U user, %S sys" $1 attribute -model $d/m.pt -head auto -verify $d/verify.jsonl -method ig $bud < $d/in$4.txt > /tmp/z4/cli_out.txt; } 2>&1 | grep wall)
  echo "$4 tokens, $2 core(s), budget ${3:-default}, $(basename $1): $t, md5 $(md5sum < /tmp/z4/cli_out.txt | cut -c1-8)"
}
for round in 1 2; do
  for n in 1000 2000; do for c in 1 2; do for b in "" 4GiB; do
    run /tmp/z4/wb_old $c "$b" $n; run /tmp/z4/wb_head $c "$b" $n
  done; done; done
done
for n in 250 4000; do for c in 1 2; do run /tmp/z4/wb_old $c "" $n; run /tmp/z4/wb_head $c "" $n; done; done

#!/bin/bash
# the CLI on the long-input model: plans, wall and peak RSS, 1 core and 2, default budget and 16 GiB
bin=/tmp/z4/whitebox; d=/tmp/long2
run() { # label taskset budget input
  local pre=""; [ "$2" = 1 ] && pre="taskset -c 0"
  local bud=""; [ -n "$3" ] && bud="-budget $3"
  plan=$($pre /usr/bin/time -f "TIME %e s, %M KiB" $bin attribute -model $d/m.pt -head auto -verify $d/verify.jsonl -method ig -v $bud < $d/in$4.txt 2>&1 >/tmp/z4/out_$4_$2_${3:-def}.txt | grep -E "plan:|TIME" | sed 's/.*plan: //')
  echo "$4 tokens, $2 core(s), budget ${3:-default}: $plan" | tr '\n' ' '; echo
}
for n in 250 1000 2000 4000; do run x 1 "" $n; run x 2 "" $n; done
for n in 250 1000 2000; do run x 1 16GiB $n; run x 2 16GiB $n; done

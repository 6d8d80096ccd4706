#!/bin/bash
# The CLI on the long-input model (/usr/bin/python3 bench/torch/gen_long.py
# /tmp/long2), 2,000 tokens, -budget 4GiB (the engine's share, 2 GiB,
# holds the whole trace of 18 lanes, not 32), one core, the two builds
# alternating: /tmp/wt/wb_old (166ed80), /tmp/wt/wb_new (this change).
for i in 1 2 3 4; do
  for v in old new; do
    /usr/bin/time -f "$v %e s wall %U s user %S s sys %M KB max RSS" taskset -c 0 /tmp/wt/wb_$v attribute \
      -model /tmp/long2/m.pt -head auto -verify /tmp/long2/verify.jsonl -method ig -budget 4GiB \
      < /tmp/long2/in2000.txt 2>&1 >/tmp/wt/out_$v.txt | grep wall
    echo "$v output md5 $(md5sum < /tmp/wt/out_$v.txt)"
  done
done

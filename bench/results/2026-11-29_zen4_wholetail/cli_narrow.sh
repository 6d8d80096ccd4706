#!/bin/bash
# The CLI on the long-input model (/usr/bin/python3 bench/torch/gen_long.py
# /tmp/long2), one core, the two builds alternating: /tmp/wt/wb_old (the
# tail commit), /tmp/wt/wb_new (narrow whole-trace plans). 250 tokens at
# the default budget (a 128 MiB share: 8 lanes of the whole trace fit, 16
# do not) and 1,000 tokens with -budget 600MiB (a 300 MiB share).
run() { # build tokens budget-flag...
  v=$1; t=$2; shift 2
  /usr/bin/time -f "$v T=$t $* %e s wall %U s user %S s sys %M KB max RSS" taskset -c 0 /tmp/wt/wb_$v attribute \
    -model /tmp/long2/m.pt -head auto -verify /tmp/long2/verify.jsonl -method ig -v "$@" \
    < /tmp/long2/in$t.txt 2>/tmp/wt/err_$v.txt >/tmp/wt/out_$v.txt
  grep -h "plan:" /tmp/wt/err_$v.txt | sed 's/.*plan: /  plan: /'
  grep -h "wall" /tmp/wt/err_$v.txt
  echo "  output md5 $(md5sum < /tmp/wt/out_$v.txt)"
}
for i in 1 2 3 4; do
  for v in old new; do run $v 250; done
done
for i in 1 2 3; do
  for v in old new; do run $v 1000 -budget 600MiB; done
done

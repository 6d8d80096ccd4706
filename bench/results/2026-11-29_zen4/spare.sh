#!/bin/bash
# default budget against memory to spare (-budget 4GiB, the column, and 16GiB), 1 core and 2, rounds
bin=/tmp/z4/whitebox; d=/tmp/long2
one() { local pre=""; [ "$2" = 1 ] && pre="taskset -c 0"; local bud=""; [ "$3" != def ] && bud="-budget $3"
  $pre /usr/bin/time -f "%e %U %S" $bin attribute -model $d/m.pt -head auto -verify $d/verify.jsonl -method ig $bud < $d/in$1.txt 2>&1 >/dev/null | tail -1; }
for r in 1 2 3; do for n in 1000 2000; do for c in 1 2; do for b in def 4GiB 16GiB; do echo "round $r $n tokens, $c core(s), budget $b: $(one $n $c $b)"; done; done; done; done

set -u
P=build/probe
for r in 1 2; do for v in base smem storehoist; do echo "== $v bias run $r"; $P/k34_$v --bias 1 --reps 15 2>&1 | tail -1; done; done

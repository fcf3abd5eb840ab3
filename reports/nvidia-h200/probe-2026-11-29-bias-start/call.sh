set -u
nvidia-smi -L
P=build/probe
for r in 1 2; do for v in base head new; do echo "== $v bias run $r"; $P/k34_$v --bias 1 --reps 15 2>&1 | tail -3; done; done
echo "== new, no bias"; $P/k34_new --reps 15 2>&1 | tail -3
echo "== head, no bias"; $P/k34_head --reps 15 2>&1 | tail -3
$P/k34_head --bias 1 --reps 3 --sample /tmp/s_head > /dev/null 2>&1
echo "== new vs head outputs"; $P/k34_new --bias 1 --reps 3 --compare /tmp/s_head 2>&1 | tail -4
echo "== tc_rates"; $P/tc_rates 2>&1 | grep -E "RATE|FLOOR|tc_rates"
if command -v cuobjdump >/dev/null; then for v in base head new; do cuobjdump -sass -fun persistent_kernel $P/k34_$v > $OUT/k34_$v.persistent.sass 2>&1 || cuobjdump -sass $P/k34_$v > $OUT/k34_$v.sass 2>&1; done; ls -la $OUT; fi
FUSEBENCH_PROBE_JOBS=16 scripts/build-probe > $OUT/build-probe.log 2>&1 && $P/fused_cuda_selftest --model convt3d_ln_gelu_scale --cases 300 2>&1 | tail -6

set -u
nvidia-smi -L
P=build/probe
for r in 1 2; do for v in base new smem; do echo "== $v bias run $r"; $P/k34_$v --bias 1 --reps 15 2>&1 | tail -1; done; done
echo "== smem, no bias"; $P/k34_smem --reps 15 2>&1 | tail -1
FUSEBENCH_PROBE_JOBS=16 scripts/build-probe > $OUT/build-probe.log 2>&1 && $P/fused_cuda_selftest --model convt3d_ln_gelu_scale --cases 300 2>&1 | tail -2

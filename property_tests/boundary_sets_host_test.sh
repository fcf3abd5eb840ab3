#!/usr/bin/env bash
# A fused model's boundary set (property_tests/selftest/<id>_boundary.h) through its host executor
# against the libtorch reference on the CPU: one `fusebench verify --device cpu --config` case per
# boundary problem (the reference's semantics are checked against the fp64 oracle on the same run).
# The GPU gate runs the same problems on the kernels under the sanitizers and the stress stage.
# Usage: boundary_sets_host_test.sh BOUNDARY_SETS FUSEBENCH MODEL
set -u
sets="$1" fb="$2" model="$3"
mapfile -t lines < <("$sets" --configs --model "$model")
((${#lines[@]} > 0)) || { echo "FAIL: no boundary problems for $model"; exit 1; }
fail=0 n=0
for line in "${lines[@]}"; do
  IFS=$'\t' read -r _ name config <<<"$line"
  n=$((n + 1))
  out="$("$fb" verify --device cpu --model "$model" --config "$config" --case-seed 1 2>&1)"
  rc=$?
  verdict="$(grep -E '^verify: ' <<<"$out" | tail -n 1)"
  if ((rc == 0)) && grep -qE '^verify: [0-9]+ verdicts on [0-9]+ cases: [0-9]+ passed, 0 failed' <<<"$verdict" &&
    ! grep -qE ', [1-9][0-9]* not judged' <<<"$verdict"; then
    echo "ok   $model $name"
  else
    echo "FAIL $model $name (exit $rc): $config"
    tail -n 15 <<<"$out"
    fail=1
  fi
done
echo "$model: $n boundary problems through the host executor vs the reference"
exit "$fail"

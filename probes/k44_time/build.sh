#!/usr/bin/env bash
# Builds probes/k44_time/k44_time.cu against a tree's #44 kernel (default: this repo) into OUT
# (default build/probe/k44_time): torch-free, the CUDA runtime linked statically.
#   probes/k44_time/build.sh [TREE] [OUT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tree="${1:-$root}"
out="${2:-$root/build/probe/k44_time}"
mkdir -p "$(dirname "$out")"
sources=("$tree/fused/convt2d_mul_gap/convt2d_mul_gap.cu" "$tree/fused/convt2d_mul_gap/convt2d_mul_gap_host.cpp"
  "$tree/fused/runtime/device_info.cu")
nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo ${K44_FLAGS:-} -Xptxas -v -I"$tree" -I"$root" "$root/probes/k44_time/k44_time.cu" \
  "${sources[@]}" -o "$out" 2>&1 |
  grep -E "error|warning|spill|registers" || true
test -x "$out"
echo "built $out"

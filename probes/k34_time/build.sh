#!/usr/bin/env bash
# Builds probes/k34_time/k34_time.cu against a tree's #34 kernel (default: this repo) into OUT
# (default build/probe/k34_time): torch-free, the CUDA runtime linked statically.
#   probes/k34_time/build.sh [TREE] [OUT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tree="${1:-$root}"
out="${2:-$root/build/probe/k34_time}"
mkdir -p "$(dirname "$out")"
nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -Xptxas -v -I"$tree" -I"$root" "$root/probes/k34_time/k34_time.cu" \
  "$tree/fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale.cu" "$tree/fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale_host.cpp" "$tree/fused/runtime/device_info.cu" -o "$out" 2>&1 |
  grep -E "error|warning|spill|registers" || true
test -x "$out"
echo "built $out"

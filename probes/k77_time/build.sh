#!/usr/bin/env bash
# Builds probes/k77_time/k77_time.cu against a tree's #77 kernels (default: this repo) into OUT
# (default build/probe/k77_time): torch-free, the CUDA runtime linked statically.
#   probes/k77_time/build.sh [TREE] [OUT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tree="${1:-$root}"
out="${2:-$root/build/probe/k77_time}"
mkdir -p "$(dirname "$out")"
nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -Xptxas -v -I"$tree" -I"$root" "$root/probes/k77_time/k77_time.cu" \
  "$tree"/fused/convt3d_scale_bn_gap/*.cu "$tree"/fused/convt3d_scale_bn_gap/*.cpp "$tree/fused/runtime/device_info.cu" \
  -o "$out" 2>&1 | grep -E "error|warning|spill [1-9]|Compiling entry.*(gemm|x_kernel)|registers" || true
test -x "$out"
echo "built $out"

#!/usr/bin/env bash
# Builds probes/k15_time/k15_time.cu against a tree's #15 kernels (default: this repo) into OUT
# (default build/probe/k15_time): torch-free, the CUDA runtime linked statically.
#   probes/k15_time/build.sh [TREE] [OUT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tree="${1:-$root}"
out="${2:-$root/build/probe/k15_time}"
mkdir -p "$(dirname "$out")"
nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -I"$tree" -I"$root" "$root/probes/k15_time/k15_time.cu" \
  "$tree"/fused/convt3d_bn_sub/*.cu "$tree"/fused/convt3d_bn_sub/*.cpp "$tree/fused/runtime/device_info.cu" -o "$out"
test -x "$out"
echo "built $out"

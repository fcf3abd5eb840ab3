#!/usr/bin/env bash
# Builds probes/store_sectors/store_sectors_bench.cu into build/probe/store_sectors_bench (torch-free,
# CUDA runtime static): carry build/probe to the GPU host and run it there (optionally under ncu).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$root/build/probe"
nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -I"$root" "$root/probes/store_sectors/store_sectors_bench.cu" \
  -o "$root/build/probe/store_sectors_bench"
echo "built $root/build/probe/store_sectors_bench"

#!/usr/bin/env bash
# Builds the wgmma probe (probes/tc_precision/wgmma_bench.cu) into build/probe/wgmma_bench for sm_90a
# (wgmma needs the arch-specific target; -gencode, since nvcc 13's -arch=sm_90a also embeds compute_90
# PTX, which cannot hold wgmma), torch-free, the CUDA runtime linked statically: carry
# build/probe to the GPU host and run build/probe/wgmma_bench [--quick] there. Prints compiler
# errors, warnings, spills and ptxas's wgmma serialization notes (C7515-style "Performance Loss").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$root/build/probe"
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -lineinfo -Xptxas -v -I"$root" "$root/probes/tc_precision/wgmma_bench.cu" \
  -o "$root/build/probe/wgmma_bench" 2>&1 | grep -Ei "error|warning|spill|performance loss|serializ" || true
test -x "$root/build/probe/wgmma_bench"
echo "built $root/build/probe/wgmma_bench"

#!/usr/bin/env bash
# Builds the split-precision probe (probes/tc_precision/tc_precision_bench.cu) into
# build/probe/tc_precision_bench, torch-free, the CUDA runtime linked statically: carry build/probe to
# the GPU host and run build/probe/tc_precision_bench [--quick] there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$root/build/probe"
nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -Xptxas -v "$root/probes/tc_precision/tc_precision_bench.cu" \
  -o "$root/build/probe/tc_precision_bench" 2>&1 | grep -E "error|warning|spill" || true
test -x "$root/build/probe/tc_precision_bench"
echo "built $root/build/probe/tc_precision_bench"

#!/usr/bin/env bash
# Builds issue 36's scheme probes into build/probe/:
#   tc_rates        (GPU, sm_90a) the tensor-core rates of int8 (mma.sync and wgmma), bf16 and fp64 MMAs,
#                   the s8 fragment layouts checked exact, and #34's floor on each path
#   split_accuracy  (CPU) #34's layer through each candidate scheme (fp32, fp64, Ozaki int8 at 3-5
#                   slices, bf16x6, Winograd F(2,2)^3 in fp64) on the default and the split-scheme attacks
#   probes/split_scheme/build.sh [--cpu-only]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$root/build/probe"
g++ -O2 -std=c++17 "$root/probes/split_scheme/split_accuracy.cpp" -o "$root/build/probe/split_accuracy"
echo "built build/probe/split_accuracy"
[[ "${1:-}" == --cpu-only ]] && exit 0
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Xptxas -v -I"$root" "$root/probes/split_scheme/tc_rates.cu" \
  -o "$root/build/probe/tc_rates" 2>&1 | grep -E "error|warning|spill" | grep -v " 0 bytes spill" || true
test -x "$root/build/probe/tc_rates"
echo "built build/probe/tc_rates"

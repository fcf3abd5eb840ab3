#!/usr/bin/env bash
# Builds the fp64 MMA rate probes (torch-free) into build/probe/:
#   dmma_rate     how many warps per scheduler the fp64 tensor pipe needs (register operands)
#   dmma_feed     the same with #34's k16 loop's operand paths, one at a time
#   dmma_overlap  whether a warp's DMMA stream holds back other warps' ordinary work on its scheduler
#   dmma_roles    #34's loop on one MMA warp per scheduler beside worker warps (setmaxnreg: sm_90a)
#   probes/dmma_rate/build.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$root/build/probe"
for p in dmma_rate dmma_feed dmma_overlap dmma_roles; do
  arch=(-arch=sm_90)
  [[ $p == dmma_roles ]] && arch=(-gencode arch=compute_90a,code=sm_90a)
  nvcc -O3 -std=c++17 "${arch[@]}" -Xptxas -v -I"$root" "$root/probes/dmma_rate/$p.cu" -o "$root/build/probe/$p" 2>&1 |
    grep -E "error|warning|spill" | grep -v " 0 bytes spill" || true
  echo "built build/probe/$p"
done

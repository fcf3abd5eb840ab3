#!/usr/bin/env bash
# Builds the sm_90 probes of issue 11 (probes/tc_precision/tc_precision_bench.cu: split precision and
# DMMA rates and accuracy; dmma_conv_bench.cu: #34's convolution on DMMA) into build/probe/,
# torch-free, the CUDA runtime linked statically: carry build/probe to the GPU host and run
# build/probe/tc_precision_bench [--quick] and build/probe/dmma_conv_bench [B C_in D H] there
# (dmma_conv_bench --host-check runs anywhere). Prints errors, warnings, registers and spills.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$root/build/probe"
for probe in tc_precision_bench dmma_conv_bench; do
  nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -Xptxas -v -I"$root" "$root/probes/tc_precision/$probe.cu" \
    -o "$root/build/probe/$probe" 2>&1 | grep -E "error|warning|spill|registers" || true
  test -x "$root/build/probe/$probe"
  echo "built $root/build/probe/$probe"
done

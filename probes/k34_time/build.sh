#!/usr/bin/env bash
# Builds probes/k34_time/k34_time.cu against a tree's #34 kernel (default: this repo) into OUT
# (default build/probe/k34_time): torch-free, the CUDA runtime linked statically.
#   probes/k34_time/build.sh [TREE] [OUT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tree="${1:-$root}"
out="${2:-$root/build/probe/k34_time}"
mkdir -p "$(dirname "$out")"
# The #34 sources of TREE: fused/<id>/ since issue 39, fused/ and fused/common/ before (older trees,
# as the ones probes/k34_time/patches/ apply to; k34_time.cu's own includes then come from this
# repository, so the tree's #34 API must match this one's).
if [[ -f "$tree/fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale.cu" ]]; then
  sources=("$tree/fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale.cu" "$tree/fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale_host.cpp" "$tree/fused/runtime/device_info.cu")
else
  sources=("$tree/fused/convt3d_ln_gelu_scale.cu" "$tree/fused/convt3d_ln_gelu_scale_host.cpp" "$tree/fused/common/device_info.cu")
fi
# Trees with the warp-role program (fused/conv3d/mma_fp64_roles.cuh, issue 36: kept as
# reports/nvidia-h200/probe-2026-11-29-roles/patches/roles.patch) build for sm_90a:
# setmaxnreg, which its roles need, exists only there.
arch=(-arch=sm_90)
[[ -f "$tree/fused/conv3d/mma_fp64_roles.cuh" ]] && arch=(-gencode arch=compute_90a,code=sm_90a -DFB_ROLES_SM90A)
nvcc -O3 -std=c++17 "${arch[@]}" -lineinfo -Xptxas -v -I"$tree" -I"$root" "$root/probes/k34_time/k34_time.cu" \
  "${sources[@]}" -o "$out" 2>&1 |
  grep -E "error|warning|spill|registers" || true
test -x "$out"
echo "built $out"

// The host executor's passes of convt3d_bn_sub (fused/convt3d_bn_sub/convt3d_bn_sub_host.cpp): blocks run thread by
// thread, several blocks on several CPU threads. Each J0 is instantiated in its own translation
// unit (fused/convt3d_bn_sub_pass_j<J0>_host.cpp), for the same reason as the CUDA passes
// (fused/convt3d_bn_sub/passes.cuh): one file took g++ 100-380 s here.
#pragma once

#include <cstdint>

#include "fused/convt3d_bn_sub/conv_pass.cuh"
#include "fused/exec/host_parallel.h"

namespace fb::fused::convt3d_bn_sub::detail {

/// Pass kStats (statistics or writing) of the variant with J0 = kJ0 on the host, chunked or not.
template <int kJ0, bool kChunked, bool kStats>
void host_pass_blocks(const plan& pl, const args& a) {
  fb::fused::detail::run_blocks_on_host<conv3d::simt_fp32::host_exec>(
      pl.g.n_blocks, kStats ? pl.smem_stats_bytes : pl.smem_write_bytes,
      [&](conv3d::simt_fp32::host_exec& ex, int64_t block, float* smem) {
        pass_block<kJ0, kChunked, kStats>(ex, pl, a, block, smem);
      });
}

/// Pass kStats of the variant with J0 = kJ0 on the host, one input-channel chunk or several.
template <int kJ0, bool kStats>
void host_pass_variant(const plan& pl, const args& a) {
  if (pl.g.n_ci_chunks > 1)
    host_pass_blocks<kJ0, true, kStats>(pl, a);
  else
    host_pass_blocks<kJ0, false, kStats>(pl, a);
}

// Instantiated in fused/convt3d_bn_sub_pass_j<J0>_host.cpp only.
extern template void host_pass_variant<0, true>(const plan&, const args&);
extern template void host_pass_variant<0, false>(const plan&, const args&);
extern template void host_pass_variant<1, true>(const plan&, const args&);
extern template void host_pass_variant<1, false>(const plan&, const args&);
extern template void host_pass_variant<2, true>(const plan&, const args&);
extern template void host_pass_variant<2, false>(const plan&, const args&);

}  // namespace fb::fused::convt3d_bn_sub::detail

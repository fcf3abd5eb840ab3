// convt3d_bn_sub: the statistics pass kernels of J0 = 2, one and several
// input-channel chunks (a translation unit of their own: fused/convt3d_bn_sub/passes.cuh says why).
#include "fused/convt3d_bn_sub/passes.cuh"

namespace fb::fused::convt3d_bn_sub::detail {
template void launch_pass_variant<2, true>(const plan&, const args&, cudaStream_t);
}  // namespace fb::fused::convt3d_bn_sub::detail

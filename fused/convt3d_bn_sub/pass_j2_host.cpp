// convt3d_bn_sub host executor: both passes of J0 = 2 (a translation unit of their own:
// fused/convt3d_bn_sub/host_passes.h says why).
#include "fused/convt3d_bn_sub/host_passes.h"

namespace fb::fused::convt3d_bn_sub::detail {
template void host_pass_variant<2, true>(const plan&, const args&);
template void host_pass_variant<2, false>(const plan&, const args&);
}  // namespace fb::fused::convt3d_bn_sub::detail

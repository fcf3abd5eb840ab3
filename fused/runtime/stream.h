#pragma once
/// A torch-free, CUDA-header-free name for a CUDA stream, so that fused/<id>/<id>.h headers can be
/// included by host-only code. It is the same type as cudaStream_t (`CUstream_st*`).
struct CUstream_st;
namespace fb::fused {
using stream_t = CUstream_st*;
}  // namespace fb::fused

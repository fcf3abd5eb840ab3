#pragma once
/// Host-side helpers shared by the plans of both models: argument validation with clear messages,
/// workspace alignment, and the fixed chunk size of the plane-sum pass.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fused/math/convt_index.cuh"

namespace fb::fused::detail {

/// Elements of one plane chunk: one warp sums one chunk (32 lanes x 32 float4). A fixed constant, not
/// derived from the grid, so partial sums (and thus results) do not depend on the device's SM count.
constexpr int64_t k_chunk_elems = 4096;

/// The caller's workspace pointer is rounded up to this alignment; workspace_bytes() adds it.
constexpr std::size_t k_workspace_align = 256;

/// Throws std::invalid_argument "<model>: <field> <rule> (got <value>)" unless ok.
inline void require(bool ok, const char* model, const char* field, const char* rule, int64_t got) {
  if (!ok)
    throw std::invalid_argument(std::string(model) + ": " + field + " " + rule + " (got " + std::to_string(got) +
                                ")");
}

/// The sizes every fused 2-D problem has (batch, in_channels, out_channels, height, width,
/// kernel_size) must be >= 1; throws as require() otherwise, naming the first one that is not.
template <class Problem>
void require_positive_sizes(const Problem& p, const char* model) {
  require(p.batch >= 1, model, "batch", "must be >= 1", p.batch);
  require(p.in_channels >= 1, model, "in_channels", "must be >= 1", p.in_channels);
  require(p.out_channels >= 1, model, "out_channels", "must be >= 1", p.out_channels);
  require(p.height >= 1, model, "height", "must be >= 1", p.height);
  require(p.width >= 1, model, "width", "must be >= 1", p.width);
  require(p.kernel_size >= 1, model, "kernel_size", "must be >= 1", p.kernel_size);
}

/// The sizes of a cubic 3-D transposed convolution (batch, in_channels, out_channels, depth,
/// height, width, kernel_size, stride, padding) are valid and bounded for the block tile
/// (fused/conv3d/simt_fp32_tile.cuh: 32-bit shared-memory and per-thread indexing) and give an output
/// of at least one element per dimension; throws as require() otherwise.
template <class Problem>
void require_convt3d_sizes(const Problem& p, const char* m) {
  require(p.batch >= 1, m, "batch", "must be >= 1", p.batch);
  require(p.in_channels >= 1, m, "in_channels", "must be >= 1", p.in_channels);
  require(p.out_channels >= 1, m, "out_channels", "must be >= 1", p.out_channels);
  require(p.depth >= 1, m, "depth", "must be >= 1", p.depth);
  require(p.height >= 1, m, "height", "must be >= 1", p.height);
  require(p.width >= 1, m, "width", "must be >= 1", p.width);
  require(p.kernel_size >= 1, m, "kernel_size", "must be >= 1", p.kernel_size);
  require(p.stride >= 1, m, "stride", "must be >= 1", p.stride);
  require(p.padding >= 0, m, "padding", "must be >= 0", p.padding);
  // Channel and spatial sizes index shared memory and per-thread tiles in 32-bit arithmetic.
  constexpr int64_t k_max_extent = int64_t{1} << 20;
  require(p.in_channels <= k_max_extent, m, "in_channels", "must be <= 2^20", p.in_channels);
  require(p.out_channels <= k_max_extent, m, "out_channels", "must be <= 2^20", p.out_channels);
  require(p.depth <= k_max_extent, m, "depth", "must be <= 2^20", p.depth);
  require(p.height <= k_max_extent, m, "height", "must be <= 2^20", p.height);
  require(p.width <= k_max_extent, m, "width", "must be <= 2^20", p.width);
  require(p.kernel_size <= 64, m, "kernel_size", "must be <= 64", p.kernel_size);
  require(p.stride <= 64, m, "stride", "must be <= 64", p.stride);
  require(p.padding <= k_max_extent, m, "padding", "must be <= 2^20", p.padding);
  const int64_t in[3] = {p.depth, p.height, p.width};
  const char* out_rule[3] = {"too large: output depth (D-1)*s-2p+k must be >= 1; output depth",
                             "too large: output height (H-1)*s-2p+k must be >= 1; output height",
                             "too large: output width (W-1)*s-2p+k must be >= 1; output width"};
  for (int d = 0; d < 3; ++d)
    require(convt_output_size(in[d], p.kernel_size, p.stride, p.padding, 0) >= 1, m, "padding", out_rule[d],
            convt_output_size(in[d], p.kernel_size, p.stride, p.padding, 0));
}

/// Throws std::invalid_argument naming the pointer argument when it is null.
inline void require_ptr(const void* p, const char* model, const char* name) {
  if (p == nullptr) throw std::invalid_argument(std::string(model) + ": pointer '" + name + "' is null");
}

/// Bytes for n fp64 scratch values plus the alignment slack.
inline std::size_t workspace_bytes_for(int64_t n_doubles) {
  return static_cast<std::size_t>(n_doubles) * sizeof(double) + k_workspace_align;
}

/// The workspace as fp64 scratch, rounded up to k_workspace_align.
inline double* aligned_workspace(void* p) {
  const auto u = reinterpret_cast<std::uintptr_t>(p);
  return reinterpret_cast<double*>((u + (k_workspace_align - 1)) & ~static_cast<std::uintptr_t>(k_workspace_align - 1));
}

}  // namespace fb::fused::detail

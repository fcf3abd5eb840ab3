#pragma once
/// Validation, decomposition and workspace layout of convt3d_scale_bn_gap, shared by run_cuda and
/// run_host, so that both run the block programs (convt3d_scale_bn_gap/programs.cuh) with the same
/// parameters: the same tiles, chunks and therefore the same roundings. Nothing here depends on
/// the device (shared-memory budgets are Hopper's, fixed), so results do not either.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "fused/convt3d_scale_bn_gap/convt3d_scale_bn_gap.h"
#include "fused/convt3d_scale_bn_gap/programs.cuh"
#include "fused/runtime/plan_util.h"

namespace fb::fused::convt3d_scale_bn_gap::detail {

/// Dynamic shared memory per block for two resident blocks per SM on sm_90 (228 KB per SM, 1 KB
/// reserved per block), and the most one block may opt into.
constexpr std::size_t k_smem_two_blocks = (228 * 1024 - 2 * 1024) / 2;
constexpr std::size_t k_smem_max = 227 * 1024;

/// The decomposition and the workspace layout (byte offsets from the aligned workspace base).
struct plan {
  params prm;  ///< pointers left null; run_cuda / run_host fill them
  std::size_t off_S, off_wsum, off_ybar, off_m2, off_partial, off_h1, off_g, off_x, off_xtab, workspace_bytes;
  std::size_t x_smem, gemm_smem;
};

inline std::size_t align256(std::size_t n) { return (n + 255) & ~static_cast<std::size_t>(255); }

/// Validates (std::invalid_argument naming field and rule) and derives the plan.
inline plan make_plan(const problem& pr) {
  using fb::fused::detail::require;
  constexpr const char* m = "convt3d_scale_bn_gap";
  require(pr.batch >= 1, m, "batch", "must be >= 1", pr.batch);
  require(pr.in_channels >= 1, m, "in_channels", "must be >= 1", pr.in_channels);
  require(pr.out_channels >= 1, m, "out_channels", "must be >= 1", pr.out_channels);
  require(pr.depth >= 1, m, "depth", "must be >= 1", pr.depth);
  require(pr.height >= 1, m, "height", "must be >= 1", pr.height);
  require(pr.width >= 1, m, "width", "must be >= 1", pr.width);
  require(pr.kernel_size >= 1, m, "kernel_size", "must be >= 1", pr.kernel_size);
  // Sizes are kept in int inside a block (item counts, twiddle indices): bound them far above the
  // fuzz domain (1..40, k 1..7) so that every product formed in int stays below 2^31.
  constexpr int64_t k_max_extent = 4096;
  require(pr.depth + pr.kernel_size - 1 <= k_max_extent, m, "depth", "+ kernel_size - 1 must be <= 4096", pr.depth);
  require(pr.height + pr.kernel_size - 1 <= k_max_extent, m, "height", "+ kernel_size - 1 must be <= 4096",
          pr.height);
  require(pr.width + pr.kernel_size - 1 <= k_max_extent, m, "width", "+ kernel_size - 1 must be <= 4096", pr.width);
  if (!(std::isfinite(pr.scale_factor)))
    throw std::invalid_argument(std::string(m) + ": scale_factor must be finite");
  if (!(pr.eps > 0 && std::isfinite(pr.eps))) throw std::invalid_argument(std::string(m) + ": eps must be > 0 and finite");
  if (!(pr.momentum > 0 && pr.momentum <= 1))
    throw std::invalid_argument(std::string(m) + ": momentum must be in (0, 1]");

  plan pl{};
  params& p = pl.prm;
  p.B = pr.batch;
  p.c_in = pr.in_channels;
  p.c_out = pr.out_channels;
  p.D = static_cast<int>(pr.depth);
  p.H = static_cast<int>(pr.height);
  p.W = static_cast<int>(pr.width);
  p.k = static_cast<int>(pr.kernel_size);
  p.dft_d = p.D + p.k - 1;
  p.dft_h = p.H + p.k - 1;
  p.dft_w = p.W + p.k - 1;
  p.n_fw = p.dft_w / 2 + 1;
  p.n_d_pairs = p.dft_d / 2 + 1;
  p.n_h_pairs = p.dft_h / 2 + 1;
  p.n_out = static_cast<int64_t>(p.dft_d) * p.dft_h * p.dft_w;
  p.scale = pr.scale_factor;
  p.eps = pr.eps;
  p.momentum = pr.momentum;
  p.training = pr.training;
  require(!p.training || p.B * p.n_out > 1, m, "batch",
          "* D'*H'*W' must be > 1 in training mode (BatchNorm needs more than one value per channel); batch", p.B);

  // gemm: 8 units x 32 channels x a batch tile per block.
  p.pairs = math::dft::make_row_pairs(p.dft_d, p.dft_h);
  p.n_units = p.pairs.count * p.n_fw;
  p.n_groups = (p.n_units + k_units - 1) / k_units;
  p.n_ctiles = static_cast<int>((p.c_out + k_lanes - 1) / k_lanes);
  p.batch_tile = 1;
  while (p.batch_tile < k_max_tb && p.batch_tile < p.B) p.batch_tile *= 2;
  p.n_btiles = static_cast<int>((p.B + p.batch_tile - 1) / p.batch_tile);
  // 8 consecutive units span at most floor(7/n_fw) + 2 row pairs.
  const int64_t pair_rows = 7 / p.n_fw + 2;
  p.pair_rows =
      static_cast<int>(pair_rows < k_units ? (pair_rows < p.pairs.count ? pair_rows : p.pairs.count) : k_units);
  p.chunk_channels = static_cast<int>(p.c_in < 8 ? p.c_in : 8);
  if (p.training) {
    while (p.chunk_channels > 1 && make_gemm_layout(p).total > k_smem_two_blocks) --p.chunk_channels;
    require(make_gemm_layout(p).total <= k_smem_max, m, "kernel_size", "too large for the gemm's shared memory",
            pr.kernel_size);
    pl.gemm_smem = make_gemm_layout(p).total;
  }

  // x: fw chunks of chunk_columns columns; prefer two resident blocks, then wider chunks.
  const auto try_x = [&](int columns, std::size_t budget) {
    p.chunk_columns = columns;
    p.w_stage_rows = 1;
    p.slab_rows = static_cast<int>(static_cast<int64_t>(p.D) * p.H < k_threads ? static_cast<int64_t>(p.D) * p.H
                                                                                 : k_threads);
    while (p.slab_rows > 1 && make_x_layout(p, true).total > budget) p.slab_rows /= 2;
    return make_x_layout(p, true).total <= budget;
  };
  if (p.training) {
    if (!(try_x(8, k_smem_two_blocks) || try_x(4, k_smem_two_blocks) || try_x(8, k_smem_max) ||
          try_x(4, k_smem_max)))
      throw std::invalid_argument(std::string(m) + ": depth*(2*height + kernel_size - 1) too large for the input "
                                  "transform's shared memory (depth " + std::to_string(pr.depth) + ", height " +
                                  std::to_string(pr.height) + ", width " + std::to_string(pr.width) + ")");
    // Two rows per thread in the w-stage when the volume has several slabs and the doubled row
    // staging still fits the same budget.
    if (static_cast<int64_t>(p.D) * p.H > p.slab_rows) {
      const std::size_t budget = make_x_layout(p, true).total <= k_smem_two_blocks ? k_smem_two_blocks : k_smem_max;
      p.w_stage_rows = 2;
      if (make_x_layout(p, true).total > budget) p.w_stage_rows = 1;
    }
    pl.x_smem = make_x_layout(p, true).total;
  } else {
    // The sums-only variant (eval) stages slabs of rows and nothing else.
    p.chunk_columns = 8;
    p.w_stage_rows = 1;
    p.slab_rows = static_cast<int>(static_cast<int64_t>(p.D) * p.H < k_threads ? static_cast<int64_t>(p.D) * p.H
                                                                                : k_threads);
    while (p.slab_rows > 1 && make_x_layout(p, false).total > k_smem_two_blocks) p.slab_rows /= 2;
    pl.x_smem = make_x_layout(p, false).total;
    require(pl.x_smem <= k_smem_max, m, "width", "too large for the input sums' shared memory", pr.width);
  }
  p.n_fw_chunks = (p.n_fw + p.chunk_columns - 1) / p.chunk_columns;

  // Workspace.
  std::size_t o = 0;
  const auto take = [&](std::size_t bytes) {
    const std::size_t at = o;
    o += align256(bytes);
    return at;
  };
  const auto dbl = [](int64_t n) { return static_cast<std::size_t>(n) * sizeof(double); };
  pl.off_S = take(dbl(p.B * p.c_in));
  pl.off_wsum = take(dbl(p.c_in * p.c_out));
  pl.off_ybar = take(dbl(p.B * p.c_out));
  pl.off_m2 = take(dbl(p.training ? p.B * p.c_out : 0));
  pl.off_partial = take(dbl(p.training ? p.n_groups * p.B * p.c_out : 0));
  pl.off_h1 =
      take(p.training ? static_cast<std::size_t>(p.c_in * p.n_d_pairs * p.k * p.k * p.c_out) * sizeof(cplx) : 0);
  pl.off_g = take(p.training ? static_cast<std::size_t>(p.c_in * p.pairs.count * p.k * p.c_out) * sizeof(cplx) : 0);
  pl.off_x =
      take(p.training ? static_cast<std::size_t>(static_cast<int64_t>(p.dft_d) * p.dft_h * p.c_in * p.B * p.n_fw) *
                            sizeof(cplx)
                      : 0);
  pl.off_xtab = take(p.training ? x_table_images_bytes(p) : 0);
  pl.workspace_bytes = o + fb::fused::detail::k_workspace_align;
  return pl;
}

/// The plan's params with every pointer filled in (workspace: the caller's pointer, aligned here).
inline params bind(const plan& pl, const float* x, const float* weight, const float* conv_bias, const float* gamma,
                   const float* beta, float* running_mean, float* running_var, int64_t* num_batches_tracked,
                   float* out, void* workspace) {
  using fb::fused::detail::require_ptr;
  constexpr const char* m = "convt3d_scale_bn_gap";
  require_ptr(x, m, "x");
  require_ptr(weight, m, "weight");
  require_ptr(conv_bias, m, "conv_bias");
  require_ptr(gamma, m, "gamma");
  require_ptr(beta, m, "beta");
  require_ptr(running_mean, m, "running_mean");
  require_ptr(running_var, m, "running_var");
  if (pl.prm.training) require_ptr(num_batches_tracked, m, "num_batches_tracked");
  require_ptr(out, m, "out");
  require_ptr(workspace, m, "workspace");
  params p = pl.prm;
  p.x = x;
  p.weight = weight;
  p.conv_bias = conv_bias;
  p.gamma = gamma;
  p.beta = beta;
  p.running_mean = running_mean;
  p.running_var = running_var;
  p.num_batches_tracked = num_batches_tracked;
  p.out = out;
  auto* base = reinterpret_cast<unsigned char*>(fb::fused::detail::aligned_workspace(workspace));
  p.S = reinterpret_cast<double*>(base + pl.off_S);
  p.wsum = reinterpret_cast<double*>(base + pl.off_wsum);
  p.ybar = reinterpret_cast<double*>(base + pl.off_ybar);
  p.m2 = reinterpret_cast<double*>(base + pl.off_m2);
  p.partial = reinterpret_cast<double*>(base + pl.off_partial);
  p.h1 = reinterpret_cast<cplx*>(base + pl.off_h1);
  p.G = reinterpret_cast<cplx*>(base + pl.off_g);
  p.X = reinterpret_cast<cplx*>(base + pl.off_x);
  p.xtab = base + pl.off_xtab;
  return p;
}

}  // namespace fb::fused::convt3d_scale_bn_gap::detail

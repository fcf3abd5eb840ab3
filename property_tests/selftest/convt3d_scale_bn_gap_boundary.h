#pragma once
/// Boundary set of convt3d_scale_bn_gap (#77; fused/convt3d_scale_bn_gap/convt3d_scale_bn_gap.cu, the block programs in
/// fused/convt3d_scale_bn_gap/programs.cuh): prep, gspec (training), the x transform (DFT
/// in training, sums only in eval), the spectral GEMM in five batch-tile instantiations (training),
/// reduce and finish. See property_tests/selftest/boundary.h.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "fused/convt3d_scale_bn_gap/plan.h"
#include "property_tests/selftest/boundary.h"

namespace fb::boundary::convt3d_scale_bn_gap {

namespace sb = fb::fused::convt3d_scale_bn_gap;

struct boundary_case {
  std::string note;
  sb::problem problem;
  input_kind inputs;
};

inline std::vector<path> paths() {
  return {
      {"kernel:prep_kernel", "tap sums, DFT tables, the weights' depth spectra", ""},
      {"kernel:gspec_kernel", "the weights' spectra (training)", ""},
      {"kernel:x_kernel<dft=1>", "the input's half spectrum and sums (training)", ""},
      {"kernel:x_kernel<dft=0>", "the input's sums only (eval)", ""},
      {"kernel:gemm_kernel<1>", "spectral GEMM, batch tile 1", ""},
      {"kernel:gemm_kernel<2>", "spectral GEMM, batch tile 2", ""},
      {"kernel:gemm_kernel<4>", "spectral GEMM, batch tile 4", ""},
      {"kernel:gemm_kernel<8>", "spectral GEMM, batch tile 8", ""},
      {"kernel:gemm_kernel<16>", "spectral GEMM, batch tile 16", ""},
      {"kernel:reduce_kernel", "means and centred sums per (b, c)", ""},
      {"kernel:finish_kernel", "statistics, running buffers, outputs", ""},
      {"batch_tiles>=2", "more samples than one batch tile (B > 16)", ""},
      {"ci_chunks>=2", "input channels staged in several chunks of the GEMM", ""},
      {"channel_tiles>=2", "more than 32 output channels", ""},
      {"channel_tile_partial", "a channel tile with idle lanes (C_out not a multiple of 32)", ""},
      {"fw_chunks>=2", "half-spectrum columns in several chunks of the x transform", ""},
      {"x_rows_per_thread=2", "two rows per thread in the w-stage", ""},
      {"x_slabs>=2", "more input rows (D x H) than a slab holds", ""},
      {"x_rows_copied_by_strides", "input rows staged by fixed strides (W divides the block)", ""},
      {"x_rows_copied_four_per_step", "the strided staging's four-copy steps (more than 768 staged values)", ""},
      {"x_rows_copied_stepped", "input rows staged with a stepped (row, column) (W does not divide the block)", ""},
      {"gemm_channel_pairs", "a GEMM chunk with two or more input channels (one tap loop per pair)", ""},
      {"gemm_odd_channel", "a GEMM chunk with an odd number of input channels (the last one alone)", ""},
      {"unit_groups>=2", "several groups of 8 frequency units", ""},
      {"group_spans_row_pairs", "a group of 8 units spanning several row pairs (W' / 2 + 1 < 8)", ""},
      {"single_output", "D' H' W' = 1 (the spectrum is the mean alone)", ""},
      {"eval", "running statistics (eval mode)", ""},
  };
}

inline std::vector<std::string> reached(const sb::problem& pr, const device_limits&) {
  const sb::detail::plan pl = sb::detail::make_plan(pr);
  const sb::detail::params& p = pl.prm;
  reached_paths r;
  r.add("kernel:prep_kernel", sb::detail::prep_blocks(p) > 0);
  r.add("kernel:gspec_kernel", p.training && sb::detail::gspec_blocks(p) > 0);
  r.add("kernel:x_kernel<dft=1>", p.training && sb::detail::x_blocks(p, true) > 0);
  r.add("kernel:x_kernel<dft=0>", !p.training && sb::detail::x_blocks(p, false) > 0);
  const bool gemm = p.training && sb::detail::gemm_blocks(p) > 0;
  for (int tb : {1, 2, 4, 8, 16}) r.add("kernel:gemm_kernel<" + std::to_string(tb) + ">", gemm && p.batch_tile == tb);
  r.add("kernel:reduce_kernel", sb::detail::reduce_blocks(p) > 0);
  r.add("kernel:finish_kernel", sb::detail::finish_blocks(p) > 0);
  r.add("batch_tiles>=2", p.training && p.n_btiles >= 2);
  r.add("ci_chunks>=2", p.training && p.c_in > p.chunk_channels);
  r.add("channel_tiles>=2", p.n_ctiles >= 2);
  r.add("channel_tile_partial", p.c_out % sb::detail::k_lanes != 0);
  r.add("fw_chunks>=2", p.training && p.n_fw_chunks >= 2);
  r.add("x_rows_per_thread=2", p.training && p.w_stage_rows == 2);
  r.add("x_slabs>=2", static_cast<int64_t>(p.D) * p.H > p.slab_rows);
  const bool strided_rows = sb::detail::k_threads % p.W == 0;
  const int64_t first_group =
      std::min<int64_t>(static_cast<int64_t>(p.w_stage_rows) * p.slab_rows, static_cast<int64_t>(p.D) * p.H);
  r.add("x_rows_copied_by_strides", strided_rows);
  r.add("x_rows_copied_four_per_step", strided_rows && first_group * p.W > 3 * sb::detail::k_threads);
  r.add("x_rows_copied_stepped", !strided_rows);
  const int64_t last_chunk = p.c_in % p.chunk_channels == 0 ? p.chunk_channels : p.c_in % p.chunk_channels;
  r.add("gemm_channel_pairs", gemm && std::min<int64_t>(p.chunk_channels, p.c_in) >= 2);
  r.add("gemm_odd_channel", gemm && ((p.c_in >= p.chunk_channels && p.chunk_channels % 2 == 1) || last_chunk % 2 == 1));
  r.add("unit_groups>=2", p.training && p.n_groups >= 2);
  r.add("group_spans_row_pairs", p.training && p.n_fw < sb::detail::k_units && p.pairs.count >= 2);
  r.add("single_output", p.n_out == 1);
  r.add("eval", !p.training);
  return r.take();
}

inline sb::problem make(int64_t b, int64_t ci, int64_t co, int64_t d, int64_t h, int64_t w, int64_t k, double scale,
                        bool training) {
  return sb::problem{b, ci, co, d, h, w, k, scale, 1e-5, 0.1, training};
}

/// The set: every batch tile, chunk and stage loop, small enough for compute-sanitizer.
inline std::vector<boundary_case> cases() {
  return {
      {"batch tile 1", make(1, 5, 37, 3, 4, 5, 3, -1.25, true), input_kind::normal},
      {"batch tile 2", make(2, 5, 37, 3, 4, 5, 3, -1.25, true), input_kind::uniform},
      {"batch tile 4, eval", make(3, 5, 37, 3, 4, 5, 3, -1.25, false), input_kind::offset},
      {"batch tile 4", make(4, 5, 37, 3, 4, 5, 3, 0.5, true), input_kind::sparse},
      {"batch tile 8", make(5, 5, 37, 3, 4, 5, 3, 1.25, true), input_kind::border_only},
      {"batch tile 16", make(9, 5, 37, 3, 4, 5, 3, -1.25, true), input_kind::normal},
      {"two batch tiles of 16", make(17, 5, 37, 3, 4, 5, 3, 2.0, true), input_kind::uniform},
      {"19 input channels in chunks, 97 output channels (4 tiles, the last partial)", make(2, 19, 97, 5, 6, 7, 4, 2.0, true),
       input_kind::normal},
      {"19 x 97, eval", make(3, 19, 97, 5, 6, 7, 4, 0.5, false), input_kind::uniform},
      {"W' 17: two fw chunks", make(2, 3, 33, 4, 5, 12, 6, 1.5, true), input_kind::sparse},
      {"D x H = 360 rows: two slabs", make(2, 4, 40, 9, 40, 3, 2, 1.0, true), input_kind::offset},
      {"360 rows, eval", make(3, 4, 40, 9, 40, 3, 2, 1.0, false), input_kind::normal},
      {"k 7, W 1: groups span row pairs", make(4, 6, 35, 5, 3, 1, 7, -0.75, true), input_kind::uniform},
      {"D' H' W' = 1", make(2, 3, 5, 1, 1, 1, 1, 3.0, true), input_kind::normal},
      {"D' H' W' = 1, eval", make(1, 3, 5, 1, 1, 1, 1, 3.0, false), input_kind::normal},
      {"k 1, odd and even sizes", make(3, 7, 9, 6, 7, 8, 1, -1.0, true), input_kind::offset},
      {"W 16, 80 rows: rows staged four copies per step; 4 input channels (pairs only)",
       make(2, 4, 33, 4, 20, 16, 3, 1.5, true), input_kind::uniform},
  };
}

inline model_set set() {
  return make_set<boundary_case>(
      "convt3d_scale_bn_gap", paths(), cases(), reached,
      [](const boundary_case& c) {
        const sb::problem& p = c.problem;
        char buf[400];
        std::snprintf(buf, sizeof buf,
                      R"({"batch_size":%lld,"in_channels":%lld,"out_channels":%lld,"depth":%lld,"height":%lld,"width":%lld,"kernel_size":%lld,"scale_factor":%.17g,"eps":%.17g,"momentum":%.17g,"training":%s})",
                      (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.depth,
                      (long long)p.height, (long long)p.width, (long long)p.kernel_size, p.scale_factor, p.eps,
                      p.momentum, p.training ? "true" : "false");
        return std::string(buf);
      },
      [](const sb::problem& p) {
        const int64_t k = p.kernel_size;
        return static_cast<double>(p.batch * p.in_channels * p.depth * p.height * p.width) +
               static_cast<double>(p.batch * p.out_channels * (p.depth + k - 1) * (p.height + k - 1) * (p.width + k - 1));
      },
      [](const boundary_case& c) {
        const sb::problem& p = c.problem;
        char buf[200];
        std::snprintf(buf, sizeof buf, "B=%lld Cin=%lld Cout=%lld D=%lld H=%lld W=%lld k=%lld %s", (long long)p.batch,
                      (long long)p.in_channels, (long long)p.out_channels, (long long)p.depth, (long long)p.height,
                      (long long)p.width, (long long)p.kernel_size, p.training ? "train" : "eval");
        return std::string(buf);
      });
}

}  // namespace fb::boundary::convt3d_scale_bn_gap

FB_BOUNDARY_MODEL(convt3d_scale_bn_gap, fb::boundary::convt3d_scale_bn_gap::set)

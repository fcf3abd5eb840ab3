// Times convt2d_mul_gap's run_cuda (KernelBench #44) at its default problem beside kernels that
// only stream x the way its blocks do (one block per 128 x 128 plane, each warp a 1/8 piece, 16
// float4 loads in flight per lane), with the L2 flushed by a read (clean lines, as the bench does):
// how much of the kernel's time is the stream, and how much of the stream is the fp32 -> fp64
// conversions of the exact sums (F2F.F64.F32 issues at 16 per clock per SM on sm_90).
//
//   k44_time [--reps N] [--out FILE] [--compare FILE] [--batch B]
//
// Stream modes (each a kernel here; `exact` is fused/arch/warp_sums.cuh's kExact sum as of
// 5aa77e8, `split` and `bits` the same sums with some or all conversions done by bit moves):
//   fp32     a plain fp32 sum per lane (no conversion: the read alone)
//   paired   (x+y)+(z+w) in fp32, then fp64 (#42's sum: one conversion per float4)
//   exact    every element converted (F2F) and added in fp64
//   split    y and w of each float4 by bit moves, x and z by F2F: the same values, the same sums
//   bits     all four by bit moves
// exact, split and bits must agree bit for bit (each conversion is exact): the probe says so.
// --out writes the fused outputs (B x C_out floats); --compare reads another build's file.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "fused/arch/warp_sums.cuh"
#include "fused/convt2d_mul_gap/convt2d_mul_gap.h"
#include "fused/runtime/cuda_check.h"
#include "probes/cold_l2.cuh"
#include "probes/probe_main.h"

#if defined(K44_TRACE)
namespace fb::fused::convt2d_mul_gap {
void k44_trace_dump(unsigned long long* host, std::size_t bytes);
void k44_trace_clear();
}  // namespace fb::fused::convt2d_mul_gap
#endif

namespace {

enum mode { fp32, paired, exact, split, bits };
const char* const k_mode_names[] = {"fp32", "paired", "exact", "split", "bits"};

/// x + y, y widened exactly by bit moves instead of F2F: y's sign, exponent and mantissa placed as
/// an fp64's (its exponent then 896 too small: arithmetic shift, the three copies of the sign below
/// it cleared), then scaled by 2^896 inside the add's FMA. Denormal y gives an fp64 denormal,
/// scaled exactly. Finite y only: an inf or NaN would come out as a finite 2^128-sized value (the
/// caller's fp32 check sum catches those).
__device__ __forceinline__ double add_widened_bits(double x, float y) {
  const unsigned b = __float_as_uint(y);
  const int hi = (static_cast<int>(b) >> 3) & static_cast<int>(0x8fffffffu);
  const double placed = __hiloint2double(hi, static_cast<int>(b << 29));
  return fma(placed, 0x1p896, x);
}

template <int M>
__device__ __forceinline__ double sum4(float4 v, float& check) {
  if constexpr (M == paired) {
    return static_cast<double>((v.x + v.y) + (v.z + v.w));
  } else if constexpr (M == exact) {
    return (static_cast<double>(v.x) + static_cast<double>(v.y)) + (static_cast<double>(v.z) + static_cast<double>(v.w));
  } else if constexpr (M == split) {
    check += v.y + v.w;
    return add_widened_bits(static_cast<double>(v.x), v.y) + add_widened_bits(static_cast<double>(v.z), v.w);
  } else {
    check += (v.x + v.y) + (v.z + v.w);
    return add_widened_bits(add_widened_bits(0.0, v.x), v.y) + add_widened_bits(add_widened_bits(0.0, v.z), v.w);
  }
}

/// Each warp: its 1/8 of block b's plane (n floats, 16-byte aligned), 16 float4 per lane in flight.
template <int M>
__global__ void __launch_bounds__(256) stream(const float* x, int64_t plane, double* out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t piece = plane / 8;
  const float4* v = reinterpret_cast<const float4*>(x + blockIdx.x * plane + warp * piece);
  const int64_t nv = piece / 4;
  double acc0 = 0.0, acc1 = 0.0;
  float facc = 0.0f, check = 0.0f;
  // As warp_lane_range_sum: every load of a round issued before any use (nv is a multiple of 512
  // at the default).
  for (int64_t i = lane; i + 32 * 15 < nv; i += 32 * 16) {
    float4 r[16];
#pragma unroll
    for (int u = 0; u < 16; ++u) r[u] = __ldg(v + i + 32 * u);
#pragma unroll
    for (int u = 0; u < 16; u += 2) {
      if constexpr (M == fp32) {
        facc += (r[u].x + r[u].y) + (r[u].z + r[u].w) + (r[u + 1].x + r[u + 1].y) + (r[u + 1].z + r[u + 1].w);
      } else {
        acc0 += sum4<M>(r[u], check);
        acc1 += sum4<M>(r[u + 1], check);
      }
    }
  }
  double s = M == fp32 ? static_cast<double>(facc) : acc0 + acc1;
  if (!isfinite(check)) s = __longlong_as_double(0x7ff8000000000000ll);  // inf/NaN (or overflow): the fallback's case
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (lane == 0) out[blockIdx.x * 8 + warp] = s;
}

int probe(int argc, char** argv) {
  namespace mg = fb::fused::convt2d_mul_gap;
  mg::problem p{16, 64, 128, 128, 128, 3, 2, 1, 1, 0.5f};
  const fb::probes::timing_options opt = fb::probes::parse_timing_options(argc, argv, 31, [&](const char* k, const char* v) {
    if (std::strcmp(k, "--batch")) return false;
    p.batch = std::atoll(v);
    return true;
  });
  const int reps = opt.reps;
  const int64_t plane = p.height * p.width, n_planes = p.batch * p.in_channels;
  const int64_t n_x = n_planes * plane, n_w = p.in_channels * p.out_channels * p.kernel_size * p.kernel_size;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u01(0.0f, 1.0f), u(-1.0f, 1.0f);
  std::vector<float> x(n_x), w(n_w), bias(p.out_channels);
  for (float& e : x) e = u01(rng);  // KernelBench's torch.rand
  for (float& e : w) e = 0.04f * u(rng);
  for (float& e : bias) e = 0.04f * u(rng);
  float *dx, *dw, *dbias, *dout;
  double* dsums;
  void* dws;
  fb::probes::l2_flush flush(512u << 20);  // ten times the H200's L2
  const std::size_t ws = mg::workspace_bytes(p);
  FB_CUDA_CHECK(cudaMalloc(&dx, n_x * 4));
  FB_CUDA_CHECK(cudaMalloc(&dw, n_w * 4));
  FB_CUDA_CHECK(cudaMalloc(&dbias, p.out_channels * 4));
  FB_CUDA_CHECK(cudaMalloc(&dout, p.batch * p.out_channels * 4));
  FB_CUDA_CHECK(cudaMalloc(&dsums, n_planes * 8 * sizeof(double)));
  FB_CUDA_CHECK(cudaMalloc(&dws, ws));
  FB_CUDA_CHECK(cudaMemcpy(dx, x.data(), n_x * 4, cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaMemcpy(dw, w.data(), n_w * 4, cudaMemcpyHostToDevice));
  FB_CUDA_CHECK(cudaMemcpy(dbias, bias.data(), p.out_channels * 4, cudaMemcpyHostToDevice));
  cudaStream_t s;
  FB_CUDA_CHECK(cudaStreamCreate(&s));
  cudaDeviceProp prop;
  FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  auto time = [&](auto&& call) {  // microseconds, sorted
    std::vector<float> us = fb::probes::time_cold_ms(s, reps, flush, true, call);
    for (float& t : us) t *= 1000.0f;
    return us;
  };
  auto report = [&](const char* what, const std::vector<float>& us) {
    std::printf("K44TIME %s B=%lld %-8s median %.2f us, min %.2f, max %.2f (%d reps, read-flushed L2)\n", prop.name,
                (long long)p.batch, what, us[us.size() / 2], us.front(), us.back(), reps);
  };
  std::vector<std::vector<double>> sums(5);
  auto run_stream = [&](int m) {
    auto launch = [&] {
      switch (m) {
        case fp32: stream<fp32><<<n_planes, 256, 0, s>>>(dx, plane, dsums); break;
        case paired: stream<paired><<<n_planes, 256, 0, s>>>(dx, plane, dsums); break;
        case exact: stream<exact><<<n_planes, 256, 0, s>>>(dx, plane, dsums); break;
        case split: stream<split><<<n_planes, 256, 0, s>>>(dx, plane, dsums); break;
        default: stream<bits><<<n_planes, 256, 0, s>>>(dx, plane, dsums); break;
      }
    };
    report(k_mode_names[m], time(launch));
    sums[m].resize(n_planes * 8);
    FB_CUDA_CHECK(cudaMemcpy(sums[m].data(), dsums, n_planes * 8 * sizeof(double), cudaMemcpyDeviceToHost));
  };
  for (int round = 0; round < 2; ++round) {
    report("fused", time([&] { mg::run_cuda(p, dx, dw, dbias, dout, dws, s); }));
    for (int m = fp32; m <= bits; ++m) run_stream(m);
  }
#if defined(K44_TRACE)
  {  // one traced call after a flush: when each block's phases ended (probes/k44_time/phase_trace.py)
    static unsigned long long tr[4096][4][10];
    mg::k44_trace_clear();
    // Two warm-up calls, then the timed one: every block writes every mark of each call, so the
    // marks left are the timed call's.
    const float t = fb::probes::time_cold_ms(s, 1, flush, true, [&] { mg::run_cuda(p, dx, dw, dbias, dout, dws, s); })[0];
    mg::k44_trace_dump(&tr[0][0][0], sizeof tr);
    unsigned long long t0 = ~0ull;
    for (auto& b : tr)
      if (b[0][0]) t0 = std::min(t0, b[0][0]);
    std::printf("K44TRACE call %.2f us (events)\n", t * 1000.0f);
    for (int blk = 0; blk < 4096; ++blk)
      for (int bt = 0; bt < 4; ++bt) {
        if (!tr[blk][bt][5]) continue;
        std::printf("K44TRACE %d %d", blk, bt);
        for (int k = 0; k < 9; ++k) std::printf(" %.3f", tr[blk][bt][k] ? (tr[blk][bt][k] - t0) / 1000.0 : -1.0);
        std::printf(" %llu\n", tr[blk][0][9]);
      }
  }
#endif
  for (int m : {split, bits})
    std::printf("K44TIME %s sums against exact: %s\n", k_mode_names[m],
                std::memcmp(sums[m].data(), sums[exact].data(), sums[m].size() * sizeof(double)) ? "DIFFER" : "identical");
  std::vector<float> out(p.batch * p.out_channels);
  FB_CUDA_CHECK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
  fb::probes::save_and_compare("K44TIME fused", out, opt.out_path, opt.compare_path);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return fb::probes::run_probe("k44_time", [&] { return probe(argc, argv); });
}

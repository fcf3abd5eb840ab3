// Self-test of convt3d_scale_bn_gap (KernelBench #77): run_cuda vs run_host (the same block programs
// on the CPU, itself checked against fp64 brute force and the libtorch reference by the CPU tests):
// the output, running_mean, running_var (in place, reset before every run) and num_batches_tracked,
// on random problems of the fuzz domain (conv output and input <= ~4M elements), on
// problems that cross the kernels' internal boundaries, and on the default config. With --bench it
// times the default config (and batch/eval variants) beside the algorithm's floor.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "fused/convt3d_scale_bn_gap/convt3d_scale_bn_gap.h"
#include "harness/models/convt3d_scale_bn_gap_domain.h"
#include "property_tests/selftest/domain_draw.h"
#include "property_tests/selftest/convt3d_scale_bn_gap_boundary.h"
#include "property_tests/selftest/selftest.h"

namespace fb::selftest {
namespace {

namespace sb = fb::fused::convt3d_scale_bn_gap;

std::string describe(const sb::problem& p, dist d) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "convt3d_scale_bn_gap B=%lld Cin=%lld Cout=%lld D=%lld H=%lld W=%lld k=%lld scale=%g eps=%g "
                "momentum=%g %s %s",
                (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.depth,
                (long long)p.height, (long long)p.width, (long long)p.kernel_size, p.scale_factor, p.eps, p.momentum,
                p.training ? "training" : "eval", dist_name(d));
  return buf;
}

/// The floor of the fused algorithm, counted as harness/models/convt3d_scale_bn_gap.cpp's fused_work
/// does (useful FLOPs; x, w and the input spectrum's round trip).
struct work {
  double flops, bytes;
};
work fused_work(const sb::problem& p) {
  const double b = static_cast<double>(p.batch), ci = static_cast<double>(p.in_channels),
               co = static_cast<double>(p.out_channels), k = static_cast<double>(p.kernel_size);
  const int64_t nd = p.depth + p.kernel_size - 1, nh = p.height + p.kernel_size - 1, nw = p.width + p.kernel_size - 1;
  const double d = static_cast<double>(p.depth), h = static_cast<double>(p.height), w = static_cast<double>(p.width);
  const double fw = static_cast<double>(nw / 2 + 1), ndp = static_cast<double>(nd / 2 + 1),
               nhp = static_cast<double>(nh / 2 + 1);
  const double x_bytes = 4.0 * b * ci * d * h * w, w_bytes = 4.0 * ci * co * k * k * k;
  if (!p.training) return {b * ci * d * h * w + ci * co * k * k * k, x_bytes + w_bytes};
  const int64_t pairs = (nh / 2 + 1) * (nd % 2 == 0 ? 2 : 1) + (nd - 1) / 2 * nh;
  const double units = static_cast<double>(pairs) * fw;
  const double fma_x =
      b * ci * (2.0 * d * h * w * fw + 4.0 * d * fw * h * nhp + 4.0 * static_cast<double>(nh) * fw * d * ndp);
  const double fma_w = ci * co * (2.0 * k * k * ndp * k + 4.0 * static_cast<double>(pairs) * k * k) +
                       units * ci * co * std::ceil(b / 16.0) * (4.0 * k + 2.0);
  const double fma_gemm = 8.0 * units * ci * co * b;
  return {2.0 * (fma_x + fma_w + fma_gemm), x_bytes + w_bytes + 16.0 * static_cast<double>(nd * nh) * fw * ci * b};
}

bool run_case(const sb::problem& p, dist d, rng_t& rng, bool graph, bool bench, cudaStream_t stream, tally& t) {
  const int64_t k = p.kernel_size;
  std::vector<float> x(static_cast<std::size_t>(p.batch * p.in_channels * p.depth * p.height * p.width));
  std::vector<float> w(static_cast<std::size_t>(p.in_channels * p.out_channels * k * k * k));
  std::vector<float> cb(static_cast<std::size_t>(p.out_channels)), gamma(cb.size()), beta(cb.size()),
      rm(cb.size()), rv(cb.size());
  fill_x(x, p.height, p.width, d, rng);
  const double wb = 1.0 / std::sqrt(static_cast<double>(p.out_channels * k * k * k));  // PyTorch's bound
  fill_u(w, -wb, wb, rng);
  fill_u(cb, -1.0, 1.0, rng);
  fill_u(gamma, -2.0, 2.0, rng);
  fill_u(beta, -1.0, 1.0, rng);
  fill_u(rm, -1.0, 1.0, rng);
  fill_u(rv, 0.1, 3.0, rng);
  const int64_t batches0 = 1000 + static_cast<int64_t>(rng.next() % 1000);
  const int64_t n = p.batch * p.out_channels;

  // Expected: the host executor, from the same initial buffers.
  const std::size_t wsb = sb::workspace_bytes(p);
  std::vector<float> host_out(static_cast<std::size_t>(n)), host_rm = rm, host_rv = rv;
  int64_t host_batches = batches0;
  {
    std::vector<unsigned char> hws(wsb);
    sb::run_host(p, x.data(), w.data(), cb.data(), gamma.data(), beta.data(), host_rm.data(), host_rv.data(),
                 &host_batches, host_out.data(), hws.data());
  }

  device_buffer dx = upload(x), dw = upload(w), dcb = upload(cb), dg = upload(gamma), dbeta = upload(beta);
  device_buffer drm(rm.size() * sizeof(float)), drv(rv.size() * sizeof(float)), dnbt(sizeof(int64_t)), dws(wsb);
  guarded_output out(n);
  selftest_case c;
  c.name = describe(p, d);
  c.launch = [&](cudaStream_t s) {
    sb::run_cuda(p, dx.f(), dw.f(), dcb.f(), dg.f(), dbeta.f(), drm.f(), drv.f(), static_cast<int64_t*>(dnbt.p),
                 out.data(), dws.p, s);
  };
  c.reset = [&] {
    copy_to_device(drm.p, rm.data(), rm.size() * sizeof(float));
    copy_to_device(drv.p, rv.data(), rv.size() * sizeof(float));
    copy_to_device(dnbt.p, &batches0, sizeof(int64_t));
  };
  c.outputs.push_back({"out", &out, n, host_out, true});
  c.outputs.push_back({"running_mean", drm.p, p.out_channels, host_rm, false});
  c.outputs.push_back({"running_var", drv.p, p.out_channels, host_rv, false});
  c.extra_check = [&]() -> std::string {
    int64_t got = 0;
    FB_CUDA_CHECK(cudaMemcpy(&got, dnbt.p, sizeof(int64_t), cudaMemcpyDeviceToHost));
    if (got != host_batches)
      return "num_batches_tracked=" + std::to_string(got) + " expected " + std::to_string(host_batches);
    return "";
  };
  const bool ok = check_case(c, graph, stream, t);
  if (bench) {
    // The buffers drift over the timed repetitions (training updates them): timing only.
    const work wk = fused_work(p);
    const double floor_us = std::max(wk.flops / 67e12, wk.bytes / 3.0e12) * 1e6;
    for (const flush_kind f : {flush_kind::dirty, flush_kind::clean}) {
      const double us = median_us([&] { c.launch(stream); }, stream, 30, f);
      const double us_read = read_us(dx.p, x.size() * sizeof(float), stream, f);
      std::printf(
          "BENCH %s, %s flush: %.1f us; floor %.1f us (%.3g FLOP at 67 TFLOP/s, %.0f MB at 3.0 TB/s): %.2fx floor, "
          "%.1f TFLOP/s useful; plain read of x %.1f us; empty kernel %.2f us\n",
          c.name.c_str(), f == flush_kind::dirty ? "dirty" : "clean", us, floor_us, wk.flops, wk.bytes / 1e6,
          us / floor_us, wk.flops / us * 1e-6, us_read, empty_kernel_us(stream));
    }
  }
  return ok;
}

/// Conv output elements B * C_out * D'H'W'.
double conv_output(const sb::problem& p) {
  const int64_t k = p.kernel_size;
  return static_cast<double>(p.batch * p.out_channels) * static_cast<double>(p.depth + k - 1) *
         static_cast<double>(p.height + k - 1) * static_cast<double>(p.width + k - 1);
}

/// A random problem of the fuzz domain (SPEC 2) whose conv output and input stay under ~4M elements
/// (the GPU fuzz budget; it also keeps the host executor's expected values quick: the largest
/// shape of the domain is one of the fixed cases below).
sb::problem draw(rng_t& rng) {
  const domain::convt_domain& d = models::convt3d_scale_bn_gap_domain();
  sb::problem p{};
  for (;;) {
    p.batch = draw_from(rng, d.batch);
    p.in_channels = draw_from(rng, d.channels);
    p.out_channels = draw_from(rng, d.channels);
    if (p.out_channels == p.in_channels && rng.next() % 4 != 0) p.out_channels = p.in_channels % d.channels.hi + 1;
    p.depth = draw_from(rng, d.spatial);
    p.height = draw_from(rng, d.spatial);
    p.width = draw_from(rng, d.spatial);
    p.kernel_size = draw_from(rng, d.kernel);
    p.training = rng.next() % 3 != 0;
    const int64_t k = p.kernel_size;
    const bool valid = !p.training || p.batch * (p.depth + k - 1) * (p.height + k - 1) * (p.width + k - 1) > 1;
    const double input = static_cast<double>(p.batch * p.in_channels * p.depth * p.height * p.width);
    if (valid && conv_output(p) <= 4.0e6 && input <= 4.0e6) break;
  }
  p.scale_factor = draw_from(rng, d.reals.at(0));
  p.eps = draw_from(rng, d.reals.at(1));
  p.momentum = draw_from(rng, d.reals.at(2));
  return p;
}

sb::problem make(int64_t b, int64_t ci, int64_t co, int64_t d, int64_t h, int64_t w, int64_t k, double scale,
                 bool training) {
  return sb::problem{b, ci, co, d, h, w, k, scale, 1e-5, 0.1, training};
}

tally run(const options& opt, rng_t& rng, cudaStream_t stream) {
  tally t;
  for (int c = 0; c < opt.cases; ++c) run_case(draw(rng), draw_dist(rng), rng, c < 10, false, stream, t);
  if (opt.boundary) {  // the declared boundary set (convt3d_scale_bn_gap_boundary.h)
    const auto set = fb::boundary::convt3d_scale_bn_gap::cases();
    for (std::size_t i = 0; i < set.size(); ++i)
      report_boundary("convt3d_scale_bn_gap", i,
                      run_case(set[i].problem, static_cast<dist>(set[i].inputs), rng, true, false, stream, t));
  }
  if (opt.extra_boundary) {
    // Beside the set (too large for the sanitizers): the batch tiles of B = 16 and 32, W' = 18, and
    // the largest shapes of the fuzz domain (40^3, k 7 and k 1).
    run_case(make(16, 5, 37, 3, 4, 5, 3, -1.25, true), draw_dist(rng), rng, false, false, stream, t);
    run_case(make(32, 5, 37, 3, 4, 5, 3, -1.25, true), draw_dist(rng), rng, false, false, stream, t);
    run_case(make(2, 3, 33, 4, 5, 14, 5, -2.0, true), dist::border_only, rng, false, false, stream, t);  // W' = 18
    run_case(make(3, 8, 40, 40, 40, 40, 7, -3.0, true), dist::uniform, rng, false, false, stream, t);
    run_case(make(2, 3, 5, 40, 40, 40, 1, 1.0, false), dist::offset, rng, false, false, stream, t);
  }
  if (opt.with_default) {
    run_case(make(16, 64, 128, 16, 32, 32, 5, 2.0, true), dist::uniform, rng, true, opt.bench, stream, t);
    run_case(make(16, 64, 128, 16, 32, 32, 5, 2.0, false), dist::uniform, rng, false, opt.bench, stream, t);
    run_case(make(16, 64, 128, 16, 32, 32, 5, -0.5, true), dist::offset, rng, false, false, stream, t);
    if (opt.bench) {  // what scales with the batch, and what does not
      run_case(make(2, 64, 128, 16, 32, 32, 5, 2.0, true), dist::uniform, rng, false, true, stream, t);
      run_case(make(32, 64, 128, 16, 32, 32, 5, 2.0, true), dist::uniform, rng, false, true, stream, t);
    }
  }
  return t;
}

}  // namespace
}  // namespace fb::selftest

FB_SELFTEST_MODEL("convt3d_scale_bn_gap", fb::selftest::run)

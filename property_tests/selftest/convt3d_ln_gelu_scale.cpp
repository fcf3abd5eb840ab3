// Self-test of convt3d_ln_gelu_scale (KernelBench #34): run_cuda vs run_host (the same block programs
// on the CPU, itself checked against fp64 brute force and the libtorch reference by the CPU tests) on
// random problems of the fuzz domain, problems that cross the kernel's internal boundaries, and the
// default sizes; with --bench the default is timed beside its floor. The two agree up to the order of
// the fp64 additions inside one MMA instruction (which the rounding of y to fp32 absorbs but for rare
// ties) and the platforms' exp2 (fused/convt3d_ln_gelu_scale/plan.h gelu_erf: the GPU's
// ex2.approx within 2^-22 of the host's std::exp2): inside k_atol + k_rtol |host|.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "fused/convt3d_ln_gelu_scale/convt3d_ln_gelu_scale.h"
#include "harness/models/convt3d_ln_gelu_scale_domain.h"
#include "property_tests/selftest/domain_draw.h"
#include "property_tests/selftest/convt3d_ln_gelu_scale_boundary.h"
#include "property_tests/selftest/selftest.h"

namespace fb::selftest {
namespace {

namespace lgs = fb::fused::convt3d_ln_gelu_scale;

// Nominal fp64 tensor-core peak of an H100 SXM, the units #34's convolution runs on (mma.sync
// m16n8k16 f64), for the FLOP floor (the bench measures it: environment.measured_fp64_mma_peak).
constexpr double k_fp64_mma_peak_flops = 67e12;

std::string describe(const lgs::problem& p, bool bias, dist d) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "convt3d_ln_gelu_scale B=%lld Cin=%lld Cout=%lld D=%lld H=%lld W=%lld k=%lld s=%lld p=%lld "
                "eps=%g scale=%g %s %s",
                (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.depth,
                (long long)p.height, (long long)p.width, (long long)p.kernel_size, (long long)p.stride,
                (long long)p.padding, p.eps, p.scaling_factor, bias ? "bias" : "no-bias", dist_name(d));
  return buf;
}

bool run_case(const lgs::problem& p, bool bias, dist d, rng_t& rng, bool graph, bool bench, cudaStream_t stream,
              tally& t) {
  const int64_t k3 = p.kernel_size * p.kernel_size * p.kernel_size;
  const int64_t co = p.out_channels;
  std::vector<float> x(static_cast<std::size_t>(p.batch * p.in_channels * p.depth * p.height * p.width));
  std::vector<float> w(static_cast<std::size_t>(p.in_channels * co * k3));
  std::vector<float> cb(static_cast<std::size_t>(co)), gamma(cb.size()), beta(cb.size());
  fill_x(x, p.height, p.width, d, rng);
  const double wb = 1.0 / std::sqrt(static_cast<double>(co * k3));  // kaiming-uniform's bound
  fill_u(w, -wb, wb, rng);
  fill_u(cb, -1.0, 1.0, rng);
  fill_u(gamma, -2.0, 2.0, rng);
  fill_u(beta, -2.0, 2.0, rng);
  double outputs = 0, macs = 0;
  convt3d_sizes_of(p, outputs, macs);
  const auto n = static_cast<int64_t>(outputs);

  const std::size_t wsb = lgs::workspace_bytes(p);
  std::vector<unsigned char> hws(wsb);
  std::vector<float> host(static_cast<std::size_t>(n));
  lgs::run_host(p, x.data(), w.data(), bias ? cb.data() : nullptr, gamma.data(), beta.data(), host.data(), hws.data());

  device_buffer dx = upload(x), dw = upload(w), dcb = upload(cb), dg = upload(gamma), dbeta = upload(beta);
  device_buffer dws(wsb);
  guarded_output out(n);
  selftest_case c;
  c.name = describe(p, bias, d);
  c.launch = [&](cudaStream_t s) {
    lgs::run_cuda(p, dx.f(), dw.f(), bias ? dcb.f() : nullptr, dg.f(), dbeta.f(), out.data(), dws.p, s);
  };
  c.outputs.push_back({"out", &out, n, host, true});
  const bool ok = check_case(c, graph, stream, t);
  if (bench) {
    // The whole call after a clean L2 flush, beside the floor: output written once plus x and
    // weights read, at the bandwidth of a plain read of an output-sized buffer, and 2 FLOPs per
    // valid-tap MAC at the nominal fp64 MMA peak (one pass over the convolution).
    const double bytes = 4.0 * (static_cast<double>(n) + static_cast<double>(x.size() + w.size()));
    const double us = median_us([&] { c.launch(stream); }, stream, 20);
    const double read_out_us = read_us(out.data(), static_cast<std::size_t>(n) * sizeof(float), stream);
    const double bw = 4.0 * static_cast<double>(n) / (read_out_us * 1e-6);
    const double floor_bytes_us = bytes / bw * 1e6;
    const double floor_flops_us = 2.0 * macs / k_fp64_mma_peak_flops * 1e6;
    std::printf(
        "BENCH %s: %.1f us; floor %.1f us (bytes %.1f us at %.0f GB/s read, FLOPs %.1f us at 67 TFLOP/s fp64 MMA: "
        "%.2e valid-tap MACs); %.2f x floor\n",
        c.name.c_str(), us, std::max(floor_bytes_us, floor_flops_us), floor_bytes_us, bw * 1e-9, floor_flops_us, macs,
        us / std::max(floor_bytes_us, floor_flops_us));
  }
  return ok;
}

/// A random problem of the fuzz domain (SPEC 2): W' == C_out <= 64 (the width follows from the
/// drawn W'), kept to <= ~4M outputs and a host run of a fraction of a second.
lgs::problem draw(rng_t& rng) {
  const domain::convt_domain& d = models::convt3d_ln_gelu_scale_domain();
  lgs::problem p{};
  p.batch = draw_from(rng, d.batch);
  p.in_channels = draw_from(rng, d.channels);
  p.kernel_size = draw_from(rng, d.kernel);
  p.stride = draw_from(rng, d.stride);
  p.depth = draw_from(rng, d.spatial);
  p.height = draw_from(rng, d.spatial);
  p.eps = draw_from(rng, d.reals.at(0));
  p.scaling_factor = draw_from(rng, d.reals.at(1));
  const int64_t w_target = draw_from(rng, d.channels);  // C_out = W'
  p.width = std::max<int64_t>(1, (w_target - p.kernel_size) / p.stride + 1);
  for (;;) {
    const auto pmax = [&](int64_t n) { return domain::max_padding(n, p.kernel_size, p.stride, 0); };
    const int64_t pm = std::min({pmax(p.depth), pmax(p.height), pmax(p.width)});
    p.padding = draw_padding(rng, d, p.kernel_size, pm);
    p.out_channels = convt3d_out_size(p, p.width);
    double outputs = 0, macs = 0;
    convt3d_sizes_of(p, outputs, macs);
    if (outputs <= 4e6 && macs <= 2e8) break;
    int64_t* biggest = &p.batch;
    for (int64_t* f : {&p.depth, &p.height})
      if (*f > *biggest) biggest = f;
    if (*biggest > 1) *biggest = (*biggest + 1) / 2;
    else p.in_channels = std::max<int64_t>(1, p.in_channels / 2);
  }
  return p;
}

tally run(const options& opt, rng_t& rng, cudaStream_t stream) {
  tally t;
  auto go = [&](lgs::problem p, bool bias, dist d, bool graph, bool bench = false) {
    run_case(p, bias, d, rng, graph, bench, stream, t);
  };
  for (int c = 0; c < opt.cases; ++c) go(draw(rng), rng.next() % 2 == 0, draw_dist(rng), c < 20);
  if (opt.boundary) {  // the declared boundary set (convt3d_ln_gelu_scale_boundary.h)
    const auto set = fb::boundary::convt3d_ln_gelu_scale::cases();
    for (std::size_t i = 0; i < set.size(); ++i)
      report_boundary("convt3d_ln_gelu_scale", i,
                      run_case(set[i].problem, set[i].bias, static_cast<dist>(set[i].inputs), rng, true, false, stream, t));
  }
  if (opt.extra_boundary) {
    // The kernel's internal boundaries (fused/conv3d/mma_fp64_tile.cuh: a block of one d base x
    // tile_h h bases x every w base x <= 64 channels; 4 warps of 32 positions x 32 channels, several
    // position passes when a w phase has more positions than the warps hold; input channels staged
    // in chunks when they do not fit; K zero-padded to 16 per phase and chunk):
    //  - s 1: W' 40 (40 of a pass's 64 positions), and k 7 (3 channels of the 7 x 7 x 70 box fit:
    //    chunked staging);
    go({2, 5, 40, 6, 9, 40, 1, 1, 0, 1e-5, 1.0}, true, dist::normal, true);
    go({1, 9, 64, 4, 7, 58, 7, 1, 0, 1e-3, -2.0}, false, dist::offset, true);
    //  - W' 100 (s 1): two channel groups and two position passes per w phase;
    go({1, 3, 100, 3, 4, 100, 1, 1, 0, 1e-5, 0.7}, true, dist::uniform, true);
    //  - 64 input channels at the default's k 4, s 2 (chunked), and k 5, s 2 (ceil(k/s) 3);
    go({2, 64, 64, 5, 9, 32, 4, 2, 1, 1e-5, 0.5}, true, dist::uniform, false);
    go({2, 7, 37, 6, 7, 18, 5, 2, 1, 0.2, 1.5}, true, dist::offset, true);
    //  - k < s (phases without taps: y = 0), s 4 with p > 0 crops, k 3 s 2 (phases of 8, 4, 2, 1 taps);
    go({3, 6, 33, 9, 10, 17, 1, 2, 0, 1e-5, 1.0}, true, dist::sparse, true);
    go({1, 4, 50, 5, 6, 14, 2, 4, 2, 1e-5, -1.0}, false, dist::border_only, false);
    go({2, 11, 35, 7, 8, 17, 3, 2, 0, 1e-4, 2.0}, true, dist::normal, true);
    //  - one warp column (W' 8: 8 channels, 32 h bases a block, 40^2 inputs) and a single-value row
    //    (W' = 1).
    go({1, 3, 8, 40, 40, 4, 2, 2, 0, 1e-5, 1.0}, true, dist::normal, false);
    go({2, 3, 1, 5, 6, 1, 1, 1, 0, 1e-5, 1.0}, true, dist::uniform, false);
  }
  if (opt.with_default) {
    const lgs::problem def{32, 32, 64, 16, 32, 32, 4, 2, 1, 1e-5, 1.0};
    go(def, true, dist::uniform, true, opt.bench);
  }
  return t;
}

}  // namespace
}  // namespace fb::selftest

FB_SELFTEST_MODEL("convt3d_ln_gelu_scale", fb::selftest::run)

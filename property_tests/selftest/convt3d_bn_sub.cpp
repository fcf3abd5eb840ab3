// Self-test of convt3d_bn_sub (KernelBench #15): run_cuda vs run_host (the same block programs on
// the CPU), output, running_mean, running_var and num_batches_tracked, on random problems of the
// fuzz domain, problems that cross the kernel's internal boundaries, and the default sizes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "fused/convt3d_bn_sub/convt3d_bn_sub.h"
#include "harness/models/convt3d_bn_sub_domain.h"
#include "property_tests/selftest/domain_draw.h"
#include "property_tests/selftest/convt3d_bn_sub_boundary.h"
#include "property_tests/selftest/selftest.h"

namespace fb::selftest {
namespace {

namespace bsub = fb::fused::convt3d_bn_sub;

// Nominal FP32 SIMT peak of an H100 SXM (132 SMs x 128 lanes x 2 x 1.98 GHz) for the FLOP floor;
// the bandwidth floor uses a plain read of an output-sized buffer measured in the same run.
constexpr double k_fp32_peak_flops = 67e12;

std::string describe(const bsub::problem& p, bool bias, dist d) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "convt3d_bn_sub B=%lld Cin=%lld Cout=%lld D=%lld H=%lld W=%lld k=%lld s=%lld p=%lld %s %s %s",
                (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.depth,
                (long long)p.height, (long long)p.width, (long long)p.kernel_size, (long long)p.stride,
                (long long)p.padding, p.training ? "training" : "eval", bias ? "bias" : "no-bias", dist_name(d));
  return buf;
}

bool run_case(const bsub::problem& p, bool bias, dist d, rng_t& rng, bool graph, bool bench, cudaStream_t stream,
              tally& t) {
  const int64_t k3 = p.kernel_size * p.kernel_size * p.kernel_size;
  const int64_t co = p.out_channels;
  std::vector<float> x(static_cast<std::size_t>(p.batch * p.in_channels * p.depth * p.height * p.width));
  std::vector<float> w(static_cast<std::size_t>(p.in_channels * co * k3));
  std::vector<float> cb(static_cast<std::size_t>(co)), gamma(cb.size()), beta(cb.size()), rm(cb.size()), rv(cb.size());
  fill_x(x, p.height, p.width, d, rng);
  const double wb = 1.0 / std::sqrt(static_cast<double>(co * k3));  // kaiming-uniform's bound
  fill_u(w, -wb, wb, rng);
  fill_u(cb, -1.0, 1.0, rng);
  fill_u(gamma, -2.0, 2.0, rng);
  fill_u(beta, -2.0, 2.0, rng);
  fill_u(rm, -1.0, 1.0, rng);
  fill_u(rv, 0.1, 3.0, rng);
  const int64_t nbt0 = rng.range(0, 1000);
  double outputs = 0, macs = 0;
  convt3d_sizes_of(p, outputs, macs);
  const auto n = static_cast<int64_t>(outputs);

  // The host executor's results, from the same initial buffers.
  const std::size_t wsb = bsub::workspace_bytes(p);
  std::vector<unsigned char> hws(wsb);
  std::vector<float> host(static_cast<std::size_t>(n)), rm_h = rm, rv_h = rv;
  int64_t nbt_h = nbt0;
  bsub::run_host(p, x.data(), w.data(), bias ? cb.data() : nullptr, gamma.data(), beta.data(), rm_h.data(),
                 rv_h.data(), &nbt_h, host.data(), hws.data());

  device_buffer dx = upload(x), dw = upload(w), dcb = upload(cb), dg = upload(gamma), dbeta = upload(beta);
  device_buffer drm(rm.size() * sizeof(float)), drv(rv.size() * sizeof(float)), dnbt(sizeof(int64_t)), dws(wsb);
  guarded_output out(n);
  selftest_case c;
  c.name = describe(p, bias, d);
  c.launch = [&](cudaStream_t s) {
    bsub::run_cuda(p, dx.f(), dw.f(), bias ? dcb.f() : nullptr, dg.f(), dbeta.f(), drm.f(), drv.f(),
                   static_cast<int64_t*>(dnbt.p), out.data(), dws.p, s);
  };
  c.reset = [&] {  // the buffers are updated in place: every run starts from the same state
    copy_to_device(drm.p, rm.data(), rm.size() * sizeof(float));
    copy_to_device(drv.p, rv.data(), rv.size() * sizeof(float));
    copy_to_device(dnbt.p, &nbt0, sizeof nbt0);
  };
  c.outputs.push_back({"out", &out, n, host, true});
  c.outputs.push_back({"running_mean", drm.p, co, rm_h, false});
  c.outputs.push_back({"running_var", drv.p, co, rv_h, false});
  c.extra_check = [&]() -> std::string {
    int64_t got = 0;
    FB_CUDA_CHECK(cudaMemcpy(&got, dnbt.p, sizeof got, cudaMemcpyDeviceToHost));
    if (got == nbt_h) return "";
    return "num_batches_tracked=" + std::to_string(got) + " host=" + std::to_string(nbt_h);
  };
  const bool ok = check_case(c, graph, stream, t);
  if (bench) {
    // The whole call (every launch) after a clean L2 flush, beside the floor of the algorithm
    // (harness/models/convt3d_bn_sub.cpp says the same): output written once (training: y - ybar
    // also written and read once), x read and x - c written and read, weights read, at the
    // bandwidth of a plain read of an output-sized buffer, and 2 FLOPs per valid-tap MAC of one
    // pass over the convolution at the nominal FP32 peak.
    const double passes = 1.0;
    const double out_moves = p.training ? 3.0 : 1.0;
    const double bytes =
        4.0 * (out_moves * static_cast<double>(n) + 3.0 * static_cast<double>(x.size()) + static_cast<double>(w.size()));
    const double us = median_us([&] { c.launch(stream); }, stream, 50);
    const double read_out_us = read_us(out.data(), static_cast<std::size_t>(n) * sizeof(float), stream);
    const double bw = 4.0 * static_cast<double>(n) / (read_out_us * 1e-6);
    const double floor_bytes_us = bytes / bw * 1e6;
    const double floor_flops_us = 2.0 * macs * passes / k_fp32_peak_flops * 1e6;
    std::printf(
        "BENCH %s: %.1f us; floor %.1f us (bytes %.1f us at %.0f GB/s read, FLOPs %.1f us at 67 TFLOP/s: "
        "%.2e valid-tap MACs x %.0f passes); %.2f x floor; empty kernel %.2f us\n",
        c.name.c_str(), us, std::max(floor_bytes_us, floor_flops_us), floor_bytes_us, bw * 1e-9, floor_flops_us, macs,
        passes, us / std::max(floor_bytes_us, floor_flops_us), empty_kernel_us(stream));
  }
  return ok;
}

int64_t pick_padding(rng_t& rng, const bsub::problem& p) {
  auto pmax = [&](int64_t n) { return ((n - 1) * p.stride + p.kernel_size - 1) / 2; };
  const int64_t pm = std::min({pmax(p.depth), pmax(p.height), pmax(p.width)});
  return draw_padding(rng, models::convt3d_bn_sub_domain(), p.kernel_size, pm);
}

/// A random problem of the fuzz domain (SPEC 2), kept to <= ~4M outputs and a host run of a
/// fraction of a second.
bsub::problem draw(rng_t& rng) {
  const domain::convt_domain& d = models::convt3d_bn_sub_domain();
  bsub::problem p{};
  p.batch = draw_from(rng, d.batch);
  p.in_channels = draw_from(rng, d.channels);
  p.out_channels = draw_from(rng, d.channels);
  if (p.out_channels == p.in_channels && rng.next() % 4 != 0)  // SPEC 1
    p.out_channels = p.in_channels % d.channels.hi + 1;
  p.kernel_size = draw_from(rng, d.kernel);
  p.stride = draw_from(rng, d.stride);
  p.depth = draw_from(rng, d.spatial);
  p.height = draw_from(rng, d.spatial);
  p.width = draw_from(rng, d.spatial);
  p.training = rng.next() % 4 != 0;
  p.eps = 1e-5;
  p.momentum = 0.1;
  for (;;) {
    p.padding = pick_padding(rng, p);
    double outputs = 0, macs = 0;
    convt3d_sizes_of(p, outputs, macs);
    if (outputs <= 4e6 && macs <= 2e8) break;
    // Too big: halve the largest of batch and the spatial sizes.
    int64_t* biggest = &p.batch;
    for (int64_t* f : {&p.depth, &p.height, &p.width})
      if (*f > *biggest) biggest = f;
    if (*biggest > 1) *biggest = (*biggest + 1) / 2;
    else p.in_channels = std::max<int64_t>(1, p.in_channels / 2);
  }
  double outputs = 0, macs = 0;
  convt3d_sizes_of(p, outputs, macs);
  if (p.training && outputs / static_cast<double>(p.out_channels) <= 1.0) p.training = false;  // PyTorch: N > 1
  return p;
}

tally run(const options& opt, rng_t& rng, cudaStream_t stream) {
  tally t;
  auto go = [&](bsub::problem p, bool bias, dist d, bool graph, bool bench = false) {
    run_case(p, bias, d, rng, graph, bench, stream, t);
  };
  for (int c = 0; c < opt.cases; ++c) go(draw(rng), rng.next() % 2 == 0, draw_dist(rng), c < 20);
  if (opt.boundary) {  // the declared boundary set (convt3d_bn_sub_boundary.h)
    const auto set = fb::boundary::convt3d_bn_sub::cases();
    for (std::size_t i = 0; i < set.size(); ++i)
      report_boundary("convt3d_bn_sub", i,
                      run_case(set[i].problem, set[i].bias, static_cast<dist>(set[i].inputs), rng, true, false, stream, t));
  }
  if (opt.extra_boundary) {
    // Beside the set (larger, or more of the same): 64 input channels in training; 65 output
    // channels; 40^3 at k 2 s 2; large planes at the default geometry (8 x 4 x 3 tiles per
    // (b, c)); eval with a single value per channel.
    go({2, 64, 40, 6, 12, 20, 3, 2, 1, true, 1e-5, 0.1}, false, dist::uniform, false);
    go({1, 4, 65, 5, 6, 7, 4, 2, 1, true, 1e-5, 0.1}, false, dist::offset, false);
    go({1, 2, 3, 40, 40, 40, 2, 2, 0, true, 1e-5, 0.1}, false, dist::normal, false);
    go({1, 8, 12, 31, 40, 40, 3, 2, 1, true, 1e-5, 0.1}, true, dist::uniform, false);
    go({1, 3, 4, 1, 1, 1, 1, 1, 0, false, 1e-5, 0.1}, true, dist::uniform, false);
  }
  if (opt.with_default) {
    const bsub::problem def{16, 16, 32, 16, 32, 32, 3, 2, 1, true, 1e-5, 0.1};
    go(def, true, dist::uniform, true, opt.bench);
    bsub::problem eval = def;
    eval.training = false;
    go(eval, true, dist::normal, false, opt.bench);  // one pass: the difference is pass 1 and its stats
    if (opt.bench) {  // the sweep's batch x0.125 and x2: what does not scale with the batch
      bsub::problem small = def;
      small.batch = 2;
      go(small, true, dist::uniform, false, true);
      bsub::problem large = def;
      large.batch = 32;
      go(large, true, dist::uniform, false, true);
    }
  }
  return t;
}

}  // namespace
}  // namespace fb::selftest

FB_SELFTEST_MODEL("convt3d_bn_sub", fb::selftest::run)

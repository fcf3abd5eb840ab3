// Self-test of convt2d_gap_bias_lse (KernelBench #42): run_cuda vs run_host.
#include <cstdio>

#include "fused/convt2d_gap_bias_lse/convt2d_gap_bias_lse.h"
#include "harness/models/convt2d_gap_bias_lse_domain.h"
#include "property_tests/selftest/domain_draw.h"
#include "property_tests/selftest/convt2d_gap_bias_lse_boundary.h"
#include "property_tests/selftest/selftest.h"

namespace fb::selftest {
namespace {

namespace gl = fb::fused::convt2d_gap_bias_lse;

std::string describe(const gl::problem& p, dist d) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "convt2d_gap_bias_lse B=%lld Cin=%lld Cout=%lld H=%lld W=%lld k=%lld %s",
                (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.height,
                (long long)p.width, (long long)p.kernel_size, dist_name(d));
  return buf;
}

bool run_case(const gl::problem& p, dist d, rng_t& rng, bool graph, bool bench, cudaStream_t stream, tally& t) {
  const int64_t k = p.kernel_size;
  std::vector<float> x(static_cast<std::size_t>(p.batch * p.in_channels * p.height * p.width));
  std::vector<float> w(static_cast<std::size_t>(p.in_channels * p.out_channels * k * k));
  std::vector<float> cb(static_cast<std::size_t>(p.out_channels));
  std::vector<float> bias(static_cast<std::size_t>(p.out_channels));
  fill_x(x, p.height, p.width, d, rng);
  fill_u(w, -1.0, 1.0, rng);
  fill_u(cb, -1.0, 1.0, rng);
  const double bias_scale = (rng.next() & 1) ? 100.0 : 2.0;  // large biases exercise the stable form
  fill_u(bias, -bias_scale, bias_scale, rng);
  const int64_t n = p.batch;
  const std::size_t wsb = gl::workspace_bytes(p);
  std::vector<unsigned char> hws(wsb);
  std::vector<float> host(static_cast<std::size_t>(n));
  gl::run_host(p, x.data(), w.data(), cb.data(), bias.data(), host.data(), hws.data());
  device_buffer dx = upload(x), dw = upload(w), dcb = upload(cb), db = upload(bias), dws(wsb);
  guarded_output out(n);
  selftest_case c;
  c.name = describe(p, d);
  c.launch = [&](cudaStream_t s) { gl::run_cuda(p, dx.f(), dw.f(), dcb.f(), db.f(), out.data(), dws.p, s); };
  c.outputs.push_back({"out", &out, n, host, true});
  const bool ok = check_case(c, graph, stream, t);
  if (bench) {
    const double bytes = static_cast<double>(x.size()) * 4.0;
    for (const flush_kind f : {flush_kind::dirty, flush_kind::clean}) {
      const double us = median_us([&] { c.launch(stream); }, stream, 30, f);
      std::printf("BENCH %s: %.2f us after a %s flush (x at %.0f GB/s)\n", c.name.c_str(), us,
                  f == flush_kind::dirty ? "dirty" : "clean", bytes / us * 1e-3);
    }
  }
  return ok;
}

gl::problem draw(rng_t& rng) {
  const domain::convt_domain& d = models::convt2d_gap_bias_lse_domain();
  gl::problem p{};
  p.batch = draw_from(rng, d.batch);
  p.in_channels = draw_from(rng, d.channels);
  p.out_channels = draw_from(rng, d.channels);
  p.height = draw_from(rng, d.spatial);
  p.width = draw_from(rng, d.spatial);
  p.kernel_size = draw_from(rng, d.kernel);
  return p;
}

tally run(const options& opt, rng_t& rng, cudaStream_t stream) {
  tally t;
  for (int c = 0; c < opt.cases; ++c) run_case(draw(rng), draw_dist(rng), rng, c < 20, false, stream, t);
  if (opt.boundary) {  // the declared boundary set (convt2d_gap_bias_lse_boundary.h)
    const auto set = fb::boundary::convt2d_gap_bias_lse::cases();
    for (std::size_t i = 0; i < set.size(); ++i)
      report_boundary("convt2d_gap_bias_lse", i,
                      run_case(set[i].problem, static_cast<dist>(set[i].inputs), rng, true, false, stream, t));
  }
  if (opt.extra_boundary) {
    // Random planes of more than one 4096-element chunk.
    for (int c = 0; c < std::max(1, opt.cases / 20); ++c) {
      gl::problem p = draw(rng);
      p.batch = rng.range(1, 3);
      p.height = rng.range(64, 200);
      p.width = rng.range(64, 200);
      run_case(p, draw_dist(rng), rng, c < 2, false, stream, t);
    }
  }
  if (opt.with_default)
    run_case(gl::problem{16, 64, 128, 512, 512, 3}, dist::uniform, rng, true, opt.bench, stream, t);
  return t;
}

}  // namespace
}  // namespace fb::selftest

FB_SELFTEST_MODEL("convt2d_gap_bias_lse", fb::selftest::run)

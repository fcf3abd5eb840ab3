// Self-test of convt2d_mul_gap (KernelBench #44): run_cuda vs run_host.
#include <cmath>
#include <cstdio>

#include "fused/convt2d_mul_gap/convt2d_mul_gap.h"
#include "harness/models/convt2d_mul_gap_domain.h"
#include "property_tests/selftest/domain_draw.h"
#include "property_tests/selftest/convt2d_mul_gap_boundary.h"
#include "property_tests/selftest/selftest.h"

namespace fb::selftest {
namespace {

namespace mg = fb::fused::convt2d_mul_gap;

std::string describe(const mg::problem& p, dist d) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "convt2d_mul_gap B=%lld Cin=%lld Cout=%lld H=%lld W=%lld k=%lld s=%lld p=%lld op=%lld mult=%g %s",
                (long long)p.batch, (long long)p.in_channels, (long long)p.out_channels, (long long)p.height,
                (long long)p.width, (long long)p.kernel_size, (long long)p.stride, (long long)p.padding,
                (long long)p.output_padding, p.multiplier, dist_name(d));
  return buf;
}

bool run_case(const mg::problem& p, dist d, rng_t& rng, bool graph, bool bench, cudaStream_t stream, tally& t) {
  const int64_t k = p.kernel_size;
  std::vector<float> x(static_cast<std::size_t>(p.batch * p.in_channels * p.height * p.width));
  std::vector<float> w(static_cast<std::size_t>(p.in_channels * p.out_channels * k * k));
  std::vector<float> cb(static_cast<std::size_t>(p.out_channels));
  fill_x(x, p.height, p.width, d, rng);
  const double wb = 1.0 / std::sqrt(static_cast<double>(p.out_channels * k * k));
  fill_u(w, -wb, wb, rng);
  fill_u(cb, -1.0, 1.0, rng);
  const int64_t n = p.batch * p.out_channels;
  const std::size_t wsb = mg::workspace_bytes(p);
  std::vector<unsigned char> hws(wsb);
  std::vector<float> host(static_cast<std::size_t>(n));
  mg::run_host(p, x.data(), w.data(), cb.data(), host.data(), hws.data());
  device_buffer dx = upload(x), dw = upload(w), dcb = upload(cb), dws(wsb);
  guarded_output out(n);
  selftest_case c;
  c.name = describe(p, d);
  c.launch = [&](cudaStream_t s) { mg::run_cuda(p, dx.f(), dw.f(), dcb.f(), out.data(), dws.p, s); };
  c.outputs.push_back({"out", &out, n, host, true});
  const bool ok = check_case(c, graph, stream, t);
  if (bench) {
    // The kernel against a plain read of x and an empty kernel, after a dirty and a clean flush.
    const double bytes = static_cast<double>(x.size()) * 4.0;
    for (const flush_kind f : {flush_kind::dirty, flush_kind::clean}) {
      const double us = median_us([&] { c.launch(stream); }, stream, 50, f);
      const double us_read = read_us(dx.p, x.size() * sizeof(float), stream, f);
      std::printf("BENCH %s, %s flush: %.2f us (x at %.0f GB/s); plain read of x %.2f us (%.0f GB/s); empty kernel %.2f us\n",
                  c.name.c_str(), f == flush_kind::dirty ? "dirty" : "clean", us, bytes / us * 1e-3, us_read,
                  bytes / us_read * 1e-3, empty_kernel_us(stream));
    }
  }
  return ok;
}

/// A random problem of the model's declared fuzz domain (harness/models/convt2d_mul_gap_domain.h).
mg::problem draw(rng_t& rng) {
  const domain::convt_domain& d = models::convt2d_mul_gap_domain();
  mg::problem p{};
  p.batch = draw_from(rng, d.batch);
  p.in_channels = draw_from(rng, d.channels);
  p.out_channels = draw_from(rng, d.channels);
  p.height = draw_from(rng, d.spatial);
  p.width = draw_from(rng, d.spatial);
  p.kernel_size = draw_from(rng, d.kernel);
  p.stride = draw_from(rng, d.stride);
  p.output_padding = rng.range(0, p.stride - 1);
  const int64_t pm = std::min(domain::max_padding(p.height, p.kernel_size, p.stride, p.output_padding),
                              domain::max_padding(p.width, p.kernel_size, p.stride, p.output_padding));
  p.padding = draw_padding(rng, d, p.kernel_size, pm);
  p.multiplier = static_cast<float>(draw_from(rng, d.reals.at(0)));
  return p;
}

tally run(const options& opt, rng_t& rng, cudaStream_t stream) {
  tally t;
  for (int c = 0; c < opt.cases; ++c) run_case(draw(rng), draw_dist(rng), rng, c < 20, false, stream, t);
  if (opt.boundary) {  // the declared boundary set (convt2d_mul_gap_boundary.h)
    const auto set = fb::boundary::convt2d_mul_gap::cases();
    for (std::size_t i = 0; i < set.size(); ++i)
      report_boundary("convt2d_mul_gap", i,
                      run_case(set[i].problem, static_cast<dist>(set[i].inputs), rng, true, false, stream, t));
  }
  if (opt.extra_boundary) {
    // Random planes of 22500-90000 elements: one to three work items (32768 elements) per plane.
    for (int c = 0; c < std::max(1, opt.cases / 20); ++c) {
      mg::problem p = draw(rng);
      p.batch = rng.range(1, 3);
      p.height = rng.range(150, 300);
      p.width = rng.range(150, 300);
      run_case(p, draw_dist(rng), rng, c < 2, false, stream, t);
    }
    // Items of 33 x 29 planes dealt over the resident blocks, beside the set's 8 x 7 ones.
    run_case(mg::problem{40, 61, 37, 33, 29, 3, 2, 1, 1, 0.75f}, dist::normal, rng, true, false, stream, t);
    run_case(mg::problem{40, 61, 37, 33, 29, 5, 3, 4, 2, -1.5f}, dist::offset, rng, false, false, stream, t);
  }
  if (opt.with_default) {
    run_case(mg::problem{16, 64, 128, 128, 128, 3, 2, 1, 1, 0.5f}, dist::uniform, rng, true, opt.bench, stream, t);
    if (opt.bench)  // batch x0.125: what does not scale with the input
      run_case(mg::problem{2, 64, 128, 128, 128, 3, 2, 1, 1, 0.5f}, dist::uniform, rng, false, true, stream, t);
    run_case(mg::problem{16, 64, 128, 128, 128, 3, 2, 1, 1, -0.5f}, dist::offset, rng, false, false, stream, t);
  }
  return t;
}

}  // namespace
}  // namespace fb::selftest

FB_SELFTEST_MODEL("convt2d_mul_gap", fb::selftest::run)

/// Registry entries of the test-only sixth model, test_convt2d_relu (ConvTranspose2d -> ReLU -> * scale,
/// property_tests/sixth_model/reference.h), and of its deliberately wrong twin. This file is its
/// harness/models/<id>.cpp; the last lines are its registry lines, here instead of in
/// harness/model/registry.cpp's built-in list, so that only the test executables that link this file know
/// the model (`fusebench list` does not show it).
#include "harness/detail/fused_adapter.h"
#include "harness/model/registry.h"
#include "harness/model/typed_model.h"
#include "property_tests/sixth_model/domain.h"
#include "property_tests/sixth_model/fused_host.h"
#include "property_tests/sixth_model/reference.h"

namespace fb::models {
namespace {
namespace model = ref::test_convt2d_relu;
using model::config;

sixth_model::problem to_problem(const config& c) {
  return {c.batch_size, c.in_channels, c.out_channels,   c.height, c.width, c.kernel_size,
          c.stride,     c.padding,     c.output_padding, static_cast<float>(c.scale)};
}

// The host "fused" implementation (the model has no CUDA kernel); `wrong` is the bias-after-ReLU slip.
template <bool wrong>
typed_implementation<config> fused_implementation(device_kind device) {
  return detail::fused_implementation<config>(
      device, {"conv_transpose.weight", "conv_transpose.bias"}, [](const config&) { return std::size_t{0}; },
      [](const config& c, const detail::fused_args& a) {
        sixth_model::run_host<wrong>(to_problem(c), a.input, a.params[0], a.params[1], a.output);
      });
}

template <bool wrong>
model_entry make(const char* id, int number, const char* description) {
  typed_model<config> m{id, number, description, test_convt2d_relu_domain(),
                        config_schema<config>({
                            make_field("in_channels", &config::in_channels, "input channels C_in"),
                            make_field("out_channels", &config::out_channels, "output channels C_out"),
                            make_field("kernel_size", &config::kernel_size, "square kernel size k"),
                            make_field("stride", &config::stride, "stride s"),
                            make_field("padding", &config::padding, "padding p"),
                            make_field("output_padding", &config::output_padding, "output padding op (< stride)"),
                            make_field("scale", &config::scale, "scalar after the ReLU"),
                            make_field("batch_size", &config::batch_size, "batch B"),
                            make_field("height", &config::height, "input height H"),
                            make_field("width", &config::width, "input width W"),
                        })};
  use_reference<config>(m,
                        {model::validate, model::input_shape, model::output_shape, model::conv_output_shape,
                         model::make_parameters, model::forward, model::oracle},
                        2);
  m.fused.push_back(fused_implementation<wrong>(device_kind::cpu));
  m.fused_work = [](const config& c) {
    const std::vector<int64_t> out = model::output_shape(c);
    const double x = elements(c.batch_size, c.in_channels, {c.height, c.width});
    const double w = elements(c.in_channels, c.out_channels, {c.kernel_size, c.kernel_size});
    const double y = elements(out[0], out[1], {out[2], out[3]});
    return work_estimate{4.0 * (x + w + c.out_channels + y), 2.0 * x * c.out_channels * c.kernel_size * c.kernel_size};
  };
  m.sweep_variants = [](const config& base) { return batch_variants(base, {{"batch x2", 4}}); };
  // No normalisation: each output element is its own group of the fp64 rule.
  m.allowance_unit = {{}, 1.0, "per element (no normalisation)"};
  return erase(std::move(m));
}

// Numbers outside KernelBench level 2 (1..100): these are no KernelBench problems.
model_entry test_convt2d_relu() {
  return make<false>("test_convt2d_relu", 901, "ConvTranspose2d -> ReLU -> * scale (test-only model)");
}
model_entry test_convt2d_relu_wrong() {
  return make<true>("test_convt2d_relu_wrong", 902,
                    "test_convt2d_relu with a deliberately wrong fused_host: bias added after the ReLU");
}

}  // namespace

// The registry lines.
static const model_registration registered{test_convt2d_relu};
static const model_registration registered_wrong{test_convt2d_relu_wrong};

}  // namespace fb::models

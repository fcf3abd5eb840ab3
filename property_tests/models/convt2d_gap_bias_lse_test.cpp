/// Model-specific property tests of convt2d_gap_bias_lse: its invalid configs, each named in the error. The standard
/// properties every registered model gets are in property_tests/model_properties.cpp.
#include "property_tests/model_properties.h"

// Each row patches the default config into an invalid one; the error must name the field.
TEST(ConvT2dGapBiasLse, InvalidConfigsNameTheField) {
  fb::testing::expect_rejected(fb::find_model("convt2d_gap_bias_lse"), {
                                                         {R"({"kernel_size": 0})", "kernel_size"},
                                                         {R"({"stride": 2})", "stride"},
                                                         {R"({"height": -4})", "height"},
                                                     });
}

/// Property tests of convt2d_gap_bias_lse: the standard properties (model_properties.h) plus its own invalid configs.
#include "property_tests/model_properties.h"

FB_STANDARD_MODEL_PROPERTIES(ConvT2dGapBiasLse, "convt2d_gap_bias_lse")

// Each row patches the default config into an invalid one; the error must name the field.
TEST(ConvT2dGapBiasLse, InvalidConfigsNameTheField) {
  fb::testing::expect_rejected(fb::find_model("convt2d_gap_bias_lse"), {
                                                         {R"({"kernel_size": 0})", "kernel_size"},
                                                         {R"({"stride": 2})", "stride"},
                                                         {R"({"height": -4})", "height"},
                                                     });
}

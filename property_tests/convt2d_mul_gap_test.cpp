/// Property tests of convt2d_mul_gap: the standard properties (model_properties.h) plus its own invalid configs.
#include "property_tests/model_properties.h"

FB_STANDARD_MODEL_PROPERTIES(ConvT2dMulGap, "convt2d_mul_gap")

// Each row patches the default config into an invalid one; the error must name the field.
TEST(ConvT2dMulGap, InvalidConfigsNameTheField) {
  fb::testing::expect_rejected(fb::find_model("convt2d_mul_gap"), {
                                                         {R"({"output_padding": 2, "stride": 2})", "output_padding"},
                                                         {R"({"padding": 70, "height": 3})", "height"},
                                                         {R"({"stride": 0})", "stride"},
                                                         {R"({"bogus_key": 1})", "bogus_key"},
                                                         {R"({"multiplier": "half"})", "multiplier"},
                                                     });
}

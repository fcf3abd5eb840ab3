/// Model-specific property tests of convt2d_mul_gap: its invalid configs, each named in the error. The standard
/// properties every registered model gets are in property_tests/model_properties.cpp.
#include "property_tests/model_properties.h"

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

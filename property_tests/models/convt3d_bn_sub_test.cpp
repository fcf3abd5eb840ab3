/// Model-specific property tests of convt3d_bn_sub: its invalid configs, each named in the error. The standard
/// properties every registered model gets are in property_tests/model_properties.cpp.
#include "property_tests/model_properties.h"

// Each row patches the default config into an invalid one; the error must name the field.
TEST(ConvT3dBnSub, InvalidConfigsNameTheField) {
  fb::testing::expect_rejected(fb::find_model("convt3d_bn_sub"), {
                                                         {R"({"batch_size": 1, "depth": 1, "height": 1, "width": 1, "kernel_size": 1, "stride": 1, "padding": 0, "training": true})", "batch_size"},
                                                         {R"({"padding": 40, "depth": 2})", "depth"},
                                                         {R"({"training": 1})", "training"},
                                                         {R"({"output_padding": 1})", "output_padding"},
                                                     });
}

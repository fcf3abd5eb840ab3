/// Model-specific property tests of convt3d_scale_bn_gap: its invalid configs, each named in the error. The standard
/// properties every registered model gets are in property_tests/model_properties.cpp.
#include "property_tests/model_properties.h"

// Each row patches the default config into an invalid one; the error must name the field.
TEST(ConvT3dScaleBnGap, InvalidConfigsNameTheField) {
  fb::testing::expect_rejected(fb::find_model("convt3d_scale_bn_gap"), {
                                                         {R"({"batch_size": 1, "depth": 1, "height": 1, "width": 1, "kernel_size": 1, "training": true})", "batch_size"},
                                                         {R"({"momentum": 0.0})", "momentum"},
                                                         {R"({"eps": -1.0})", "eps"},
                                                     });
}

/// Property tests of convt3d_scale_bn_gap: the standard properties (model_properties.h) plus its own invalid configs.
#include "property_tests/model_properties.h"

FB_STANDARD_MODEL_PROPERTIES(ConvT3dScaleBnGap, "convt3d_scale_bn_gap")

// Each row patches the default config into an invalid one; the error must name the field.
TEST(ConvT3dScaleBnGap, InvalidConfigsNameTheField) {
  fb::testing::expect_rejected(fb::find_model("convt3d_scale_bn_gap"), {
                                                         {R"({"batch_size": 1, "depth": 1, "height": 1, "width": 1, "kernel_size": 1, "training": true})", "batch_size"},
                                                         {R"({"momentum": 0.0})", "momentum"},
                                                         {R"({"eps": -1.0})", "eps"},
                                                     });
}

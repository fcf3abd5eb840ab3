/// Property tests of convt3d_ln_gelu_scale: the standard properties (model_properties.h) plus its own invalid configs.
#include "property_tests/model_properties.h"

FB_STANDARD_MODEL_PROPERTIES(ConvT3dLnGeluScale, "convt3d_ln_gelu_scale")

// Each row patches the default config into an invalid one; the error must name the field.
TEST(ConvT3dLnGeluScale, InvalidConfigsNameTheField) {
  fb::testing::expect_rejected(fb::find_model("convt3d_ln_gelu_scale"), {
                                                         {R"({"width": 31})", "width"},
                                                         {R"({"eps": 0.0})", "eps"},
                                                         {R"({"out_channels": 0})", "out_channels"},
                                                     });
}

/// Model-specific property tests of convt3d_ln_gelu_scale: its invalid configs, each named in the error. The standard
/// properties every registered model gets are in property_tests/model_properties.cpp.
#include "property_tests/model_properties.h"

// Each row patches the default config into an invalid one; the error must name the field.
TEST(ConvT3dLnGeluScale, InvalidConfigsNameTheField) {
  fb::testing::expect_rejected(fb::find_model("convt3d_ln_gelu_scale"), {
                                                         {R"({"width": 31})", "width"},
                                                         {R"({"eps": 0.0})", "eps"},
                                                         {R"({"out_channels": 0})", "out_channels"},
                                                     });
}

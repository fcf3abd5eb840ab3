/// The registry with the test-only sixth model linked in (property_tests/sixth_model/model.cpp): its
/// registration lines put the test models after the five built-in ones, and make_registry checks
/// every entry, registered or built in, the same way.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "harness/registry.h"

namespace {

TEST(SixthModel, RegisteredAfterTheBuiltInModels) {
  std::vector<std::string> ids;
  for (const fb::model_entry& m : fb::all_models()) ids.push_back(m.id);
  ASSERT_EQ(ids.size(), 7u);
  EXPECT_EQ(ids[0], "convt3d_bn_sub");
  EXPECT_EQ(ids[4], "convt3d_scale_bn_gap");
  EXPECT_EQ(ids[5], "test_convt2d_relu");
  EXPECT_EQ(ids[6], "test_convt2d_relu_wrong");
  EXPECT_EQ(&fb::find_model("901"), &fb::find_model("test_convt2d_relu"));
  EXPECT_EQ(fb::find_model("#902").id, "test_convt2d_relu_wrong");
}

fb::model_entry sixth() { return fb::find_model("test_convt2d_relu"); }
fb::model_entry sixth_renumbered() {
  fb::model_entry e = sixth();
  e.kernelbench_id = 903;
  return e;
}
fb::model_entry sixth_renamed() {
  fb::model_entry e = sixth();
  e.id = "test_convt2d_relu_again";
  return e;
}
fb::model_entry sixth_with_a_bad_default() {
  fb::model_entry e = sixth_renamed();
  e.kernelbench_id = 904;
  e.default_config["output_padding"] = 5;  // >= stride
  return e;
}
fb::model_entry sixth_without_id() {
  fb::model_entry e = sixth();
  e.id.clear();
  return e;
}

std::string registry_error(const std::vector<fb::model_maker>& makers) {
  try {
    (void)fb::make_registry(makers);
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

fb::model_entry sixth_renamed_and_renumbered() {
  fb::model_entry e = sixth_renamed();
  e.kernelbench_id = 905;
  return e;
}

TEST(SixthModel, MakeRegistryChecksEveryEntry) {
  EXPECT_EQ(fb::make_registry({sixth, sixth_renamed_and_renumbered}).size(), 2u);
  EXPECT_EQ(registry_error({sixth, sixth_renumbered}), "model registry: id test_convt2d_relu is registered twice");
  EXPECT_EQ(registry_error({sixth, sixth_renamed}),
            "model registry: test_convt2d_relu_again and test_convt2d_relu share KernelBench number 901");
  EXPECT_EQ(registry_error({sixth_without_id}), "model registry: an entry has no id");
  EXPECT_NE(registry_error({sixth_with_a_bad_default})
                .find("model registry: the default config of test_convt2d_relu_again does not parse: output_padding"),
            std::string::npos);
}

}  // namespace

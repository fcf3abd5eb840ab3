/// The registry with the test-only sixth model linked in (property_tests/sixth_model/model.cpp): its
/// registration lines put the test models after the five built-in ones, make_registry checks every
/// entry, registered or built in, the same way, and the README's fuzz-table check (generators_test)
/// sees the new model: without its row, the table and the registry differ.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/model/fuzz_domain.h"
#include "harness/model/registry.h"
#include "property_tests/readme_domain_table.h"

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

// The README lists the five built-in models only; with the test models registered, the declared
// table is the README's rows followed by theirs, so generators_test's check, run in an executable
// that knows them, would fail on a model added without its row.
TEST(SixthModel, ReadmeTableCheckSeesTheRegisteredModel) {
  const std::optional<std::string> readme = fb::readme::domain_table_rows(FUSEBENCH_SOURCE_DIR "/README.md");
  ASSERT_TRUE(readme) << "README.md has no fuzz-domain table";
  const std::string declared = fb::readme::declared_domain_table_rows(fb::all_models());
  const fb::model_entry& model = fb::find_model("test_convt2d_relu");
  const std::string row = fb::domain::table_row(model.id, model.kernelbench_id, model.fuzz_domain) + "\n";
  EXPECT_NE(declared.find(row), std::string::npos) << declared;
  EXPECT_EQ(readme->find(row), std::string::npos) << "README.md lists the test-only model";
  EXPECT_NE(*readme, declared);
  EXPECT_EQ(declared.substr(0, readme->size()), *readme) << "the built-in rows come first, as in the README";
}

}  // namespace

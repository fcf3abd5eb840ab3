/// verify's accounting of cases that got no verdict: a case that was not judged (not run, not
/// supported, an invalid config) is counted "not judged" in the table, the totals, `--json` and
/// JUnit, never as passed, and it fails the run (exit 1), as does a run that judged nothing or an
/// incomplete report. Mutants of these counts (mutation/catalogue.json) must fail a test here.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "harness/verify/verify_report.h"

namespace fb {
namespace {

/// A fuzz report of one model with `cases_per_model` case indices, none recorded yet.
verify_report empty_run(int cases_per_model) {
  verify_report r;
  r.device = "cpu";
  r.seed = 1;
  r.atol = r.rtol = 1e-5;
  r.scope.device = "cpu";
  r.scope.models = {"convt2d_mul_gap"};
  r.scope.cases_per_model = cases_per_model;
  return r;
}

/// Records case `index` of the fused implementation with outcome `result`.
void add_case(verify_report& r, int index, outcome result) {
  check_result check;
  check.result = result;
  const bool judged = result == outcome::passed || result == outcome::incorrect;
  check.rule = judged ? verdict_rule::fp32_reference : verdict_rule::none;
  if (result != outcome::passed) check.message = std::string(to_string(result)) + " planted";
  verify_case_record record{"convt2d_mul_gap", "fused_host", index, json{{"batch_size", 1}}, 7, "uniform",
                            "random", result, check.rule, check.message, 0.0, 0.0, 0.25, "", ""};
  r.add(record, check, "reference (fp32/fp64)");
}

int exit_status(const verify_report& r, std::string* printed = nullptr) {
  std::ostringstream out;
  const int status = print_verdict(r, out);
  if (printed != nullptr) *printed = out.str();
  return status;
}

TEST(verify_accounting, a_case_without_verdict_is_not_judged_never_passed) {
  verify_report r = empty_run(3);
  add_case(r, 0, outcome::passed);
  add_case(r, 1, outcome::not_run);
  add_case(r, 2, outcome::not_supported);
  const verify_row& row = r.rows.at({"convt2d_mul_gap", "fused_host"});
  EXPECT_EQ(row.passed, 1);
  EXPECT_EQ(row.not_judged, 2);
  EXPECT_EQ(row.judged(), 1);
  EXPECT_EQ(row.by_rule.at(verdict_rule::fp32_reference), 1) << "only a case with a verdict counts by rule";
  const verify_row totals = r.totals();
  EXPECT_EQ(totals.passed, 1);
  EXPECT_EQ(totals.not_judged, 2);
  std::ostringstream table;
  print_verify_table(r, table, /*wide=*/true);
  EXPECT_NE(table.str().find("verify: 3 verdicts on 3 cases: 1 passed, 0 failed (0 incorrect, 0 errors), 2 not judged"),
            std::string::npos)
      << table.str();
  // cases, passed, incorrect, failed, not judged, declined, by fp32 ref
  EXPECT_NE(table.str().find("| convt2d_mul_gap | fused_host | reference (fp32/fp64) | 3 | 1 | 0 | 0 | 2 | 0 | 1 |"),
            std::string::npos)
      << table.str();
}

// A case an outside plug-in declined (its own limits): its own column, never passed, never "not judged";
// the run's verdict is that of the cases judged, unless a row declined everything.
TEST(verify_accounting, a_declined_case_is_counted_and_shown_never_passed) {
  verify_report r = empty_run(3);
  add_case(r, 0, outcome::passed);
  add_case(r, 1, outcome::declined);
  add_case(r, 2, outcome::declined);
  const verify_row& row = r.rows.at({"convt2d_mul_gap", "fused_host"});
  EXPECT_EQ(row.passed, 1);
  EXPECT_EQ(row.declined, 2);
  EXPECT_EQ(row.not_judged, 0);
  EXPECT_EQ(row.cases(), 3);
  EXPECT_EQ(r.totals().declined, 2);
  std::ostringstream table, wide;
  print_verify_table(r, table);
  print_verify_table(r, wide, true);
  EXPECT_NE(wide.str().find("| 3 | 1 | 0 | 0 | 0 | 2 | 1 |"), std::string::npos) << wide.str();
  // The default table shows the declined column where a plug-in declined something.
  EXPECT_NE(table.str().find("declined"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("       2  "), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("2 declined by a plug-in (not passed)"), std::string::npos) << table.str();
  EXPECT_EQ(verify_report_to_json(r).at("totals").at("declined"), 2);
  EXPECT_EQ(verify_report_to_json(r).at("rows").at(0).at("passed"), 1);
  EXPECT_EQ(exit_status(r), 0) << "what the plug-in took passed";

  verify_report all_declined = empty_run(1);
  add_case(all_declined, 0, outcome::declined);
  all_declined.rows[{"convt2d_mul_gap", "reference"}].passed = 1;  // something else was judged
  std::string printed;
  EXPECT_EQ(exit_status(all_declined, &printed), 1);
  EXPECT_NE(printed.find("declined every case"), std::string::npos) << printed;
}

TEST(verify_accounting, a_run_with_a_case_not_judged_exits_1) {
  verify_report all_passed = empty_run(2);
  add_case(all_passed, 0, outcome::passed);
  add_case(all_passed, 1, outcome::passed);
  EXPECT_EQ(exit_status(all_passed), 0);
  verify_report one_skipped = empty_run(2);
  add_case(one_skipped, 0, outcome::passed);
  add_case(one_skipped, 1, outcome::not_run);
  EXPECT_EQ(exit_status(one_skipped), 1) << "a case that was not judged was not shown correct";
  verify_report one_failed = empty_run(2);
  add_case(one_failed, 0, outcome::passed);
  add_case(one_failed, 1, outcome::failed);
  EXPECT_EQ(exit_status(one_failed), 1);
}

TEST(verify_accounting, an_incomplete_report_exits_1_even_if_all_it_holds_passed) {
  verify_report r = empty_run(2);
  add_case(r, 0, outcome::passed);
  add_case(r, 1, outcome::passed);
  r.complete = false;
  r.incomplete_reason = "merged without shard 2/2";
  std::string printed;
  EXPECT_EQ(exit_status(r, &printed), 1);
  EXPECT_EQ(printed, "verify: INCOMPLETE: merged without shard 2/2\n");
}

TEST(verify_accounting, a_run_that_judged_nothing_exits_1) {
  std::string printed;
  EXPECT_EQ(exit_status(empty_run(2), &printed), 1);
  EXPECT_EQ(printed, "verify: nothing was judged\n");
  verify_report only_skipped = empty_run(1);
  add_case(only_skipped, 0, outcome::invalid_config);
  EXPECT_EQ(exit_status(only_skipped, &printed), 1);
}

TEST(verify_accounting, json_and_junit_show_a_case_not_judged_as_skipped) {
  verify_report r = empty_run(3);
  add_case(r, 0, outcome::passed);
  add_case(r, 1, outcome::not_run);
  add_case(r, 2, outcome::incorrect);
  const json doc = verify_report_to_json(r);
  EXPECT_EQ(doc.at("totals"),
            (json{{"cases", 3}, {"passed", 1}, {"incorrect", 1}, {"failed", 0}, {"not_judged", 1}, {"declined", 0}}));
  EXPECT_EQ(doc.at("rows").at(0).at("not_judged"), 1);
  EXPECT_EQ(doc.at("rows").at(0).at("passed"), 1);
  EXPECT_EQ(doc.at("cases").at(1).at("outcome"), "not_run");

  std::ostringstream junit;
  write_junit(r, junit);
  const std::string xml = junit.str();
  EXPECT_NE(xml.find("<testsuites name=\"fusebench verify\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testsuite name=\"convt2d_mul_gap\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""),
            std::string::npos)
      << xml;
  // The case not judged is a <skipped/> testcase, never a bare (passed) one.
  const std::size_t skipped_case = xml.find("/case 1\"");
  ASSERT_NE(skipped_case, std::string::npos) << xml;
  const std::size_t end = xml.find("</testcase>", skipped_case);
  const std::size_t next = xml.find("<testcase", skipped_case);
  ASSERT_NE(end, std::string::npos) << "case 1 is written as a passed (self-closing) testcase:\n" << xml;
  EXPECT_LT(end, next) << xml;
  EXPECT_NE(xml.substr(skipped_case, end - skipped_case).find("<skipped message=\"not_run planted\"/>"),
            std::string::npos)
      << xml;
}

TEST(verify_accounting, junit_shows_a_declined_case_as_skipped_never_as_a_green_testcase) {
  // A plug-in's declined case (issue 40): CI reads a testcase without <skipped/> as passed.
  verify_report r = empty_run(3);
  add_case(r, 0, outcome::passed);
  add_case(r, 1, outcome::declined);
  add_case(r, 2, outcome::declined);
  std::ostringstream junit;
  write_junit(r, junit);
  const std::string xml = junit.str();
  EXPECT_NE(xml.find("<testsuites name=\"fusebench verify\" tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"2\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testsuite name=\"convt2d_mul_gap\" tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"2\""),
            std::string::npos)
      << xml;
  for (const char* name : {"/case 1\"", "/case 2\""}) {
    const std::size_t at = xml.find(name);
    ASSERT_NE(at, std::string::npos) << xml;
    const std::size_t end = xml.find("</testcase>", at);
    ASSERT_NE(end, std::string::npos) << xml;
    EXPECT_NE(xml.substr(at, end - at).find("<skipped message=\"declined planted\"/>"), std::string::npos)
        << name << " is written as a passed testcase:\n"
        << xml;
  }
  // The passed case stays a plain testcase.
  const std::size_t passed = xml.find("/case 0\"");
  ASSERT_NE(passed, std::string::npos) << xml;
  EXPECT_EQ(xml.substr(passed, xml.find("</testcase>", passed) - passed).find("<skipped"), std::string::npos) << xml;
}

// Issue 25, finding 9: the default table is aligned, fits 120 columns and has a legend; its count
// says cases (a case checked for two implementations is one case, two verdicts).
TEST(verify_table, the_default_table_fits_120_columns_and_counts_cases_not_rows) {
  verify_report r = empty_run(2);
  add_case(r, 0, outcome::passed);
  add_case(r, 1, outcome::passed);
  check_result ok;
  ok.result = outcome::passed;
  ok.rule = verdict_rule::fp64_oracle;
  for (int i = 0; i < 2; ++i)
    r.add({"convt2d_mul_gap", "reference_semantics_of_a_long_name", i, json{{"batch_size", 1}}, 7, "uniform", "random",
           outcome::passed, ok.rule, "", 0.0, 0.0, 0.25, "", ""},
          ok, "fp64 oracle");
  std::ostringstream table;
  print_verify_table(r, table);
  const std::string text = table.str();
  std::istringstream lines(text);
  int table_lines = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("verify: ", 0) == 0) continue;  // the summary sentence wraps in the terminal like prose
    EXPECT_LE(line.size(), 120u) << line;
    table_lines += line.find("convt2d_mul_gap") == 0;
  }
  EXPECT_EQ(table_lines, 2) << text;
  EXPECT_NE(text.find("\nlegend: "), std::string::npos) << text;
  EXPECT_EQ(text.find("| model |"), std::string::npos) << "the Markdown table is --wide's:\n" << text;
  EXPECT_NE(text.find("verify: 4 verdicts on 2 cases: 4 passed"), std::string::npos) << text;
  std::ostringstream wide;
  print_verify_table(r, wide, true);
  EXPECT_NE(wide.str().find("| model | implementation | checked against |"), std::string::npos) << wide.str();
}

// Issue 25, finding 5: an interrupted run's JUnit is valid and says it is incomplete, as an error a CI
// system shows, so that a run stopped after its first case never reads as green.
TEST(verify_accounting, an_incomplete_report_is_an_error_in_junit) {
  verify_report r = empty_run(3);
  add_case(r, 0, outcome::passed);
  r.complete = false;
  r.incomplete_reason = "stopped by SIGINT after 1 of 3 planned cases";
  std::ostringstream junit;
  write_junit(r, junit);
  const std::string xml = junit.str();
  EXPECT_NE(xml.find("<testsuites name=\"fusebench verify\" tests=\"2\" failures=\"0\" errors=\"1\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<error message=\"INCOMPLETE: stopped by SIGINT after 1 of 3 planned cases\">"), std::string::npos)
      << xml;
  EXPECT_EQ(verify_report_to_json(r).at("complete"), false);
}

// Issue 25, finding 10: seeds are written as decimal strings (exact in jq and JavaScript, which read
// numbers as doubles) and read back from strings or, in older files, numbers; nothing else.
TEST(verify_accounting, seeds_are_decimal_strings_in_json_and_numbers_still_read) {
  verify_report r = empty_run(1);
  r.seed = 18446744073709551615ull;
  add_case(r, 0, outcome::passed);
  r.cases.back().case_seed = 9007199254740993ull;  // 2^53 + 1: a double rounds it
  json doc = verify_report_to_json(r);
  EXPECT_EQ(doc.at("seed"), "18446744073709551615");
  EXPECT_EQ(doc.at("cases").at(0).at("case_seed"), "9007199254740993");
  EXPECT_EQ(verify_report_from_json(doc, "x").cases.at(0).case_seed, 9007199254740993ull);
  doc["seed"] = 42;  // an older file
  doc["cases"][0]["case_seed"] = 9007199254740993ull;
  const verify_report old = verify_report_from_json(doc, "x");
  EXPECT_EQ(old.seed, 42u);
  EXPECT_EQ(old.cases.at(0).case_seed, 9007199254740993ull);
  for (const json& bad : {json("-1"), json("1e3"), json(" 7"), json("18446744073709551616"), json(-1), json(1.5)}) {
    doc["seed"] = bad;
    EXPECT_THROW((void)verify_report_from_json(doc, "x"), std::invalid_argument) << bad.dump();
  }
}

}  // namespace
}  // namespace fb

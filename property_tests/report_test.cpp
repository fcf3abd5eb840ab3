/// `report`: the fixture renders to the golden Markdown byte for byte, failing cases never show a
/// speedup, the CSV has its columns, the charts are drawn (or skipped without gnuplot), and bad
/// input exits 2.
///
/// To regenerate the golden after an intended change of the Markdown, run
///   FUSEBENCH_UPDATE_GOLDEN=1 ./build/reporting/property_tests/reporting_test --gtest_filter='report.markdown_matches_golden'
/// then review `git diff property_tests/fixtures/report_golden.md` before committing it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

#include "harness/cli/reporting_commands.h"
#include "harness/printers/chart_printer.h"
#include "harness/printers/csv_printer.h"
#include "harness/printers/markdown_printer.h"
#include "harness/printers/printer_multiplex.h"
#include "harness/report/report_model.h"
#include "harness/results/results.h"
#include "harness/stats/summary.h"

namespace {

using namespace fb;
namespace fs = std::filesystem;

const fs::path fixture_dir = FUSEBENCH_FIXTURE_DIR;
const fs::path fixture = fixture_dir / "results_fixture.json";
const fs::path golden = fixture_dir / "report_golden.md";

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string render_markdown(const report::report_model& model) {
  std::ostringstream out;
  printers::markdown_printer(out).print_report(model);
  return out.str();
}

/// The lines of `text` that contain `needle`.
std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) found.push_back(line);
  return found;
}

/// RFC 4180 split of one CSV line (enough for the test: no newlines inside fields).
std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted && ch == '"' && i + 1 < line.size() && line[i + 1] == '"') fields.back() += '"', ++i;
    else if (ch == '"') quoted = !quoted;
    else if (ch == ',' && !quoted) fields.emplace_back();
    else fields.back() += ch;
  }
  return fields;
}

class temp_folder : public testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("fusebench_report_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
             std::to_string(::getpid()));
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }
  fs::path m_dir;
};

TEST(report, markdown_matches_golden) {
  const std::string rendered = render_markdown(report::build_report_model(load_results(fixture)));
  if (std::getenv("FUSEBENCH_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden, std::ios::binary | std::ios::trunc) << rendered;
    std::cout << "updated " << golden << "\n";
  }
  EXPECT_EQ(rendered, read_text(golden)) << "regenerate with FUSEBENCH_UPDATE_GOLDEN=1 (see the top of this file)";
}

TEST(report, model_groups_sorts_and_decides_statuses) {
  const report::report_model m = report::build_report_model(load_results(fixture));
  ASSERT_EQ(m.models.size(), 5u);
  const int ids[] = {15, 34, 42, 44, 77};
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(m.models[i].kernelbench_id, ids[i]);

  const report::model_report& mul_gap = m.models[3];
  ASSERT_EQ(mul_gap.rows.size(), 3u);
  EXPECT_EQ(mul_gap.rows[0].config_label, "batch x0.5");  // by problem size, not by name
  EXPECT_EQ(mul_gap.rows[2].config_label, "batch x2");
  const report::fused_entry& e = mul_gap.get_default_row()->fused.at(0);
  EXPECT_EQ(e.status, report::fused_status::ok);
  ASSERT_TRUE(e.vs_ref.has_value());
  EXPECT_DOUBLE_EQ(e.vs_ref->ratio, mul_gap.get_default_row()->ref->stats->median / e.cell.stats->median);
  EXPECT_LT(e.vs_ref->low, e.vs_ref->ratio);
  EXPECT_GT(e.vs_ref->high, e.vs_ref->ratio);

  // #42 batch x2 is below its floor; #77's fused implementation is incorrect.
  EXPECT_EQ(m.models[2].rows.back().fused.at(0).status, report::fused_status::impossible);
  const report::fused_entry& failing = m.models[4].get_default_row()->fused.at(0);
  EXPECT_EQ(failing.status, report::fused_status::fail);
  EXPECT_FALSE(failing.vs_ref.has_value());
  EXPECT_FALSE(failing.vs_ref_tf32.has_value());
  EXPECT_TRUE(m.models[0].fused_implementations.empty());  // #15 is reference-only

  // Geometric mean over the models whose default fused case is ok: #42 and #44, not #77.
  ASSERT_EQ(m.geomeans.size(), 1u);
  EXPECT_EQ(m.geomeans[0].models_vs_ref, 2);
  const double r42 = m.models[2].get_default_row()->fused[0].vs_ref->ratio;
  const double r44 = e.vs_ref->ratio;
  EXPECT_NEAR(*m.geomeans[0].vs_ref, std::sqrt(r42 * r44), 1e-12);
}

TEST(report, a_failing_case_never_shows_a_speedup) {
  const std::string md = render_markdown(report::build_report_model(load_results(fixture)));
  const auto rows = lines_with(md, "| convt3d_scale_bn_gap | 77 | fused_cuda |");
  ASSERT_EQ(rows.size(), 1u) << md;
  EXPECT_NE(rows[0].find("FAIL (incorrect)"), std::string::npos) << rows[0];
  EXPECT_EQ(rows[0].find("×"), std::string::npos) << rows[0];
  EXPECT_EQ(rows[0].find("1.10 ms"), std::string::npos) << "a failing case's time is shown: " << rows[0];
  EXPECT_NE(md.find("- `default` fused_cuda: incorrect: values: max abs error 3.1e-03"), std::string::npos);
  // Reference-only models: reference times, and a dash for every speedup.
  const auto ref_only = lines_with(md, "| convt3d_bn_sub | 15 |");
  ASSERT_EQ(ref_only.size(), 1u);
  EXPECT_NE(ref_only[0].find("| 3.88 ms | 1.86 ms | — | — | — | — | reference only |"), std::string::npos) << ref_only[0];
}

TEST(report, a_case_not_run_is_skip_never_ok_and_shows_no_speedup) {
  // #44's default fused case skipped (it did not fit): SKIP, no speedup, out of the geometric mean,
  // whether or not the file holds a stray timing for it.
  for (const bool stray_timing : {false, true}) {
    results_file results = load_results(fixture);
    bool found = false;
    for (case_result& c : results.cases)
      if (c.model == "convt2d_mul_gap" && c.config_label == "default" && c.implementation == "fused_cuda") {
        c.outcome = outcome::not_run;
        c.message = "does not fit in cuda memory";
        if (!stray_timing) c.stats.reset();
        found = true;
      }
    ASSERT_TRUE(found) << "the fixture no longer has convt2d_mul_gap/default/fused_cuda";
    const report::report_model m = report::build_report_model(results);
    const report::fused_entry& e = m.models[3].get_default_row()->fused.at(0);
    EXPECT_EQ(e.status, report::fused_status::skipped) << "stray timing " << stray_timing;
    EXPECT_FALSE(e.vs_ref.has_value());
    EXPECT_FALSE(e.vs_ref_tf32.has_value());
    EXPECT_EQ(m.geomeans.at(0).models_vs_ref, 1) << "only #42 is left in the geometric mean";
  }
}

TEST(report, csv_has_one_row_per_case_and_all_columns) {
  const results_file results = load_results(fixture);
  std::ostringstream out;
  printers::csv_printer(out).print_report(report::build_report_model(results));
  std::istringstream in(out.str());
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header,
            "model,kernelbench_id,config_label,problem_size,implementation,outcome,status,median_s,p10_s,p90_s,mean_s,"
            "stdev_s,n,floor_bytes,floor_flops,floor_s,time_over_floor,impossible,speedup_vs_ref,speedup_vs_ref_low,"
            "speedup_vs_ref_high,speedup_vs_ref_tf32,speedup_vs_ref_tf32_low,speedup_vs_ref_tf32_high,max_abs_error,"
            "max_err_over_tol,decided_by,message,config,run_complete");
  const std::vector<std::string> columns = csv_split(header);
  const auto col = [&](const char* name) {
    return static_cast<std::size_t>(std::find(columns.begin(), columns.end(), name) - columns.begin());
  };
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(csv_split(line));
  ASSERT_EQ(rows.size(), results.cases.size());
  for (const auto& r : rows) ASSERT_EQ(r.size(), columns.size()) << fmt::format("{}", fmt::join(r, "|"));

  const auto find_row = [&](const char* model, const char* label, const char* impl) -> const std::vector<std::string>& {
    for (const auto& r : rows)
      if (r[col("model")] == model && r[col("config_label")] == label && r[col("implementation")] == impl) return r;
    throw std::runtime_error("row not found");
  };
  const auto& ok = find_row("convt2d_mul_gap", "default", "fused_cuda");
  EXPECT_EQ(ok[col("outcome")], "passed");
  EXPECT_EQ(ok[col("status")], "ok");
  EXPECT_EQ(ok[col("n")], "12");
  const case_result* source = nullptr;
  for (const case_result& c : results.cases)
    if (c.model == "convt2d_mul_gap" && c.config_label == "default" && c.implementation == "fused_cuda") source = &c;
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(std::stod(ok[col("median_s")]), source->stats->median);  // full precision, seconds
  // time / floor, never a percentage that reads as if the time were below the floor.
  EXPECT_EQ(std::stod(ok[col("time_over_floor")]), source->stats->median / source->floor->floor_seconds);
  EXPECT_GT(std::stod(ok[col("time_over_floor")]), 1.0);
  EXPECT_EQ(ok[col("run_complete")], "true");
  EXPECT_EQ(ok[col("decided_by")], "");  // version 1 file: not recorded
  EXPECT_GT(std::stod(ok[col("speedup_vs_ref")]), 10.0);
  EXPECT_EQ(ok[col("config")].front(), '{');

  const auto& failing = find_row("convt3d_scale_bn_gap", "default", "fused_cuda");
  EXPECT_EQ(failing[col("outcome")], "incorrect");
  EXPECT_EQ(failing[col("status")], "FAIL");
  EXPECT_EQ(failing[col("speedup_vs_ref")], "");
  EXPECT_EQ(failing[col("message")],
            "values: max abs error 3.1e-03 at [2, 17, 0, 0, 0] exceeds atol + rtol*|ref| = 1.0e-05");  // commas survive quoting

  const auto& oom = find_row("convt3d_ln_gelu_scale", "batch x2", "ref");
  EXPECT_EQ(oom[col("outcome")], "failed");
  EXPECT_EQ(oom[col("median_s")], "");
  EXPECT_EQ(oom[col("max_abs_error")], "");  // null in the file: unknown, not 0
  EXPECT_EQ(oom[col("status")], "");         // references have no fused status
}

TEST_F(temp_folder, charts_are_drawn_with_gnuplot) {
  if (::access("/usr/bin/gnuplot", X_OK) != 0 && std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "gnuplot is not installed here";
  std::ostringstream warnings;
  printers::chart_printer charts(m_dir, warnings);
  charts.print_report(report::build_report_model(load_results(fixture)));
  EXPECT_EQ(warnings.str(), "");
  std::vector<std::string> expected{"speedup.png"};
  for (const char* model : {"convt3d_bn_sub", "convt3d_ln_gelu_scale", "convt2d_gap_bias_lse", "convt2d_mul_gap",
                            "convt3d_scale_bn_gap"})
    expected.push_back(fmt::format("time_vs_size_{}.png", model));
  ASSERT_EQ(charts.get_charts().size(), expected.size());
  for (const std::string& name : expected) {
    const std::string png = read_text(m_dir / name);
    ASSERT_GT(png.size(), 1000u) << name;
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << name;
  }
  // The failing #77 fused case and the IMPOSSIBLE #42 one are not drawn as results.
  EXPECT_EQ(read_text(m_dir / "speedup.dat").find("convt3d_scale_bn_gap"), std::string::npos);
  EXPECT_EQ(read_text(m_dir / "time_vs_size_convt3d_scale_bn_gap.dat").find("fused_cuda"), std::string::npos);
  EXPECT_EQ(lines_with(read_text(m_dir / "time_vs_size_convt2d_gap_bias_lse.dat"), "# fused_cuda").size(), 1u);
}

TEST_F(temp_folder, without_gnuplot_charts_are_skipped_with_one_warning) {
  std::ostringstream warnings;
  printers::chart_printer charts(m_dir, warnings, "/nonexistent/gnuplot");
  EXPECT_NO_THROW(charts.print_report(report::build_report_model(load_results(fixture))));
  EXPECT_TRUE(charts.get_charts().empty());
  EXPECT_EQ(charts.get_scripts().size(), 6u);  // the scripts are still written, to draw later
  const std::string warning = warnings.str();
  EXPECT_EQ(warning.rfind("fusebench: warning: gnuplot not found", 0), 0u) << warning;
  EXPECT_EQ(std::count(warning.begin(), warning.end(), '\n'), 1);
  EXPECT_FALSE(fs::exists(m_dir / "speedup.png"));
}

TEST_F(temp_folder, multiplex_feeds_every_printer) {
  std::ostringstream md;
  std::ostringstream csv;
  printers::printer_multiplex all;
  all.add_printer(std::make_unique<printers::markdown_printer>(md));
  all.add_printer(std::make_unique<printers::csv_printer>(csv));
  EXPECT_EQ(all.get_printer_count(), 2u);
  all.print_report(report::build_report_model(load_results(fixture)));
  EXPECT_EQ(md.str(), read_text(golden));
  EXPECT_EQ(csv.str().rfind("model,kernelbench_id,", 0), 0u);
}

TEST_F(temp_folder, run_report_writes_the_requested_formats) {
  cli::report_options o;
  o.results = fixture;
  o.out_dir = m_dir / "out";
  o.formats = {"md", "csv"};
  testing::internal::CaptureStdout();
  EXPECT_EQ(cli::run_report(o), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("report.md"), std::string::npos);
  EXPECT_EQ(read_text(o.out_dir / "report.md"), read_text(golden));
  EXPECT_TRUE(fs::exists(o.out_dir / "report.csv"));
  EXPECT_FALSE(fs::exists(o.out_dir / "charts"));  // not requested
}

TEST_F(temp_folder, run_report_exits_2_on_bad_input) {
  cli::report_options o;
  o.out_dir = m_dir / "out";
  const std::pair<std::string, std::string> cases[] = {
      {"{\"schema\": \"fusebench-results\", \"version\": 1, \"environment\": {", "is not valid JSON"},
      {"{\"schema\": \"fusebench-results\", \"version\": 0}", "version 0 is not supported"},
      {"{\"schema\": \"fusebench-results\", \"version\": 1, \"environment\": {}, \"cases\": []}",
       "field environment.device is missing"},
  };
  for (const auto& [text, expected] : cases) {
    o.results = m_dir / "bad.json";
    std::ofstream(o.results, std::ios::binary | std::ios::trunc) << text;
    testing::internal::CaptureStderr();
    EXPECT_EQ(cli::run_report(o), 2);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.rfind("fusebench: error: results file '", 0), 0u) << err;
    EXPECT_NE(err.find(expected), std::string::npos) << err;
  }
  o.results = m_dir / "absent.json";
  testing::internal::CaptureStderr();
  EXPECT_EQ(cli::run_report(o), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("does not exist"), std::string::npos);
  o.results = fixture;
  o.formats = {"pdf"};
  testing::internal::CaptureStderr();
  EXPECT_EQ(cli::run_report(o), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("unknown format 'pdf'"), std::string::npos);
}

/// The fixture as an interrupted run: what every output says about it.
results_file interrupted_fixture() {
  results_file r = load_results(fixture);
  r.status.complete = false;
  r.status.incomplete_reason = "interrupted by SIGINT after 26 of 40 cases";
  r.status.planned_cases = 40;
  return r;
}

TEST(report, an_incomplete_run_is_marked_on_every_output) {
  const report::report_model model = report::build_report_model(interrupted_fixture());
  const std::string md = render_markdown(model);
  EXPECT_EQ(md.rfind("# fusebench report\n\n> **INCOMPLETE RUN: interrupted by SIGINT after 26 of 40 cases.** This "
                     "report shows only the cases that finished",
                     0),
            0u)
      << md.substr(0, 300);
  std::ostringstream csv;
  printers::csv_printer(csv).print_report(model);
  const std::string text = csv.str();
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(csv_split(line).back(), "run_complete");
  int rows = 0;
  for (; std::getline(lines, line); ++rows) EXPECT_EQ(csv_split(line).back(), "false") << line;
  EXPECT_EQ(rows, 26);
  // A complete run has no banner.
  EXPECT_EQ(render_markdown(report::build_report_model(load_results(fixture))).find("INCOMPLETE"), std::string::npos);
}

TEST_F(temp_folder, an_incomplete_run_is_named_in_every_chart_title) {
  std::ostringstream warnings;
  printers::chart_printer charts(m_dir, warnings, "/nonexistent/gnuplot");  // the scripts are enough
  charts.print_report(report::build_report_model(interrupted_fixture()));
  ASSERT_EQ(charts.get_scripts().size(), 6u);
  for (const fs::path& script : charts.get_scripts())
    EXPECT_NE(read_text(script).find("set title 'INCOMPLETE RUN: interrupted by SIGINT after 26 of 40 cases | "),
              std::string::npos)
        << script;
}

TEST_F(temp_folder, time_charts_draw_the_roofline_floor) {
  std::ostringstream warnings;
  printers::chart_printer charts(m_dir, warnings, "/nonexistent/gnuplot");
  charts.print_report(report::build_report_model(load_results(fixture)));
  const std::string data = read_text(m_dir / "time_vs_size_convt2d_mul_gap.dat");
  ASSERT_EQ(lines_with(data, "# roofline floor").size(), 1u) << data;
  const std::string script = read_text(m_dir / "time_vs_size_convt2d_mul_gap.gp");
  EXPECT_NE(script.find("title 'roofline floor (fused algorithm)'"), std::string::npos) << script;
  // Reference-only models have no floor to draw.
  EXPECT_TRUE(lines_with(read_text(m_dir / "time_vs_size_convt3d_bn_sub.dat"), "roofline").empty());
}

TEST_F(temp_folder, the_speedup_chart_plots_only_the_series_it_has) {
  results_file r = load_results(fixture);
  r.cases.erase(std::remove_if(r.cases.begin(), r.cases.end(),
                               [](const case_result& c) { return c.implementation == "ref_tf32"; }),
                r.cases.end());  // a CPU run: no TF32 reference
  std::ostringstream warnings;
  printers::chart_printer charts(m_dir, warnings, "/nonexistent/gnuplot");
  charts.print_report(report::build_report_model(r));
  const std::string script = read_text(m_dir / "speedup.gp");
  EXPECT_NE(script.find("title 'vs ref (fp32, TF32 off)'"), std::string::npos) << script;
  EXPECT_EQ(script.find("vs ref_tf32"), std::string::npos) << "an empty series makes gnuplot warn: " << script;
}

TEST(report, a_scaled_default_counts_as_the_default) {
  results_file r = load_results(fixture);
  for (case_result& c : r.cases)
    if (c.config_label == "default") c.config_label = "default/cpu-small";
  const report::report_model model = report::build_report_model(r);
  for (const report::model_report& m : model.models) {
    ASSERT_NE(m.get_default_row(), nullptr) << m.model;
    EXPECT_EQ(m.get_default_row()->config_label, "default/cpu-small");
  }
  ASSERT_EQ(model.geomeans.size(), 1u);
  EXPECT_EQ(model.geomeans[0].models_vs_ref, 2);  // the speedups of the scaled defaults count
  const std::string md = render_markdown(model);
  EXPECT_NE(md.find("## Summary (config `default/cpu-small`)"), std::string::npos);
  EXPECT_EQ(md.find("no default config"), std::string::npos) << md;
  EXPECT_TRUE(report::is_default_label("default"));
  EXPECT_TRUE(report::is_default_label("default/cpu-small"));
  EXPECT_FALSE(report::is_default_label("defaults"));
  EXPECT_FALSE(report::is_default_label("batch x2/cpu-small"));
}

TEST(report, verdict_rules_are_counted_per_fused_case) {
  results_file r = load_results(fixture);
  int fused = 0;
  for (case_result& c : r.cases)
    if (report::is_fused_implementation(c.implementation))
      c.decided_by = fused++ % 2 == 0 ? verdict_rule::fp32_reference : verdict_rule::fp64_allowance;
  ASSERT_EQ(fused, 6);
  r.cases[0].tolerance_ratio = 0.25;
  const report::report_model model = report::build_report_model(r);
  int counted = 0;
  for (const report::rule_count& rule : model.rules) counted += rule.cases;
  EXPECT_EQ(counted, fused) << "ref and ref_tf32 rows are timed, not judged: no rule counts them";
  const std::string md = render_markdown(model);
  EXPECT_NE(md.find("| decided by | fused cases |\n| --- | --: |\n| `fp32_reference` | 3 |\n| `fp64_allowance` | 3 |\n\n"),
            std::string::npos)
      << md;
}

TEST_F(temp_folder, run_report_renders_all_or_nothing_and_links_its_charts) {
  if (::access("/usr/bin/gnuplot", X_OK) != 0 && std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "gnuplot is not installed here";
  cli::report_options o;
  o.results = fixture;
  o.out_dir = m_dir / "out";
  // An earlier render left a chart this one does not draw, and a file of the user's.
  fs::create_directories(o.out_dir / "charts");
  std::ofstream(o.out_dir / "charts" / "time_vs_size_removed_model.png") << "stale";
  std::ofstream(o.out_dir / "NOTES.md") << "mine";
  testing::internal::CaptureStdout();
  ASSERT_EQ(cli::run_report(o), 0);
  (void)testing::internal::GetCapturedStdout();
  EXPECT_FALSE(fs::exists(o.out_dir / "charts" / "time_vs_size_removed_model.png")) << "a stale chart survived";
  EXPECT_EQ(read_text(o.out_dir / "NOTES.md"), "mine");
  const std::string md = read_text(o.out_dir / "report.md");
  EXPECT_NE(md.find("![fused speedup over libtorch](charts/speedup.png)"), std::string::npos) << md;
  EXPECT_NE(md.find("![convt2d_mul_gap: median time vs problem size](charts/time_vs_size_convt2d_mul_gap.png)"),
            std::string::npos);
  for (const fs::directory_entry& e : fs::directory_iterator(o.out_dir))
    EXPECT_NE(e.path().filename().string().rfind(".fusebench-report", 0), 0u) << "staging folder left behind";

  // gnuplot failing: exit 2 and the previous render stays exactly as it was.
  const std::string before = read_text(o.out_dir / "report.md");
  results_file other = load_results(fixture);
  other.environment.git_commit = "another";
  save_results(other, m_dir / "other.json");
  o.results = m_dir / "other.json";
  o.gnuplot = "/bin/false";
  testing::internal::CaptureStderr();
  EXPECT_EQ(cli::run_report(o), 2);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("gnuplot failed"), std::string::npos) << err;
  EXPECT_EQ(read_text(o.out_dir / "report.md"), before);
  EXPECT_TRUE(fs::exists(o.out_dir / "charts" / "speedup.png"));
  for (const fs::directory_entry& e : fs::directory_iterator(o.out_dir))
    EXPECT_NE(e.path().filename().string().rfind(".fusebench-report", 0), 0u) << "staging folder left behind";
}

/// Issue 38: a peer row in a results file, as bench --peers torch writes it.
case_result peer_row(const std::string& impl, outcome o, double median, double share, const std::string& message = "") {
  case_result c;
  c.model = "convt2d_mul_gap";
  c.kernelbench_id = 44;
  c.config = nlohmann::json::object();
  c.config_label = "default";
  c.problem_size = 1e6;
  c.implementation = impl;
  c.outcome = o;
  c.message = message;
  c.max_abs_error = c.max_rel_error = std::nan("");
  if (median > 0.0) c.stats = summarize_samples({median, median * 1.01, median * 0.99});
  c.peer = peer_details{"2.11.0+cu130", share, std::nullopt};
  return c;
}

TEST(report, the_fastest_passing_peer_and_the_fastest_peer_are_told_apart) {
  results_file r;
  r.environment.device = "cuda";
  case_result fused = peer_row("fused_cuda", outcome::passed, 1e-3, 1.0);
  fused.peer.reset();
  case_result ref = peer_row("ref", outcome::passed, 8e-3, 1.0);
  ref.peer.reset();
  r.cases = {ref, fused, peer_row("peer:eager", outcome::passed, 4e-3, 1.0),
             // Faster than every passing peer, but 20% of its elements miss the tolerance.
             peer_row("peer:max_autotune_tf32", outcome::incorrect, 0.5e-3, 0.2, "800 of 1000 elements outside"),
             peer_row("peer:compile", outcome::not_supported, 0.0, std::nan(""),
                      "skipped: torch.compile does not exist in torch 1.13.0a0")};
  r.status.planned_cases = static_cast<std::int64_t>(r.cases.size());
  const report::report_model model = report::build_report_model(r);
  ASSERT_EQ(model.models.size(), 1u);
  const report::sweep_row& row = model.models[0].rows.at(0);
  ASSERT_EQ(model.models[0].fused_implementations, std::vector<std::string>{"fused_cuda"});  // peers are not fused
  ASSERT_EQ(row.peers.size(), 3u);  // the skipped one too
  ASSERT_TRUE(row.fastest_passing_peer && row.fastest_peer);
  EXPECT_EQ(row.fastest_passing_peer->implementation, "peer:eager");
  EXPECT_EQ(row.fastest_peer->implementation, "peer:max_autotune_tf32");
  const report::fused_entry& e = row.fused.at(0);
  ASSERT_TRUE(e.vs_fastest_passing_peer && e.vs_fastest_peer);
  EXPECT_NEAR(e.vs_fastest_passing_peer->ratio, 4.0, 0.1);
  EXPECT_NEAR(e.vs_fastest_peer->ratio, 0.5, 0.02);
  const std::string md = render_markdown(model);
  EXPECT_NE(md.find("vs fastest peer within tol | vs fastest peer |"), std::string::npos) << md;
  EXPECT_NE(md.find("4.00× [3.92–4.08] (eager 4.00 ms)"), std::string::npos) << md;
  EXPECT_NE(md.find("0.50× [0.49–0.51] (max_autotune_tf32 500.0 us, 20% within tol)"), std::string::npos) << md;
  // The skipped peer is listed with its reason, never silently missing.
  EXPECT_NE(md.find("peer:compile: not_supported: skipped: torch.compile does not exist in torch 1.13.0a0"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| default | peer:max_autotune_tf32 |"), std::string::npos) << md;
  // Per config too: the model's table has both columns before the status.
  EXPECT_NE(md.find("| max err / tol | vs fastest peer within tol | vs fastest peer | status |"), std::string::npos) << md;
  EXPECT_EQ(lines_with(md, "(max_autotune_tf32 500.0 us, 20% within tol) | ok |").size(), 2u) << md;
  EXPECT_NE(md.find("OUTSIDE tolerance"), std::string::npos) << md;
}

}  // namespace

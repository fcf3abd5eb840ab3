/// The results file: round trip, the errors a bad file gets, crash safety of the writer, and the
/// Google Benchmark export.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "harness/results/gbench_json.h"
#include "harness/results/results.h"
#include "harness/results/results_writer.h"

namespace {

using namespace fb;
namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path fixture = fs::path(FUSEBENCH_FIXTURE_DIR) / "results_fixture.json";

/// A fresh folder per test, removed afterwards.
class temp_dir {
 public:
  temp_dir() {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    m_path = fs::temp_directory_path() /
             fmt_name(std::string("fusebench_") + info->test_suite_name() + "_" + info->name() + "_" +
                      std::to_string(::getpid()));
    fs::remove_all(m_path);
    fs::create_directories(m_path);
  }
  ~temp_dir() { fs::remove_all(m_path); }
  [[nodiscard]] const fs::path& path() const { return m_path; }

 private:
  static std::string fmt_name(std::string s) {
    for (char& c : s)
      if (c == '/') c = '_';
    return s;
  }
  fs::path m_path;
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

/// The message load_results throws for `text`, or "" when it loads.
std::string load_error(const fs::path& p, const std::string& text) {
  write_text(p, text);
  try {
    (void)load_results(p);
  } catch (const results_error& e) {
    return e.what();
  }
  return "";
}

case_result sample_case(int i, std::size_t samples = 12) {
  case_result c;
  c.model = "convt2d_mul_gap";
  c.kernelbench_id = 44;
  c.config = json{{"batch_size", 16 + i}, {"multiplier", 0.5}};
  c.config_label = "case " + std::to_string(i);
  c.problem_size = 1e6 * (i + 1);
  c.implementation = "fused_cuda";
  c.outcome = outcome::passed;
  c.max_abs_error = 1e-7;
  c.max_rel_error = std::nan("");  // written as null, read back as NaN
  std::vector<double> s;
  for (std::size_t k = 0; k < samples; ++k) s.push_back(1e-3 * (1.0 + 0.001 * static_cast<double>((k * 7 + i) % 13)));
  c.stats = summarize_samples(std::move(s));
  c.floor = make_floor_estimate(1e9, 1e9, 4e12, 6e13, c.stats->median);
  c.floor->flop_unit = i % 2 == 0 ? "fp64_mma" : "fp32_fma";
  return c;
}

TEST(results_io, round_trip_keeps_every_field) {
  results_file r;
  r.environment.device = "cuda";
  r.environment.gpu_name = "NVIDIA H100 80GB HBM3";
  r.environment.sm_count = 132;
  r.environment.l2_bytes = 52428800;
  r.environment.measured_bandwidth = 3.0e12;
  r.environment.measured_fp32_peak = std::nan("");
  r.environment.measured_fp64_mma_peak = 5.9e13;
  r.environment.source_digest = std::string(64, 'd');
  r.environment.seed = 0xffff'ffff'ffff'fff0ULL;  // beyond int64: must stay unsigned
  r.cases.push_back(sample_case(0));
  case_result failing = sample_case(1);
  failing.outcome = outcome::incorrect;
  failing.message = "values: max abs error 3e-3";
  failing.stats.reset();
  failing.floor.reset();
  r.cases.push_back(failing);

  const results_file back = results_from_json(json::parse(results_to_json(r).dump()), "memory");
  EXPECT_EQ(back.environment.gpu_name, r.environment.gpu_name);
  EXPECT_EQ(back.environment.l2_bytes, 52428800);
  EXPECT_EQ(back.environment.seed, r.environment.seed);
  EXPECT_TRUE(std::isnan(back.environment.measured_fp32_peak));
  EXPECT_EQ(back.environment.measured_fp64_mma_peak, 5.9e13);
  EXPECT_EQ(back.environment.source_digest, r.environment.source_digest);
  ASSERT_EQ(back.cases.size(), 2u);
  const case_result& c = back.cases[0];
  EXPECT_EQ(c.config, r.cases[0].config);
  EXPECT_EQ(c.config_label, "case 0");
  EXPECT_EQ(c.outcome, outcome::passed);
  EXPECT_TRUE(std::isnan(c.max_rel_error));
  ASSERT_TRUE(c.stats && c.floor);
  EXPECT_EQ(c.stats->samples, r.cases[0].stats->samples);  // bit-exact: shortest round-trip doubles
  EXPECT_EQ(c.stats->median, r.cases[0].stats->median);
  EXPECT_EQ(c.floor->floor_seconds, r.cases[0].floor->floor_seconds);
  EXPECT_EQ(c.floor->flop_unit, r.cases[0].floor->flop_unit);
  EXPECT_EQ(back.cases[1].outcome, outcome::incorrect);
  EXPECT_EQ(back.cases[1].message, "values: max abs error 3e-3");
  EXPECT_FALSE(back.cases[1].stats.has_value());
  EXPECT_FALSE(back.cases[1].floor.has_value());
}

TEST(results_io, fixture_loads) {
  const results_file r = load_results(fixture);
  EXPECT_EQ(r.cases.size(), 26u);
  EXPECT_EQ(r.environment.gpu_name, "NVIDIA H200");
}

TEST(results_io, missing_file_names_the_path) {
  temp_dir dir;
  const fs::path p = dir.path() / "nope.json";
  try {
    (void)load_results(p);
    FAIL() << "no exception";
  } catch (const results_error& e) {
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

TEST(results_io, truncated_and_corrupt_json_report_the_byte) {
  temp_dir dir;
  const fs::path p = dir.path() / "bad.json";
  const std::string text = read_text(fixture);
  const std::string truncated = load_error(p, text.substr(0, text.size() / 2));
  EXPECT_NE(truncated.find("is not valid JSON"), std::string::npos) << truncated;
  EXPECT_NE(truncated.find(fmt::format("at byte {}", text.size() / 2 + 1)), std::string::npos) << truncated;
  EXPECT_NE(truncated.find(p.string()), std::string::npos) << truncated;
  const std::string corrupt = load_error(p, "{\"schema\": \"fusebench-results\", \"version\": 1,, }");
  EXPECT_NE(corrupt.find("at byte 46"), std::string::npos) << corrupt;
  EXPECT_NE(load_error(p, "").find("is not valid JSON"), std::string::npos);
}

TEST(results_io, wrong_schema_or_version_is_refused) {
  temp_dir dir;
  const fs::path p = dir.path() / "r.json";
  json doc = json::parse(read_text(fixture));
  doc["version"] = 3;
  EXPECT_NE(load_error(p, doc.dump()).find("version 3 is not supported: this fusebench reads versions 1 to 2"),
            std::string::npos);
  doc["version"] = "1";
  EXPECT_NE(load_error(p, doc.dump()).find("field version is missing or not an integer"), std::string::npos);
  doc["version"] = 1;
  doc["schema"] = "nvbench";
  EXPECT_NE(load_error(p, doc.dump()).find("schema is \"nvbench\", expected \"fusebench-results\""), std::string::npos);
  EXPECT_NE(load_error(p, "[1, 2]").find("the top level is array, expected an object"), std::string::npos);
  EXPECT_NE(load_error(p, json{{"benchmarks", json::array()}}.dump()).find("not a fusebench-results file"),
            std::string::npos);
}

TEST(results_io, missing_and_mistyped_fields_name_their_path) {
  temp_dir dir;
  const fs::path p = dir.path() / "r.json";
  const json good = json::parse(read_text(fixture));
  json doc = good;
  doc["cases"][3]["stats"].erase("median");
  EXPECT_NE(load_error(p, doc.dump()).find("field cases[3].stats.median is missing"), std::string::npos);
  doc = good;
  doc["cases"][3]["stats"]["median"] = "fast";
  EXPECT_NE(load_error(p, doc.dump()).find("field cases[3].stats.median has type string (\"fast\"), expected a number"),
            std::string::npos);
  doc = good;
  doc["cases"][5]["stats"]["samples"][2] = true;
  EXPECT_NE(load_error(p, doc.dump()).find("field cases[5].stats.samples[2] has type boolean"), std::string::npos);
  doc = good;
  doc["cases"][0]["kernelbench_id"] = 44.5;
  EXPECT_NE(load_error(p, doc.dump()).find("field cases[0].kernelbench_id has type number (44.5), expected an integer"),
            std::string::npos);
  doc = good;
  doc["cases"][1]["outcome"] = "great";
  EXPECT_NE(load_error(p, doc.dump()).find("field cases[1].outcome is \"great\", expected one of passed, incorrect"),
            std::string::npos);
  doc = good;
  doc["environment"].erase("gpu_name");
  EXPECT_NE(load_error(p, doc.dump()).find("field environment.gpu_name is missing"), std::string::npos);
  doc = good;
  doc["cases"][2]["floor"]["flop_unit"] = "tf32";
  EXPECT_NE(load_error(p, doc.dump()).find("field cases[2].floor.flop_unit is \"tf32\", expected \"fp32_fma\" or \"fp64_mma\""),
            std::string::npos);
  doc = good;
  doc["cases"][2]["floor"] = 3;
  EXPECT_NE(load_error(p, doc.dump()).find("field cases[2].floor has type number, expected an object"),
            std::string::npos);
  EXPECT_EQ(load_error(p, good.dump()), "");  // the unmodified fixture is fine
}

TEST(results_io, version_2_round_trips_the_run_status_and_verdict_fields) {
  results_file r;
  r.environment.atol = 1e-5;
  r.environment.rtol = 2e-5;
  r.status = run_status{false, "interrupted by SIGINT after 1 of 3 cases", 3};
  r.cases.push_back(sample_case(0));
  r.cases[0].decided_by = verdict_rule::fp64_allowance;
  r.cases[0].tolerance_ratio = 0.25;
  r.cases.push_back(sample_case(1));  // decided_by not recorded: written as null
  const json doc = results_to_json(r);
  EXPECT_EQ(doc["version"], results_schema_version);
  EXPECT_EQ(doc["complete"], false);
  EXPECT_EQ(doc["planned_cases"], 3);
  EXPECT_EQ(doc["cases"][0]["decided_by"], "fp64_allowance");
  EXPECT_TRUE(doc["cases"][1]["decided_by"].is_null());
  const results_file back = results_from_json(json::parse(doc.dump()), "memory");
  EXPECT_EQ(back.version, 2);
  EXPECT_FALSE(back.status.complete);
  EXPECT_EQ(back.status.incomplete_reason, "interrupted by SIGINT after 1 of 3 cases");
  EXPECT_EQ(back.status.planned_cases, 3);
  EXPECT_EQ(back.environment.atol, 1e-5);
  EXPECT_EQ(back.environment.rtol, 2e-5);
  EXPECT_EQ(back.cases[0].decided_by, verdict_rule::fp64_allowance);
  EXPECT_EQ(back.cases[0].tolerance_ratio, 0.25);
  EXPECT_FALSE(back.cases[1].decided_by.has_value());
}

TEST(results_io, version_1_files_read_as_complete_runs) {
  // The committed fixture and baselines are version 1: no run status, no decided_by.
  const json doc = json::parse(read_text(fixture));
  ASSERT_EQ(doc["version"], 1);
  ASSERT_FALSE(doc.contains("complete"));
  const results_file r = load_results(fixture);
  EXPECT_EQ(r.version, 1);
  EXPECT_TRUE(r.status.complete);
  EXPECT_EQ(r.status.planned_cases, 0);
  EXPECT_TRUE(std::isnan(r.environment.atol));
  for (const case_result& c : r.cases) {
    EXPECT_FALSE(c.decided_by.has_value());
    EXPECT_TRUE(std::isnan(c.tolerance_ratio));
  }
  // Written again, it becomes a version 2 file that says what it knows.
  const json again = results_to_json(r);
  EXPECT_EQ(again["version"], 2);
  EXPECT_EQ(again["complete"], true);
  for (const char* baseline : {"nvidia-h200.json", "nvidia-h100-80gb-hbm3.json"})
    EXPECT_NO_THROW((void)load_results(fs::path(FUSEBENCH_REPORTS_DIR) / "baselines" / baseline)) << baseline;
  EXPECT_NO_THROW((void)load_results(fs::path(FUSEBENCH_FIXTURE_DIR) / "baseline-nvidia-h200-62520d2.json"));
}

TEST(results_io, contents_no_run_can_produce_are_refused_naming_the_field) {
  temp_dir dir;
  const fs::path p = dir.path() / "r.json";
  const json good = json::parse(read_text(fixture));
  ASSERT_EQ(good["cases"][3]["stats"]["n"], 12);
  const std::pair<std::function<void(json&)>, std::string> bad[] = {
      {[](json& d) { d["cases"][3]["stats"]["samples"] = json::array(); },
       "field cases[3].stats.samples is empty, but the stats say n = 12"},
      {[](json& d) { d["cases"][3]["stats"]["median"] = nullptr; },
       "field cases[3].stats.median is null, expected a time in seconds"},
      {[](json& d) { d["cases"][3]["stats"]["stdev"] = nullptr; }, "field cases[3].stats.stdev is null"},
      {[](json& d) { d["cases"][3]["stats"]["samples"][4] = -1e-3; },
       "field cases[3].stats.samples[4] is -0.001, expected a finite time >= 0 seconds"},
      {[](json& d) { d["cases"][3]["stats"]["samples"][4] = nullptr; }, "field cases[3].stats.samples[4] is null"},
      {[](json& d) { d["cases"][3]["stats"]["p90"] = -2.0; }, "field cases[3].stats.p90 is -2"},
      {[](json& d) { d["cases"][3]["stats"]["n"] = 11; }, "field cases[3].stats.n is 11, but cases[3].stats.samples holds 12 samples"},
      {[](json& d) { d["cases"].push_back(d["cases"][5]); },
       fmt::format("cases[5] and cases[{}] are the same case", good["cases"].size())},
  };
  for (const auto& [damage, expected] : bad) {
    json doc = good;
    damage(doc);
    EXPECT_NE(load_error(p, doc.dump()).find(expected), std::string::npos)
        << "expected: " << expected << "\ngot: " << load_error(p, doc.dump());
  }
  // Infinity cannot be written as JSON; a number beyond double's range is refused as such.
  json doc = good;
  doc["cases"][3]["stats"]["mean"] = 12345.5;
  std::string text = doc.dump();
  text.replace(text.find("12345.5"), 7, "1e999");
  EXPECT_NE(load_error(p, text).find("is not valid JSON: number overflow parsing '1e999'"), std::string::npos)
      << load_error(p, text);

  // Version 2: a complete run must hold every case it planned.
  results_file r = load_results(fixture);
  r.status.planned_cases = static_cast<std::int64_t>(r.cases.size()) + 2;
  EXPECT_NE(load_error(p, results_to_json(r).dump()).find("complete is true, but the file holds 26 of 28 planned cases"),
            std::string::npos);
  r.status.complete = false;
  EXPECT_EQ(load_error(p, results_to_json(r).dump()), "");
  json v2 = results_to_json(r);
  v2["cases"][0]["decided_by"] = "majority_vote";
  EXPECT_NE(load_error(p, v2.dump()).find("field cases[0].decided_by is \"majority_vote\", expected one of none, "
                                          "fp32_reference, fp64_allowance"),
            std::string::npos);
  v2 = results_to_json(r);
  v2.erase("complete");
  EXPECT_NE(load_error(p, v2.dump()).find("field complete is missing"), std::string::npos);
}

TEST(results_writer, a_killed_run_leaves_a_valid_file_with_its_finished_cases) {
  temp_dir dir;
  const fs::path p = dir.path() / "results.json";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      results_writer writer(p, run_environment{"cuda", "NVIDIA H200"}, dir.path() / "gbench.json");
      writer.set_planned_cases(5);
      for (int i = 0; i < 3; ++i) writer.add_case(sample_case(i));
      ::raise(SIGKILL);  // a crash: no destructors, no flush, no exit handlers
    } catch (...) {
    }
    ::_exit(3);  // never return into the test runner from the child
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  const results_file r = load_results(p);
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[2].config_label, "case 2");
  EXPECT_FALSE(r.status.complete) << "a killed run must never read as finished";
  EXPECT_EQ(r.status.incomplete_reason, "not finished (still running, or killed): 3 of 5 planned cases written");
  EXPECT_EQ(r.environment.gpu_name, "NVIDIA H200");
  EXPECT_EQ(json::parse(read_text(dir.path() / "gbench.json"))["context"]["gpu_name"], "NVIDIA H200");
}

TEST(results_writer, killed_at_random_instants_the_file_is_always_loadable) {
  temp_dir dir;
  const fs::path p = dir.path() / "results.json";
  // Big cases make every rewrite take a while, so the kills land inside writes, not between them.
  for (int delay_ms = 10; delay_ms <= 190; delay_ms += 20) {
    fs::remove(p);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        results_writer writer(p, run_environment{"cuda", "NVIDIA H200"});
        for (int i = 0;; ++i) writer.add_case(sample_case(i, 2000));
      } catch (...) {
      }
      ::_exit(3);
    }
    // The guarantee starts once the constructor has written the first file: wait for it (a busy
    // machine can take longer than the shortest delay to get there), then kill at the chosen instant.
    for (int waited = 0; !fs::exists(p) && waited < 5000; ++waited)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself (exit " << WEXITSTATUS(status) << ")";
    const results_file r = load_results(p);  // throws, failing the test, if the file is torn
    for (std::size_t i = 0; i < r.cases.size(); ++i) {
      EXPECT_EQ(r.cases[i].config_label, "case " + std::to_string(i));
      ASSERT_TRUE(r.cases[i].stats.has_value());
      EXPECT_EQ(r.cases[i].stats->samples.size(), 2000u);
    }
  }
}

TEST(results_writer, starts_with_an_empty_valid_file) {
  temp_dir dir;
  const fs::path p = dir.path() / "results.json";
  results_writer writer(p, run_environment{"cpu"});
  EXPECT_TRUE(load_results(p).cases.empty());
  writer.add_case(sample_case(0));
  EXPECT_EQ(load_results(p).cases.size(), 1u);
  EXPECT_FALSE(fs::exists(dir.path() / "results.json.tmp"));
  EXPECT_THROW(results_writer(dir.path() / "no" / "such" / "dir.json", run_environment{}), std::runtime_error);
}

TEST(results_writer, only_finish_marks_a_run_complete) {
  temp_dir dir;
  const fs::path p = dir.path() / "results.json";
  results_writer writer(p, run_environment{"cpu"});
  writer.set_planned_cases(2);
  EXPECT_FALSE(load_results(p).status.complete);
  writer.add_case(sample_case(0));
  writer.mark_incomplete("interrupted by SIGTERM after 1 of 2 cases");
  results_file r = load_results(p);
  EXPECT_FALSE(r.status.complete);
  EXPECT_EQ(r.status.incomplete_reason, "interrupted by SIGTERM after 1 of 2 cases");
  EXPECT_EQ(r.cases.size(), 1u);  // finished cases are never lost
  writer.add_case(sample_case(1));
  EXPECT_EQ(load_results(p).status.incomplete_reason, "interrupted by SIGTERM after 1 of 2 cases");
  writer.finish();
  r = load_results(p);
  EXPECT_TRUE(r.status.complete);
  EXPECT_EQ(r.status.incomplete_reason, "");
  EXPECT_EQ(r.status.planned_cases, 2);
  EXPECT_EQ(json::parse(read_text(p))["complete"], true);
}

TEST(gbench_json, has_what_compare_py_reads) {
  results_file r;
  r.environment.date = "2025-11-22T03:33:00Z";
  r.environment.hostname = "gpu-host-1";
  r.environment.build_type = "Release";
  r.cases.push_back(sample_case(0));
  case_result failing = sample_case(1);
  failing.outcome = outcome::incorrect;
  failing.message = "bad values";
  r.cases.push_back(failing);
  const json g = to_gbench_json(r);
  EXPECT_EQ(g["context"]["library_build_type"], "release");
  EXPECT_EQ(g["context"]["host_name"], "gpu-host-1");
  const json& b = g["benchmarks"];
  ASSERT_EQ(b.size(), 12u + 3u + 1u);  // 12 iterations + mean/median/stddev + the failing case
  for (std::size_t i = 0; i < 12; ++i) {
    EXPECT_EQ(b[i]["name"], "convt2d_mul_gap/case 0/fused_cuda");
    EXPECT_EQ(b[i]["run_type"], "iteration");
    EXPECT_EQ(b[i]["repetition_index"], i);
    EXPECT_EQ(b[i]["time_unit"], "us");
    EXPECT_DOUBLE_EQ(b[i]["real_time"].get<double>(), r.cases[0].stats->samples[i] * 1e6);
    EXPECT_EQ(b[i]["real_time"], b[i]["cpu_time"]);
  }
  EXPECT_EQ(b[13]["name"], "convt2d_mul_gap/case 0/fused_cuda_median");
  EXPECT_EQ(b[13]["run_type"], "aggregate");
  EXPECT_EQ(b[13]["aggregate_name"], "median");
  EXPECT_DOUBLE_EQ(b[13]["real_time"].get<double>(), r.cases[0].stats->median * 1e6);
  EXPECT_EQ(b[15]["name"], "convt2d_mul_gap/case 1/fused_cuda");
  EXPECT_EQ(b[15]["error_occurred"], true);
  EXPECT_FALSE(b[15].contains("real_time"));  // compare.py skips entries without times
}

}  // namespace

/// Scale-out: the split of a run into shards (harness/results/shard.h), the GPU a shard process or a ctest
/// test gets (harness/device/gpu_assignment.h, `--devices` parsing), and the merges of bench results
/// (harness/results/results_merge.h) and verify reports (merge_verify_reports): N shards merge into
/// exactly the unsharded run's file; files that are not shards of one run are refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "harness/detail/remove_tree.h"
#include "harness/device/gpu_assignment.h"
#include "harness/fan_out/device_fan_out.h"
#include "harness/fan_out/fan_out.h"
#include "harness/process/exit_status.h"
#include "harness/results/results_merge.h"
#include "harness/results/shard.h"
#include "harness/verify/verify_report.h"

namespace fb {
namespace {

// ---- the split ------------------------------------------------------------------------------------

TEST(shard, parses_k_of_n_and_refuses_the_rest_naming_the_flag) {
  EXPECT_EQ(parse_shard("2/4"), (shard_spec{2, 4}));
  EXPECT_EQ(parse_shard("1/1"), shard_spec{});
  for (const char* bad : {"0/4", "5/4", "1/0", "2", "a/b", "1/", "/4", "2/4x", "-1/4", "2/-4", ""}) {
    try {
      (void)parse_shard(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--shard"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

TEST(shard, the_parts_of_a_split_hold_every_position_exactly_once) {
  for (int n = 1; n <= 9; ++n)
    for (int cases = 0; cases <= 20; ++cases) {
      std::vector<int> holders(static_cast<std::size_t>(cases), 0);
      for (int k = 1; k <= n; ++k) {
        const shard_spec s{k, n};
        int held = 0;
        for (int i = 0; i < cases; ++i)
          if (s.holds(i)) {
            ++holders[static_cast<std::size_t>(i)];
            ++held;
          }
        EXPECT_EQ(s.size_of(cases), held) << to_string(s) << " of " << cases;
      }
      for (int i = 0; i < cases; ++i) EXPECT_EQ(holders[static_cast<std::size_t>(i)], 1) << i << " with N " << n;
    }
}

TEST(shard, the_pieces_of_a_part_are_exactly_the_part) {
  for (const shard_spec outer : {shard_spec{1, 1}, shard_spec{2, 3}, shard_spec{4, 4}})
    for (int pieces = 1; pieces <= 4; ++pieces)
      for (int i = 0; i < 200; ++i) {
        int holders = 0;
        for (int d = 0; d < pieces; ++d) holders += sub_shard(outer, d, pieces).holds(i);
        EXPECT_EQ(holders, outer.holds(i) ? 1 : 0) << to_string(outer) << " in " << pieces << " at " << i;
      }
}

merge_part part(const std::string& name, int k, int n) { return {name, shard_spec{k, n}}; }

TEST(shard, coverage_accepts_a_whole_split_in_any_order) {
  const shard_coverage c = check_coverage({part("c", 3, 3), part("a", 1, 3), part("b", 2, 3)}, merge_rules{});
  EXPECT_TRUE(c.missing.empty());
  EXPECT_EQ(c.order, (std::vector<int>{1, 2, 0}));
}

TEST(shard, coverage_refuses_missing_overlapping_mixed_and_foreign_parts) {
  const auto message = [](const std::vector<merge_part>& parts, merge_rules rules = {}) {
    try {
      (void)check_coverage(parts, rules);
    } catch (const merge_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({part("a", 1, 3), part("c", 3, 3)}).find("shard 2/3 missing"), std::string::npos);
  EXPECT_NE(message({part("a", 1, 2), part("b", 1, 2)}).find("are both shard 1/2"), std::string::npos);
  EXPECT_NE(message({part("a", 1, 2), part("b", 2, 3)}).find("the same N"), std::string::npos);
  merge_rules second_of_three;
  second_of_three.target = {2, 3};
  EXPECT_NE(message({part("a", 1, 6)}, second_of_three).find("not part of shard 2/3"), std::string::npos);
  EXPECT_NE(message({part("a", 1, 4)}, second_of_three).find("does not split"), std::string::npos);
  // 2/3 of a run is 2/6 and 5/6 of a finer split: what --devices 2 does under --shard 2/3.
  EXPECT_EQ(message({part("a", 5, 6), part("b", 2, 6)}, second_of_three), "accepted");
  merge_rules lenient;
  lenient.allow_missing = true;
  EXPECT_EQ(check_coverage({part("a", 1, 4), part("c", 3, 4)}, lenient).missing, (std::vector<int>{2, 4}));
}

TEST(shard, agreed_value_joins_only_when_allowed) {
  const std::vector<merge_part> parts{part("a", 1, 2), part("b", 2, 2)};
  EXPECT_EQ(agreed_value("seed", {"7", "7"}, parts, false, ""), "7");
  EXPECT_EQ(agreed_value("gpu", {"H100", "H200"}, parts, true, ""), "H100 + H200");
  try {
    (void)agreed_value("seed", {"7", "8"}, parts, false, "; hint");
    ADD_FAILURE() << "different seeds accepted";
  } catch (const merge_error& e) {
    EXPECT_STREQ(e.what(), "b: seed is \"8\", but a's is \"7\"; hint");
  }
}

// ---- which GPU a process gets ---------------------------------------------------------------------

TEST(gpu_assignment, a_child_sees_the_chosen_gpu_of_its_parents_view) {
  EXPECT_EQ(gpus::visible_device_for(1, nullptr), "1");
  EXPECT_EQ(gpus::visible_device_for(1, "4,5"), "5");
  EXPECT_EQ(gpus::visible_device_for(2, "4,5"), "");
  EXPECT_EQ(gpus::visible_device_for(0, "GPU-5c1e, GPU-9a0b"), "GPU-5c1e");
  EXPECT_EQ(gpus::visible_device_for(0, ""), "");
}

gpus::env_reader fake_env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(gpu_assignment, a_test_runs_on_the_gpu_ctest_allocated) {
  EXPECT_EQ(gpus::ctest_visible_devices(fake_env({})), std::nullopt);
  const std::map<std::string, std::string> allocated{{"CTEST_RESOURCE_GROUP_COUNT", "1"},
                                                     {"CTEST_RESOURCE_GROUP_0", "gpus"},
                                                     {"CTEST_RESOURCE_GROUP_0_GPUS", "id:1,slots:1"}};
  EXPECT_EQ(gpus::ctest_gpu_id(fake_env(allocated)), "1");
  EXPECT_EQ(gpus::ctest_visible_devices(fake_env(allocated)), "1");
  auto under_slurm = allocated;
  under_slurm["CUDA_VISIBLE_DEVICES"] = "6,7";
  EXPECT_EQ(gpus::ctest_visible_devices(fake_env(under_slurm)), "7");
  auto outside = allocated;
  outside["CUDA_VISIBLE_DEVICES"] = "6";
  EXPECT_EQ(gpus::ctest_visible_devices(fake_env(outside)), std::nullopt);
}

TEST(devices, parses_gpus_all_and_the_cpu_test_mode) {
  const std::vector<fan_out::device_slot> cpu = fan_out::parse_devices("cpu,cpu,cpu", 0, nullptr);
  ASSERT_EQ(cpu.size(), 3u);
  EXPECT_TRUE(cpu[2].cpu);
  EXPECT_EQ(cpu[2].label, "cpu 2");
  const std::vector<fan_out::device_slot> all = fan_out::parse_devices("all", 3, "4,5,6");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1].cuda_visible_devices, "5");
  EXPECT_EQ(all[1].label, "gpu 1");
  const std::vector<fan_out::device_slot> some = fan_out::parse_devices("2,0", 3, nullptr);
  ASSERT_EQ(some.size(), 2u);
  EXPECT_EQ(some[0].cuda_visible_devices, "2");
  EXPECT_EQ(some[0].gpu, 2);
}

TEST(devices, per_device_repeats_each_slot_in_order) {
  const std::vector<fan_out::device_slot> all = fan_out::parse_devices("all", 2, "4,5");
  const std::vector<fan_out::device_slot> four = fan_out::per_device_slots(all, 2);
  ASSERT_EQ(four.size(), 4u);
  EXPECT_EQ(four[0].label, "gpu 0.1");
  EXPECT_EQ(four[1].label, "gpu 0.2");
  EXPECT_EQ(four[1].cuda_visible_devices, "4");
  EXPECT_EQ(four[2].label, "gpu 1.1");
  EXPECT_EQ(four[3].cuda_visible_devices, "5");
  EXPECT_EQ(four[3].sharing, 2);
  EXPECT_EQ(fan_out::per_device_slots(all, 1).front().label, "gpu 0");  // one per device: labels unchanged
}

TEST(devices, refuses_with_one_line) {
  const std::vector<std::pair<std::string, int>> bad{{"all", 0}, {"0,1", 0},   {"2", 2},  {"0,0", 2},
                                                     {"cpu,0", 2}, {"0,cpu", 2}, {"x", 2}, {"", 2}, {"-1", 2}};
  for (const auto& [text, visible] : bad) {
    try {
      (void)fan_out::parse_devices(text, visible, nullptr);
      ADD_FAILURE() << "--devices " << text << " with " << visible << " GPUs was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--devices", 0), 0u) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

TEST(devices, a_shard_process_sees_its_gpu_and_its_share_of_the_cores) {
  const char* parent[] = {"PATH=/bin", "CUDA_VISIBLE_DEVICES=4,5", "HOME=/root", nullptr};
  const std::vector<std::string> env = fan_out::shard_environment(parent, "5", 8);
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/bin", "HOME=/root", "CUDA_VISIBLE_DEVICES=5", "OMP_NUM_THREADS=8"}));
  const char* pinned[] = {"OMP_NUM_THREADS=3", nullptr};  // the user's choice stands
  EXPECT_EQ(fan_out::shard_environment(pinned, "", 0), (std::vector<std::string>{"OMP_NUM_THREADS=3", "CUDA_VISIBLE_DEVICES="}));
  const char* none[] = {nullptr};  // more processes than cores: one thread each, never 0
  EXPECT_EQ(fan_out::shard_environment(none, "0", 0).back(), "OMP_NUM_THREADS=1");
  // Processes sharing a GPU (--per-device) are told so; a stale value from the parent never passes on.
  const char* stale[] = {"FUSEBENCH_SHARED_GPU=9", nullptr};
  EXPECT_EQ(fan_out::shard_environment(stale, "0", 2, 4),
            (std::vector<std::string>{"CUDA_VISIBLE_DEVICES=0", "OMP_NUM_THREADS=2", "FUSEBENCH_SHARED_GPU=4"}));
  EXPECT_EQ(fan_out::shard_environment(stale, "0", 2, 1),
            (std::vector<std::string>{"CUDA_VISIBLE_DEVICES=0", "OMP_NUM_THREADS=2"}));
}

TEST(devices, a_shard_stopped_by_the_signal_passed_on_is_not_an_error) {
  fan_out::fan_out_run run;
  run.processes.resize(3);
  run.exits.resize(3);
  run.exits[0].exit_code = 130;  // wrote its file, then exited as the shell's "killed by SIGINT"
  run.exits[1].exit_code = -1;   // killed by the SIGINT itself, before its handler was installed
  run.exits[1].signal = SIGINT;
  run.exits[2].exit_code = 1;    // finished its piece with a failing case
  run.interrupted_by = SIGINT;
  testing::internal::CaptureStderr();
  EXPECT_EQ(fan_out::exit_status(run), exit_ok);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "a Ctrl-C the user pressed is not a shard's error";
  // Without the interrupt, or by another signal, it is a crash of that shard.
  run.exits[1].signal = SIGSEGV;
  testing::internal::CaptureStderr();
  EXPECT_EQ(fan_out::exit_status(run), exit_failure);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("killed by signal 11"), std::string::npos);
  run.exits[1].signal = SIGINT;
  run.interrupted_by = 0;
  testing::internal::CaptureStderr();
  EXPECT_EQ(fan_out::exit_status(run), exit_failure);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("killed by signal 2"), std::string::npos);
}

// ---- bench results --------------------------------------------------------------------------------

/// A run of `configs` configs (three rows each, as bench writes them), or shard `shard` of it.
results_file bench_run(int configs, shard_spec shard = {}) {
  results_file r;
  r.environment.device = "cuda";
  r.environment.gpu_name = "NVIDIA H200";
  r.environment.sm_count = 132;
  r.environment.driver = "580";
  r.environment.git_commit = "abc";
  r.environment.sweep = "standard";
  r.environment.seed = 1;
  r.environment.atol = r.environment.rtol = 1e-5;
  r.environment.hostname = "host" + std::to_string(shard.index);
  r.environment.date = "2026-01-0" + std::to_string(shard.index) + "T00:00:00Z";
  r.environment.plan_digest = "0123456789abcdef";
  r.environment.shard = to_string(shard);
  for (int p = 0; p < configs; ++p) {
    if (!shard.holds(p)) continue;
    for (const char* impl : {"ref", "ref_tf32", "fused_cuda"}) {
      case_result c;
      c.model = p % 2 == 0 ? "convt2d_mul_gap" : "convt3d_bn_sub";
      c.config_label = "config " + std::to_string(p);
      c.implementation = impl;
      c.outcome = outcome::passed;
      c.stats = summarize_samples({1e-3 * (p + 1), 2e-3 * (p + 1)});
      r.cases.push_back(c);
    }
  }
  r.status.planned_cases = static_cast<std::int64_t>(r.cases.size());
  return r;
}

std::vector<named_results> bench_shards(int configs, int n) {
  std::vector<named_results> parts;
  for (int k = n; k >= 1; --k)  // given out of order on purpose
    parts.push_back({"shard" + std::to_string(k), bench_run(configs, {k, n})});
  return parts;
}

std::vector<std::string> case_names(const results_file& r) {
  std::vector<std::string> names;
  for (const case_result& c : r.cases) names.push_back(c.model + "/" + c.config_label + "/" + c.implementation);
  return names;
}

TEST(merge_results, n_shards_make_the_unsharded_file) {
  const results_file whole = bench_run(7);
  for (int n = 1; n <= 9; ++n) {
    const results_file merged = merge_results(bench_shards(7, n), merge_rules{});
    EXPECT_EQ(case_names(merged), case_names(whole)) << n << " shards";
    EXPECT_EQ(merged.status.planned_cases, whole.status.planned_cases);
    EXPECT_TRUE(merged.status.complete);
    EXPECT_EQ(merged.environment.shard, "1/1");
    EXPECT_EQ(merged.environment.date, "2026-01-01T00:00:00Z");
    // Everything but what is measured (and the hosts, which name every shard's) is the unsharded run's.
    json a = results_to_json(merged), b = results_to_json(whole);
    for (json* doc : {&a, &b}) {
      (*doc)["environment"].erase("hostname");
      (*doc)["environment"].erase("date");
    }
    EXPECT_EQ(a, b) << n << " shards";
  }
}

std::string merge_message(std::vector<named_results> parts, merge_rules rules = {}) {
  try {
    (void)merge_results(parts, rules);
  } catch (const merge_error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    return e.what();
  }
  return "accepted";
}

TEST(merge_results, refuses_shards_of_different_runs) {
  auto seed = bench_shards(4, 2);
  seed[1].results.environment.seed = 2;
  EXPECT_NE(merge_message(seed).find("environment.seed is \"2\""), std::string::npos);
  auto plan = bench_shards(4, 2);
  plan[0].results.environment.plan_digest = "fedcba9876543210";
  EXPECT_NE(merge_message(plan).find("they plan different configs"), std::string::npos);
  auto moved = bench_shards(4, 2);  // a --config FILE at another path on another host: one plan still
  moved[0].results.environment.sweep = "config:/home/ci/configs.json";
  EXPECT_EQ(merge_message(moved), "accepted");
  // Shards with different plug-in sets (issue 40): one without the plug-in would merge into a file that
  // seems to have timed it on every config; never merged, whatever the flags.
  auto plugins = bench_shards(4, 2);
  plugins[0].results.environment.plugins = {"plugin:mine"};
  EXPECT_NE(merge_message(plugins).find("environment.plugins"), std::string::npos) << merge_message(plugins);
  merge_rules lenient;
  lenient.allow_different_gpu = lenient.allow_different_commit = lenient.allow_missing = lenient.allow_incomplete = true;
  EXPECT_NE(merge_message(plugins, lenient).find("load the same plug-ins"), std::string::npos);
  plugins[1].results.environment.plugins = {"plugin:mine"};
  EXPECT_EQ(merge_message(plugins), "accepted");
  EXPECT_EQ(merge_results(plugins, {}).environment.plugins, std::vector<std::string>{"plugin:mine"});
  auto tolerance = bench_shards(4, 2);
  tolerance[0].results.environment.atol = 1e-4;
  EXPECT_NE(merge_message(tolerance).find("environment.atol"), std::string::npos);
  auto gpu = bench_shards(4, 2);
  gpu[0].results.environment.gpu_name = "NVIDIA H100";
  EXPECT_NE(merge_message(gpu).find("--allow-different-gpu"), std::string::npos);
  merge_rules any_gpu;
  any_gpu.allow_different_gpu = true;
  EXPECT_EQ(merge_results(gpu, any_gpu).environment.gpu_name, "NVIDIA H100 + NVIDIA H200");
  auto commit = bench_shards(4, 2);
  commit[1].results.environment.git_commit = "def";
  EXPECT_NE(merge_message(commit).find("--allow-different-commit"), std::string::npos);
  // Shards of one commit built from different sources (one tree edited between them): refused too.
  auto sources = bench_shards(4, 2);
  sources[1].results.environment.source_digest = std::string(64, 'e');
  EXPECT_NE(merge_message(sources).find("environment.source_digest"), std::string::npos);
  auto overlap = bench_shards(4, 2);
  overlap.push_back(overlap.front());
  EXPECT_NE(merge_message(overlap).find("are both shard 2/2"), std::string::npos);
}

TEST(merge_results, missing_and_incomplete_shards_only_when_allowed_and_then_marked) {
  auto missing = bench_shards(6, 3);
  missing.erase(missing.begin() + 1);  // shard 2/3
  EXPECT_NE(merge_message(missing).find("shard 2/3 missing"), std::string::npos);
  merge_rules allow_missing;
  allow_missing.allow_missing = true;
  const results_file partial = merge_results(missing, allow_missing);
  EXPECT_FALSE(partial.status.complete);
  EXPECT_EQ(partial.status.incomplete_reason, "merged without shard 2/3");
  EXPECT_EQ(partial.cases.size(), 12u);

  auto interrupted = bench_shards(6, 2);
  interrupted[0].results.status.complete = false;
  interrupted[0].results.status.incomplete_reason = "interrupted by SIGINT after 3 of 9 cases";
  interrupted[0].results.cases.resize(3);
  EXPECT_NE(merge_message(interrupted).find("--allow-incomplete"), std::string::npos);
  merge_rules allow_incomplete;
  allow_incomplete.allow_incomplete = true;
  const results_file merged = merge_results(interrupted, allow_incomplete);
  EXPECT_FALSE(merged.status.complete);
  EXPECT_EQ(merged.status.incomplete_reason, "shard 2/2: interrupted by SIGINT after 3 of 9 cases");
  EXPECT_EQ(merged.cases.size(), 12u);
  // What the interrupted shard finished keeps its place in plan order.
  EXPECT_EQ(merged.cases[3].config_label, "config 1");
}

// ---- verify reports -------------------------------------------------------------------------------

/// A fuzz run of 2 models x `cases` cases (a fused implementation and the reference each), or shard
/// `shard` of it; the numbers are exact binary fractions, so sums do not depend on their order.
verify_report verify_run(int cases, shard_spec shard = {}) {
  verify_report r;
  r.device = "cpu";
  r.git_commit = "abc";
  r.seed = 9;
  r.atol = r.rtol = 1e-5;
  r.scope.device = "cpu";
  r.scope.models = {"convt3d_bn_sub", "convt2d_mul_gap"};
  r.scope.cases_per_model = cases;
  r.shard = shard;
  for (const std::string& model : r.scope.models)
    for (int i = 0; i < cases; ++i) {
      if (!shard.holds(i)) continue;
      if (model == "convt2d_mul_gap" && i == 2) r.notes.push_back("a note");
      for (const char* impl : {"reference", "fused_host"}) {
        check_result cr;
        cr.result = i % 4 == 3 ? outcome::not_run : i % 5 == 4 ? outcome::incorrect : outcome::passed;
        cr.rule = cr.result == outcome::not_run ? verdict_rule::none : verdict_rule::fp32_reference;
        cr.vs_expected.max_abs = 0.125 * i;
        cr.vs_expected.worst_ratio = 0.25 * i;
        cr.candidate_vs_fp64 = 0.0625 * i;
        cr.conditioning = 1.5 * i;
        verify_case_record rec{model, impl, i, json{{"in_channels", i + 1}}, 100u + static_cast<uint64_t>(i),
                               "uniform", "random", cr.result, cr.rule, "", cr.vs_expected.max_abs,
                               cr.vs_expected.worst_ratio, 0.5, "", ""};
        r.add(rec, cr, std::string(impl) == "reference" ? "fp64 oracle" : "reference (fp32/fp64)");
      }
    }
  return r;
}

std::vector<std::pair<std::string, verify_report>> verify_shards(int cases, int n) {
  std::vector<std::pair<std::string, verify_report>> parts;
  for (int k = 1; k <= n; ++k) parts.emplace_back("v" + std::to_string(k), verify_run(cases, {k, n}));
  std::swap(parts.front(), parts.back());
  return parts;
}

TEST(merge_verify, the_json_reads_back_as_written) {
  const verify_report r = verify_run(6, {2, 3});
  const json doc = verify_report_to_json(r);
  EXPECT_EQ(verify_report_to_json(verify_report_from_json(doc, "v.json")), doc);
  EXPECT_EQ(doc.at("shard"), "2/3");
  EXPECT_EQ(doc.at("version"), 2);
  verify_report strict = r;
  strict.fp64_rule = false;
  EXPECT_FALSE(verify_report_from_json(verify_report_to_json(strict), "v.json").fp64_rule);
}

TEST(merge_verify, n_shards_make_the_unsharded_report_even_with_more_shards_than_cases) {
  const json whole = verify_report_to_json(verify_run(5));
  for (int n = 1; n <= 7; ++n) {
    const verify_report merged = merge_verify_reports(verify_shards(5, n), merge_rules{});
    EXPECT_EQ(verify_report_to_json(merged), whole) << n << " shards";
  }
}

std::string verify_merge_message(std::vector<std::pair<std::string, verify_report>> parts, merge_rules rules = {}) {
  try {
    (void)merge_verify_reports(parts, rules);
  } catch (const merge_error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    return e.what();
  }
  return "accepted";
}

TEST(merge_verify, refuses_reports_that_are_not_shards_of_one_run) {
  auto seed = verify_shards(5, 2);
  seed[1].second.seed = 10;
  EXPECT_NE(verify_merge_message(seed).find("seed is \"10\""), std::string::npos);
  auto strict = verify_shards(5, 2);
  strict[1].second.fp64_rule = false;  // one shard run with --strict-fp32
  EXPECT_NE(verify_merge_message(strict).find("fp64_rule is \"false\""), std::string::npos);
  auto scope = verify_shards(5, 2);
  scope[1].second.scope.cases_per_model = 6;
  EXPECT_NE(verify_merge_message(scope).find("its cases are not those of"), std::string::npos);
  auto gpu = verify_shards(5, 2);
  gpu[1].second.device = "NVIDIA H100";
  EXPECT_NE(verify_merge_message(gpu).find("--allow-different-gpu"), std::string::npos);
  auto missing = verify_shards(5, 3);
  missing.pop_back();
  EXPECT_NE(verify_merge_message(missing).find("missing"), std::string::npos);
  merge_rules allow_missing;
  allow_missing.allow_missing = true;
  const verify_report partial = merge_verify_reports(missing, allow_missing);
  EXPECT_FALSE(partial.complete);
  std::ostringstream verdict;
  EXPECT_EQ(print_verdict(partial, verdict), 1);
  auto stray = verify_shards(5, 2);
  ASSERT_EQ(stray[0].second.shard, (shard_spec{2, 2}));  // the odd indices
  stray[0].second.cases.front().index = 0;
  EXPECT_NE(verify_merge_message(stray).find("is not a case of its shard"), std::string::npos);
  auto config = verify_shards(5, 1);
  config[0].second.scope.mode = "config";
  EXPECT_NE(verify_merge_message(config).find("only fuzz runs merge"), std::string::npos);
}

TEST(merge_verify, an_empty_shard_passes_and_a_merge_of_failures_fails) {
  const verify_report empty = verify_run(3, {5, 5});
  std::ostringstream out;
  EXPECT_EQ(print_verdict(empty, out), 0);
  EXPECT_NE(out.str().find("holds none of the 3 case indices"), std::string::npos);
  std::ostringstream merged_out;
  EXPECT_EQ(print_verdict(merge_verify_reports(verify_shards(5, 2), merge_rules{}), merged_out), 1);
}

// The shard processes' scratch folder is removed with remove_tree (not std::filesystem::remove_all,
// which the GPU host's libtorch.so interposes: harness/detail/remove_tree.h).
TEST(RemoveTree, RemovesNestedFoldersAndLinksButNotWhatLinksPointTo) {
  namespace fs = std::filesystem;
  const fs::path base = fs::temp_directory_path() / ("fusebench-remove-tree-" + std::to_string(::getpid()));
  fs::create_directories(base / "tree" / "a" / "b");
  fs::create_directories(base / "outside");
  std::ofstream(base / "tree" / "a" / "b" / "f.json") << "{}";
  std::ofstream(base / "tree" / "top.txt") << "x";
  std::ofstream(base / "outside" / "keep.txt") << "keep";
  fs::create_directory_symlink(base / "outside", base / "tree" / "a" / "link");
  EXPECT_TRUE(fb::detail::remove_tree(base / "tree"));
  EXPECT_FALSE(fs::exists(base / "tree"));
  EXPECT_TRUE(fs::exists(base / "outside" / "keep.txt"));  // a link is removed, never followed
  EXPECT_FALSE(fb::detail::remove_tree(base / "tree"));     // gone already: says so
  EXPECT_TRUE(fb::detail::remove_tree(base));
  EXPECT_FALSE(fs::exists(base));
}

}  // namespace
}  // namespace fb

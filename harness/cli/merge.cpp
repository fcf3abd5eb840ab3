/// `fusebench merge`: join the files of the shards of one run (`bench --shard K/N` results files, or
/// `verify --shard K/N --json` reports) into the file one process running the whole would have
/// written. The rules are in harness/results/shard.h, harness/results/results_merge.h and
/// harness/verify/verify_report.h (merge_verify_reports).
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <unistd.h>

#include "harness/bench/runner.h"
#include "harness/cli/commands.h"
#include "harness/cli/output_paths.h"
#include "harness/results/detail/atomic_file.h"
#include "harness/results/gbench_json.h"
#include "harness/results/results_merge.h"
#include "harness/verify/verify_report.h"

namespace fb::cli {
namespace {

/// Options of `fusebench merge`.
struct merge_options {
  std::vector<std::string> inputs;  ///< files, or bench --out folders (their results.json)
  std::string out;                  ///< the merged file
  std::string gbench;               ///< bench: also the Google Benchmark JSON of the merged results
  std::string junit;                ///< verify: also a JUnit XML report of the merged report
  bool allow_missing = false;
  bool allow_incomplete = false;
  bool allow_different_gpu = false;
  bool allow_different_commit = false;
};

constexpr const char* merge_examples = R"(Which files merge: the shards of one run, each exactly once. Refused (exit 2, one line): files of
different splits (N), overlapping shards (one given twice), missing shards, and shards of different
seeds, tolerances, --strict-fp32, plug-in sets, models/cases/inputs (verify) or plans (bench: sweep or
--config, --model, --device), which are never merged; incomplete shards, shards of different GPUs (name, SMs,
L2, driver) and of different builds (git commit, libtorch, CUDA runtime, build type) are refused
unless --allow-incomplete / --allow-missing / --allow-different-gpu (alias --allow-mixed-gpus) /
--allow-different-commit say otherwise (the merged file is then marked incomplete, or joins the values with " + ").
The merged file equals the unsharded run's file except for what is measured: times, samples, the
floors' times, bandwidth, peak, date and host (bench); the check times (verify).
Exit status: 0 merged, and the merged run passed (as its unsharded run would exit 0); 1 merged, but
a case failed, was not judged, or the merge is incomplete; 2 bad usage or files that do not merge.

Examples:
  fusebench merge verify-1.json verify-2.json verify-3.json --out verify.json --junit verify.xml
      the --json reports of `fusebench verify --seed 7 --cases 1000 --shard K/3`, K = 1, 2, 3
  fusebench merge shard1/ shard2/ --out results.json --gbench gbench.json
      the --out folders of `fusebench bench --sweep standard --shard K/2`
  fusebench merge shard1/results.json shard3/results.json --allow-missing --out partial.json
      what there is of a 3-shard run; the file says "complete": false and which shard is missing)";

/// A file, or a bench --out folder's results.json.
std::string input_file(const std::string& arg) {
  std::error_code ec;
  if (std::filesystem::is_directory(arg, ec)) return (std::filesystem::path(arg) / "results.json").string();
  return arg;
}

json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(fmt::format("{}: cannot be read (no such file?)", path));
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::exception& e) {
    std::string detail = e.what();
    if (const auto cut = detail.find("] "); cut != std::string::npos) detail.erase(0, cut + 2);
    throw std::invalid_argument(fmt::format("{}: not JSON, so not a results file ({})", path, detail));
  }
}

/// The folder of `path` takes new files; checked before merging, without creating `path` (the merged
/// files are written whole at the end, or not at all).
void require_writable(const std::string& path, const char* flag) {
  if (path == "-") return;  // stdout
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::invalid_argument(fmt::format("{} {}: is a folder, not a file", flag, path));
  if (::access(folder.empty() ? "." : folder.c_str(), W_OK | X_OK) != 0)
    throw std::invalid_argument(fmt::format("{} {}: cannot write the file (its folder is missing or read-only)", flag, path));
}

int merge_bench(const merge_options& opt, const std::vector<std::pair<std::string, json>>& docs,
                const merge_rules& rules) {
  if (!opt.junit.empty()) throw std::invalid_argument("--junit is for verify reports; these are bench results");
  std::vector<named_results> parts;
  for (const auto& [name, doc] : docs) {
    try {
      parts.push_back({name, results_from_json(doc, name)});
    } catch (const results_error& e) {
      throw std::invalid_argument(e.what());
    }
  }
  const results_file merged = merge_results(parts, rules);
  if (opt.out == "-") std::cout << results_to_json(merged).dump(2) << "\n" << std::flush;
  else save_results(merged, opt.out);
  if (!opt.gbench.empty()) save_gbench_json(merged, opt.gbench);
  const bench::bench_summary summary = bench::summarize_results(merged, opt.out, opt.gbench);
  std::ostream& human = opt.out == "-" ? std::cerr : std::cout;  // stdout holds the merged file alone
  fmt::print(stderr, "merge: {} shard(s) of a bench run ({}, seed {}, {}) -> {}\n", parts.size(),
             merged.environment.sweep, merged.environment.seed,
             merged.environment.gpu_name.empty() ? merged.environment.device : merged.environment.gpu_name, opt.out);
  bench::print_summary(summary, human);
  if (!merged.status.complete) return exit_failure;
  return summary.failing > 0 || summary.impossible > 0 || !summary.unjudged_plugins.empty() ? exit_failure : exit_ok;
}

int merge_verify(const merge_options& opt, const std::vector<std::pair<std::string, json>>& docs,
                 const merge_rules& rules) {
  if (!opt.gbench.empty()) throw std::invalid_argument("--gbench is for bench results; these are verify reports");
  std::vector<std::pair<std::string, verify_report>> parts;
  for (const auto& [name, doc] : docs) parts.emplace_back(name, verify_report_from_json(doc, name));
  const verify_report merged = merge_verify_reports(parts, rules);
  // Whole files or none: a merge killed half-way must not leave a torn report beside the shards.
  // "-" is stdout: the file alone goes there, the table and verdict to stderr.
  const auto write_out = [](const std::string& path, const std::string& content) {
    if (path == "-") std::cout << content << std::flush;
    else fb::detail::write_file_atomically(path, content);
  };
  write_out(opt.out, verify_report_to_json(merged).dump(2) + "\n");
  if (!opt.junit.empty()) {
    std::ostringstream junit;
    write_junit(merged, junit);
    write_out(opt.junit, junit.str());
  }
  std::ostream& human = opt.out == "-" || opt.junit == "-" ? std::cerr : std::cout;
  fmt::print(stderr, "merge: {} shard(s) of a verify run ({} model(s) x {} case(s), seed {}, {}) -> {}\n",
             parts.size(), merged.scope.models.size(), merged.scope.cases_per_model, merged.seed, merged.device,
             opt.out);
  print_verify_table(merged, human);
  if (merged.scope.mode == "fuzz") {  // a shard stopped by its box holds fewer cases than its part plans
    std::set<std::pair<std::string, int>> ran;
    for (const verify_case_record& c : merged.cases) ran.emplace(c.model, c.index);
    human << fmt::format("merge: {} of {} planned cases ran\n", ran.size(),
                             merged.scope.cases_per_model * static_cast<int64_t>(merged.scope.models.size()));
  }
  human.flush();
  return print_verdict(merged, human) == 0 ? exit_ok : exit_failure;
}

int run_merge(const merge_options& opt) {
  std::vector<path_role> inputs;
  for (const std::string& arg : opt.inputs) {
    const std::filesystem::path file = input_file(arg);
    inputs.push_back({"FILES", file});
    // A bench shard's folder holds its gbench.json beside its results.json: the shard's too.
    if (file.filename() == "results.json") inputs.push_back({"a shard's gbench.json", file.parent_path() / "gbench.json"});
  }
  refuse_clashing_paths(inputs, {{"--out", opt.out}, {"--gbench", opt.gbench}, {"--junit", opt.junit}});
  std::vector<std::pair<std::string, json>> docs;
  std::string kind;
  for (const std::string& arg : opt.inputs) {
    const std::string path = input_file(arg);
    json doc = read_json(path);
    const std::string schema =
        doc.is_object() && doc.contains("schema") && doc.at("schema").is_string() ? doc.at("schema").get<std::string>()
                                                                                  : "";
    if (schema != results_schema_name && schema != "fusebench-verify")
      throw std::invalid_argument(fmt::format(
          "{}: not a results file (neither bench's results.json, schema {}, nor verify's --json, schema "
          "fusebench-verify)",
          path, results_schema_name));
    if (!kind.empty() && schema != kind)
      throw std::invalid_argument(fmt::format("{} is a {} file, but {} is a {} file: one merge joins one kind", path,
                                              schema, docs.front().first, kind));
    kind = schema;
    docs.emplace_back(path, std::move(doc));
  }
  require_writable(opt.out, "--out");
  if (!opt.gbench.empty()) require_writable(opt.gbench, "--gbench");
  if (!opt.junit.empty()) require_writable(opt.junit, "--junit");
  merge_rules rules;
  rules.allow_missing = opt.allow_missing;
  rules.allow_incomplete = opt.allow_incomplete;
  rules.allow_different_gpu = opt.allow_different_gpu;
  rules.allow_different_commit = opt.allow_different_commit;
  return kind == results_schema_name ? merge_bench(opt, docs, rules) : merge_verify(opt, docs, rules);
}

}  // namespace

void add_merge_command(CLI::App& app, command_action& run) {
  auto opt = std::make_shared<merge_options>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Join the results of the shards of one run (bench results, verify --json) into one file");
  cmd->add_option("files", opt->inputs,
                  "The shards' files: bench results.json (or bench --out folders) or verify --json reports")
      ->required();
  cmd->add_option("--out", opt->out, "The merged file ('-': stdout; the table then goes to stderr)")->required();
  cmd->add_option("--gbench", opt->gbench, "bench: also write the Google Benchmark JSON of the merged results");
  cmd->add_option("--junit", opt->junit, "verify: also write a JUnit XML report of the merged report ('-': stdout)");
  cmd->add_flag("--allow-missing", opt->allow_missing,
                "Merge without some shards; the merged file is marked incomplete and names them");
  cmd->add_flag("--allow-incomplete", opt->allow_incomplete,
                "Merge shards marked incomplete (interrupted); the merged file is marked incomplete");
  cmd->add_flag("--allow-different-gpu,--allow-mixed-gpus", opt->allow_different_gpu,
                "Merge shards measured on different GPUs (the merged file names them all)");
  cmd->add_flag("--allow-different-commit", opt->allow_different_commit,
                "Merge shards of different builds (git commit, libtorch, CUDA runtime, build type)");
  cmd->footer(merge_examples);
  cmd->callback([opt, &run] {
    run = [opt] {
      try {
        return run_merge(*opt);
      } catch (const std::invalid_argument& e) {  // merge_error included
        print_error(e.what());
        return exit_usage;
      } catch (const json::exception& e) {
        print_error(e.what());
        return exit_usage;
      } catch (const std::exception& e) {
        print_error(e.what());
        return exit_failure;
      }
    };
  });
}

}  // namespace fb::cli

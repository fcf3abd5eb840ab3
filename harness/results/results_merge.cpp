#include "harness/results/results_merge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace fb {
namespace {

/// A config's rows (ref, ref_tf32, each fused implementation): bench writes them one after another.
struct config_rows {
  std::vector<const case_result*> rows;
};

std::vector<config_rows> rows_by_config(const results_file& r) {
  std::vector<config_rows> groups;
  for (const case_result& c : r.cases) {
    if (groups.empty() || groups.back().rows.front()->model != c.model ||
        groups.back().rows.front()->config_label != c.config_label)
      groups.emplace_back();
    groups.back().rows.push_back(&c);
  }
  return groups;
}

std::string number_text(double x) { return std::isfinite(x) ? fmt::format("{}", x) : std::string("null"); }

}  // namespace

results_file merge_results(const std::vector<named_results>& parts, const merge_rules& rules) {
  if (parts.empty()) throw merge_error("nothing to merge");
  std::vector<merge_part> names;
  for (const named_results& p : parts) {
    try {
      names.push_back({p.name, parse_shard(p.results.environment.shard, "environment.shard")});
    } catch (const std::invalid_argument& e) {
      throw merge_error(p.name + ": " + e.what());
    }
  }
  const auto values = [&](auto get) {
    std::vector<std::string> out;
    for (const named_results& p : parts) out.push_back(fmt::format("{}", get(p.results.environment)));
    return out;
  };
  // What makes the shards parts of one run: never merged when different, whatever the flags.
  const char* same_run = "; the shards of one run are made with the same options";
  (void)agreed_value("environment.device", values([](const run_environment& e) { return e.device; }), names, false,
                     same_run);
  // The plan's digest is what the shards ran; the sweep's name may differ where a --config FILE has
  // another path on another host. Files without a digest (written before it existed) compare names.
  const bool digested = std::all_of(parts.begin(), parts.end(),
                                    [](const named_results& p) { return !p.results.environment.plan_digest.empty(); });
  if (!digested)
    (void)agreed_value("environment.sweep", values([](const run_environment& e) { return e.sweep; }), names, false,
                       same_run);
  (void)agreed_value("environment.plan_digest", values([](const run_environment& e) { return e.plan_digest; }), names,
                     false, "; they plan different configs (--sweep or --config, --model, --device differ)");
  (void)agreed_value("environment.seed", values([](const run_environment& e) { return e.seed; }), names, false,
                     same_run);
  (void)agreed_value("environment.atol", values([](const run_environment& e) { return number_text(e.atol); }), names,
                     false, same_run);
  (void)agreed_value("environment.rtol", values([](const run_environment& e) { return number_text(e.rtol); }), names,
                     false, same_run);
  // A shard without a plug-in would merge into a run that seems to have timed it everywhere.
  (void)agreed_value("environment.plugins",
                     values([](const run_environment& e) { return fmt::format("[{}]", fmt::join(e.plugins, ", ")); }),
                     names, false, "; the shards of one run load the same plug-ins (--plugin, FUSEBENCH_PLUGINS)");
  const char* gpu_hint = "; --allow-different-gpu merges them anyway";
  const char* build_hint = "; --allow-different-commit merges them anyway";
  run_environment merged_env;
  merged_env.gpu_name = agreed_value("environment.gpu_name", values([](const run_environment& e) { return e.gpu_name; }),
                                     names, rules.allow_different_gpu, gpu_hint);
  const std::string sm_count = agreed_value("environment.sm_count",
                                            values([](const run_environment& e) { return e.sm_count; }), names,
                                            rules.allow_different_gpu, gpu_hint);
  const std::string l2_bytes = agreed_value("environment.l2_bytes",
                                            values([](const run_environment& e) { return e.l2_bytes; }), names,
                                            rules.allow_different_gpu, gpu_hint);
  merged_env.driver = agreed_value("environment.driver", values([](const run_environment& e) { return e.driver; }),
                                   names, rules.allow_different_gpu, gpu_hint);
  merged_env.git_commit = agreed_value("environment.git_commit",
                                       values([](const run_environment& e) { return e.git_commit; }), names,
                                       rules.allow_different_commit, build_hint);
  merged_env.source_digest = agreed_value("environment.source_digest",
                                          values([](const run_environment& e) { return e.source_digest; }), names,
                                          rules.allow_different_commit, build_hint);
  merged_env.libtorch = agreed_value("environment.libtorch", values([](const run_environment& e) { return e.libtorch; }),
                                     names, rules.allow_different_commit, build_hint);
  merged_env.cuda_runtime = agreed_value("environment.cuda_runtime",
                                         values([](const run_environment& e) { return e.cuda_runtime; }), names,
                                         rules.allow_different_commit, build_hint);
  merged_env.build_type = agreed_value("environment.build_type",
                                       values([](const run_environment& e) { return e.build_type; }), names,
                                       rules.allow_different_commit, build_hint);
  const shard_coverage coverage = check_coverage(names, rules);

  // The environment of the first shard present, with what the merge knows better.
  const int pieces = static_cast<int>(coverage.order.size());
  const named_results* first = nullptr;
  for (const int i : coverage.order)
    if (i >= 0 && first == nullptr) first = &parts[static_cast<std::size_t>(i)];
  results_file out;
  out.environment = first->results.environment;
  out.environment.gpu_name = merged_env.gpu_name;
  out.environment.driver = merged_env.driver;
  out.environment.git_commit = merged_env.git_commit;
  out.environment.source_digest = merged_env.source_digest;
  out.environment.libtorch = merged_env.libtorch;
  out.environment.cuda_runtime = merged_env.cuda_runtime;
  out.environment.build_type = merged_env.build_type;
  if (sm_count.find('+') != std::string::npos) out.environment.sm_count = 0;  // different GPUs: no one count
  if (l2_bytes.find('+') != std::string::npos) out.environment.l2_bytes = 0;
  out.environment.shard = to_string(rules.target);
  std::vector<std::string> hosts;
  for (const named_results& p : parts) {
    const run_environment& e = p.results.environment;
    if (!e.date.empty() && (out.environment.date.empty() || e.date < out.environment.date)) out.environment.date = e.date;
    if (std::find(hosts.begin(), hosts.end(), e.hostname) == hosts.end()) hosts.push_back(e.hostname);
  }
  out.environment.hostname = fmt::format("{}", fmt::join(hosts, ","));

  std::vector<std::string> reasons;
  for (const int i : coverage.order) {
    if (i < 0) continue;
    const named_results& p = parts[static_cast<std::size_t>(i)];
    out.status.planned_cases += p.results.status.planned_cases;
    if (p.results.status.complete) continue;
    if (!rules.allow_incomplete)
      throw merge_error(fmt::format("{} is an incomplete run ({}); --allow-incomplete merges it anyway", p.name,
                                    p.results.status.incomplete_reason));
    reasons.push_back(fmt::format("shard {}: {}", p.results.environment.shard, p.results.status.incomplete_reason));
  }
  if (!coverage.missing.empty()) {
    std::vector<std::string> missing;
    for (const int k : coverage.missing) missing.push_back(fmt::format("{}/{}", k, coverage.count));
    reasons.push_back(fmt::format("merged without shard{} {}", missing.size() > 1 ? "s" : "", fmt::join(missing, ", ")));
  }
  out.status.complete = reasons.empty();
  out.status.incomplete_reason = fmt::format("{}", fmt::join(reasons, "; "));

  // Shard d of the target got the target's configs j with j % pieces == d, in order: deal them back.
  std::vector<std::vector<config_rows>> groups(static_cast<std::size_t>(pieces));
  std::size_t remaining = 0;
  for (int d = 0; d < pieces; ++d)
    if (const int i = coverage.order[static_cast<std::size_t>(d)]; i >= 0) {
      groups[static_cast<std::size_t>(d)] = rows_by_config(parts[static_cast<std::size_t>(i)].results);
      remaining += groups[static_cast<std::size_t>(d)].size();
    }
  std::vector<std::size_t> next(static_cast<std::size_t>(pieces), 0);
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (std::size_t j = 0; remaining > 0; ++j) {
    const std::size_t d = j % static_cast<std::size_t>(pieces);
    if (next[d] >= groups[d].size()) continue;
    for (const case_result* c : groups[d][next[d]].rows) {
      if (!seen.emplace(c->model, c->config_label, c->implementation).second)
        throw merge_error(fmt::format("{} holds {}/{}/{}, which an earlier shard holds too: overlapping shards",
                                      parts[static_cast<std::size_t>(coverage.order[d])].name, c->model,
                                      c->config_label, c->implementation));
      out.cases.push_back(*c);
    }
    ++next[d];
    --remaining;
  }
  return out;
}

}  // namespace fb

#include "harness/history/history_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/process/command_output.h"
#include "harness/report/report_model.h"

namespace fb::history {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

/// A path as one single-quoted shell word.
std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw history_error(fmt::format("cannot open '{}'", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A results file found in a folder: parsed first, so that other JSON files can be told apart.
std::optional<results_file> read_if_results(const fs::path& path) {
  json doc;
  try {
    doc = json::parse(read_text(path));
  } catch (const json::exception& e) {
    std::string_view detail = e.what();
    if (const auto cut = detail.find("] "); cut != std::string_view::npos) detail.remove_prefix(cut + 2);
    throw history_error(fmt::format("'{}' is not valid JSON (truncated or corrupt?): {}", path.string(), detail));
  }
  const auto schema = doc.is_object() ? doc.find("schema") : doc.end();
  if (!doc.is_object() || schema == doc.end() || *schema != std::string(results_schema_name)) return std::nullopt;
  return results_from_json(doc, path.string());
}

/// Seconds since 1970 of an ISO-8601 UTC date ("2026-11-25T09:36:18Z"); nullopt when it is not one.
std::optional<std::int64_t> parse_utc(const std::string& date) {
  std::tm tm{};
  std::istringstream in(date);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  return static_cast<std::int64_t>(::timegm(&tm));
}

/// The commit's entry: by full hash, or by a unique prefix of at least 7 characters.
const commit_position* find_commit(const commit_order& commits, const std::string& hash) {
  if (hash.size() < 7) return nullptr;
  const auto it = commits.lower_bound(hash);
  if (it == commits.end() || it->first.compare(0, hash.size(), hash) != 0) return nullptr;
  const auto next = std::next(it);
  if (hash.size() < it->first.size() && next != commits.end() && next->first.compare(0, hash.size(), hash) == 0)
    return nullptr;  // ambiguous prefix
  return &it->second;
}

/// Order of implementations in a chart: the strict reference, TF32, the peers, then the fused ones by name.
std::tuple<int, std::string> implementation_rank(const std::string& implementation) {
  if (implementation == report::ref_impl) return {0, implementation};
  if (implementation == report::ref_tf32_impl) return {1, implementation};
  if (is_peer_implementation(implementation)) return {2, implementation};
  return {3, implementation};
}

/// Adds the steps of every series, found among its usable points.
void find_steps(history& h) {
  for (run_series& s : h.series) {
    std::vector<std::vector<double>> runs;
    std::vector<std::size_t> used;
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      if (!s.points[i].excluded_because.empty()) continue;
      runs.push_back(s.points[i].samples);
      used.push_back(i);
    }
    for (const stats::change_point& cp : stats::find_change_points(runs, h.settings.steps)) {
      series_step step;
      step.last_run_before = s.points[used[cp.index - 1]].run;
      step.first_run_after = s.points[used[cp.index]].run;
      step.level_before_runs = cp.index - cp.before_first;
      step.level_after_runs = cp.after_end - cp.index;
      step.before_median = cp.before_median;
      step.after_median = cp.after_median;
      step.ratio = cp.ratio;
      step.p_value = cp.p_value;
      s.steps.push_back(step);
    }
  }
}

}  // namespace

std::string slug(std::string_view name) {
  std::string out;
  for (char ch : name) {
    if (std::isalnum(static_cast<unsigned char>(ch)) != 0)
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

std::string run_record::get_short_commit() const {
  return commit.substr(0, std::min<std::size_t>(commit.size(), 7)) + (dirty ? "-dirty" : "");
}

std::string run_record::get_label() const {
  // "2026-11-23T21:01:15Z" -> "2026-11-23 21:01Z"
  const std::string when = date.size() >= 16 ? date.substr(0, 10) + " " + date.substr(11, 5) + "Z" : date;
  return fmt::format("{} · {}", get_short_commit(), when);
}

std::string run_record::get_caveat() const {
  std::vector<std::string> parts;
  if (dirty) parts.emplace_back("dirty tree");
  if (source_mismatch) parts.push_back(source_check);
  if (!complete) parts.push_back(fmt::format("incomplete run: {}", incomplete_reason.empty() ? "no reason recorded" : incomplete_reason));
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string run_series::get_name() const {
  return fmt::format("{} {}{}", implementation, config_label,
                     config_variant > 1 ? fmt::format(" (config {})", config_variant) : std::string());
}

std::vector<loaded_results> load_results_files(const std::vector<fs::path>& paths, std::vector<std::string>& skipped) {
  std::vector<loaded_results> files;
  for (const fs::path& path : paths) {
    std::error_code ec;
    if (!fs::exists(path, ec)) throw history_error(fmt::format("'{}' does not exist", path.string()));
    try {
      if (!fs::is_directory(path, ec)) {
        files.push_back({path.string(), load_results(path), {}});
        continue;
      }
      std::vector<fs::path> found;
      for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec))
        if (it->is_regular_file(ec) && it->path().extension() == ".json") found.push_back(it->path());
      if (ec) throw history_error(fmt::format("cannot search '{}': {}", path.string(), ec.message()));
      std::sort(found.begin(), found.end());
      for (const fs::path& file : found) {
        if (std::optional<results_file> r = read_if_results(file))
          files.push_back({file.string(), std::move(*r), {}});
        else
          skipped.push_back(file.string());
      }
    } catch (const results_error& e) {
      throw history_error(e.what());
    }
  }
  return files;
}

fs::path find_repository(const fs::path& path) {
  std::error_code ec;
  const fs::path folder = fs::is_directory(path, ec) ? path : path.parent_path();
  const std::optional<std::string> top = command_output(
      fmt::format("exec 2>/dev/null; git -C {} rev-parse --show-toplevel", shell_quoted(folder.empty() ? "." : folder.string())));
  if (!top) return {};
  std::string text = *top;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

void check_sources(std::vector<loaded_results>& files, source_repository* repository) {
  for (loaded_results& file : files)
    file.source_check = check_provenance(file.results.environment.git_commit, file.results.environment.source_digest, repository);
}

commit_order read_commit_order(const fs::path& repository) {
  commit_order commits;
  if (repository.empty()) return commits;
  const std::optional<std::string> log = command_output(fmt::format(
      "exec 2>/dev/null; git -C {} log --all --topo-order --reverse --format='%H %ct'", shell_quoted(repository.string())));
  if (!log) return commits;
  std::istringstream lines(*log);
  std::string hash;
  std::int64_t time = 0;
  for (std::size_t index = 0; lines >> hash >> time; ++index) commits[hash] = commit_position{index, time};
  return commits;
}

history build_history(std::vector<loaded_results> files, const commit_order& commits, const history_settings& settings) {
  if (!(settings.steps.min_effect >= 0.0)) throw history_error("--min-effect must be >= 0");
  if (!(settings.steps.alpha > 0.0 && settings.steps.alpha < 1.0)) throw history_error("--alpha must lie in (0, 1)");
  history h;
  h.settings = settings;

  // One record per run; identical copies join it, a different file claiming the same run is refused.
  struct read_run {
    run_record record;
    const results_file* results;
    std::string dump;
  };
  std::vector<read_run> runs;
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string, std::uint64_t, std::string>,
           std::size_t>
      by_identity;
  std::set<std::string> devices_seen;
  for (const loaded_results& file : files) {
    const run_environment& env = file.results.environment;
    if (env.shard != "1/1")
      throw history_error(fmt::format("'{}' is shard {} of a run: join the shards first (fusebench merge)", file.source,
                                      env.shard));
    run_record r;
    r.sources.push_back(file.source);
    r.device = !env.gpu_name.empty() ? env.gpu_name : fmt::format("CPU ({})", env.hostname);
    r.device_slug = slug(r.device);
    const std::string dirty_suffix = "-dirty";
    r.commit = env.git_commit.empty() ? "unknown" : env.git_commit;
    if (r.commit.size() > dirty_suffix.size() &&
        r.commit.compare(r.commit.size() - dirty_suffix.size(), dirty_suffix.size(), dirty_suffix) == 0) {
      r.dirty = true;
      r.commit.resize(r.commit.size() - dirty_suffix.size());
    }
    // The digest decides where it names a commit: the run measured that commit's sources.
    const provenance& check = file.source_check;
    if (check.verdict == provenance::status::matches_claim || check.verdict == provenance::status::matches_other) {
      r.commit = check.commit;
      r.dirty = false;
    } else if (check.verdict == provenance::status::matches_none) {
      r.dirty = true;
    }
    r.source_check = check.get_text();
    r.source_mismatch = check.is_mismatch();
    r.date = env.date;
    r.hostname = env.hostname;
    r.sweep = env.sweep;
    r.complete = file.results.status.complete;
    r.incomplete_reason = file.results.status.incomplete_reason;
    devices_seen.insert(r.device);
    devices_seen.insert(r.device_slug);
    const auto key = std::make_tuple(r.device, env.git_commit, env.date, env.hostname, env.sweep, env.seed, env.plan_digest);
    std::string dump = results_to_json(file.results).dump();
    if (const auto it = by_identity.find(key); it != by_identity.end()) {
      read_run& same = runs[it->second];
      if (same.dump != dump)
        throw history_error(fmt::format("'{}' and '{}' hold the same run ({}, commit {}, {}) with different contents",
                                        same.record.sources.front(), file.source, r.device, env.git_commit, env.date));
      same.record.sources.push_back(file.source);
      continue;
    }
    by_identity.emplace(key, runs.size());
    runs.push_back({std::move(r), &file.results, std::move(dump)});
  }
  for (const std::string& wanted : settings.gpus)
    if (devices_seen.count(wanted) == 0 && devices_seen.count(slug(wanted)) == 0)
      throw history_error(fmt::format("--gpu {}: no run of that GPU among the files (GPUs: {})", wanted,
                                      fmt::join(devices_seen, ", ")));
  if (!settings.gpus.empty()) {
    const auto unwanted = [&](const read_run& run) {
      return std::none_of(settings.gpus.begin(), settings.gpus.end(), [&](const std::string& g) {
        return g == run.record.device || slug(g) == run.record.device_slug;
      });
    };
    runs.erase(std::remove_if(runs.begin(), runs.end(), unwanted), runs.end());
  }
  if (runs.empty()) throw history_error("no results files among the paths given");

  // Order: by commit where the repository knows it, else by run date.
  std::size_t known = 0;
  struct sort_key {
    std::int64_t time;
    std::size_t topological;
    std::string date;
  };
  std::vector<std::pair<sort_key, std::size_t>> order;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    run_record& r = runs[i].record;
    const commit_position* at = find_commit(commits, r.commit);
    r.commit_in_repository = at != nullptr;
    known += at != nullptr ? 1 : 0;
    const std::optional<std::int64_t> run_time = parse_utc(r.date);
    sort_key key{at != nullptr ? at->commit_time : run_time.value_or(0),
                 at != nullptr ? at->topological_index : std::numeric_limits<std::size_t>::max(), r.date};
    order.emplace_back(std::move(key), i);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& l, const auto& r) {
    return std::tie(l.first.time, l.first.topological, l.first.date) <
           std::tie(r.first.time, r.first.topological, r.first.date);
  });
  if (commits.empty())
    h.ordering = "Runs are ordered by run date (no git repository to order their commits).";
  else if (known == runs.size())
    h.ordering = "Runs are ordered by commit (the repository's history; runs of one commit by run date).";
  else
    h.ordering = fmt::format(
        "Runs are ordered by commit date where the repository holds the commit ({} of {} runs), else by run date.",
        known, runs.size());

  std::vector<const results_file*> contents;
  for (const auto& [key, i] : order) {
    h.runs.push_back(runs[i].record);
    contents.push_back(runs[i].results);
  }

  // Series: (device, model, implementation, label, config). A label whose config changed over time
  // becomes a second series, never one line through two problems.
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, std::size_t> series_index;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::vector<std::string>> configs_of_label;
  for (std::size_t run = 0; run < h.runs.size(); ++run) {
    const run_record& r = h.runs[run];
    for (const case_result& c : contents[run]->cases) {
      if (!c.stats) continue;  // never timed: no point to draw
      const std::string config = c.config.dump();
      const auto key = std::make_tuple(r.device, c.model, c.implementation, c.config_label, config);
      auto it = series_index.find(key);
      if (it == series_index.end()) {
        run_series s;
        s.device = r.device;
        s.device_slug = r.device_slug;
        s.model = c.model;
        s.kernelbench_id = c.kernelbench_id;
        s.implementation = c.implementation;
        s.config_label = c.config_label;
        s.config = config;
        std::vector<std::string>& seen = configs_of_label[std::make_tuple(r.device, c.model, c.implementation, c.config_label)];
        seen.push_back(config);
        s.config_variant = static_cast<int>(seen.size());
        it = series_index.emplace(key, h.series.size()).first;
        h.series.push_back(std::move(s));
      }
      series_point p;
      p.run = run;
      p.median = c.stats->median;
      p.p10 = c.stats->p10;
      p.p90 = c.stats->p90;
      p.n = c.stats->n;
      p.samples = c.stats->samples;
      if (c.floor) p.floor_seconds = c.floor->floor_seconds;
      p.outcome = c.outcome;
      // The strict reference of the same run and config.
      const auto ref = std::find_if(contents[run]->cases.begin(), contents[run]->cases.end(), [&](const case_result& o) {
        return o.model == c.model && o.config_label == c.config_label && o.implementation == report::ref_impl;
      });
      if (ref != contents[run]->cases.end() && ref->stats && ref->outcome == fb::outcome::passed &&
          c.outcome == fb::outcome::passed && p.median > 0.0)
        p.speedup = ref->stats->median / p.median;
      std::vector<std::string> why;
      if (settings.clean_runs_only && r.dirty) why.emplace_back("dirty tree");
      if (settings.clean_runs_only && !r.complete) why.emplace_back("incomplete run");
      if (c.outcome != fb::outcome::passed) why.push_back(fmt::format("case {}", to_string(c.outcome)));
      p.excluded_because = fmt::format("{}", fmt::join(why, ", "));
      h.series[it->second].points.push_back(std::move(p));
    }
  }
  find_steps(h);

  // Charts: per (device, model), devices and models by name; in a chart the strict reference first,
  // then TF32, then the fused implementations; the default config before the others.
  std::map<std::pair<std::string, std::string>, std::size_t> chart_index;
  std::vector<std::size_t> ordered(h.series.size());
  for (std::size_t i = 0; i < ordered.size(); ++i) ordered[i] = i;
  std::sort(ordered.begin(), ordered.end(), [&](std::size_t a, std::size_t b) {
    const run_series& l = h.series[a];
    const run_series& r = h.series[b];
    return std::make_tuple(l.device, l.model, implementation_rank(l.implementation),
                           !report::is_default_label(l.config_label), l.config_label, l.config_variant) <
           std::make_tuple(r.device, r.model, implementation_rank(r.implementation),
                           !report::is_default_label(r.config_label), r.config_label, r.config_variant);
  });
  for (std::size_t i : ordered) {
    const run_series& s = h.series[i];
    auto it = chart_index.find({s.device, s.model});
    if (it == chart_index.end()) {
      chart c;
      c.device = s.device;
      c.device_slug = s.device_slug;
      c.model = s.model;
      c.kernelbench_id = s.kernelbench_id;
      it = chart_index.emplace(std::make_pair(s.device, s.model), h.charts.size()).first;
      h.charts.push_back(std::move(c));
    }
    h.charts[it->second].series.push_back(i);
  }
  for (chart& c : h.charts) {
    std::set<std::size_t> runs_in_chart;
    for (std::size_t i : c.series)
      for (const series_point& p : h.series[i].points) runs_in_chart.insert(p.run);
    c.runs.assign(runs_in_chart.begin(), runs_in_chart.end());
  }
  return h;
}

}  // namespace fb::history

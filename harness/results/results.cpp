#include "harness/results/results.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/format/seed_json.h"
#include "harness/results/detail/atomic_file.h"
#include "harness/results/shard.h"
#include "harness/stats/summary.h"

namespace fb {
namespace {

using json = nlohmann::json;

/// JSON has no NaN or infinity; nlohmann would write them as null anyway, so say so explicitly.
json number_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json to_json(const run_environment& env) {
  return json{{"device", env.device},
              {"gpu_name", env.gpu_name},
              {"cpu_name", env.cpu_name},
              {"sm_count", env.sm_count},
              {"l2_bytes", env.l2_bytes},
              {"driver", env.driver},
              {"cuda_runtime", env.cuda_runtime},
              {"libtorch", env.libtorch},
              {"git_commit", env.git_commit},
              {"source_digest", env.source_digest},
              {"build_type", env.build_type},
              {"date", env.date},
              {"hostname", env.hostname},
              {"measured_bandwidth", number_or_null(env.measured_bandwidth)},
              {"measured_fp32_peak", number_or_null(env.measured_fp32_peak)},
              {"measured_fp64_mma_peak", number_or_null(env.measured_fp64_mma_peak)},
              {"sweep", env.sweep},
              {"seed", seed_to_json(env.seed)},
              {"atol", number_or_null(env.atol)},
              {"rtol", number_or_null(env.rtol)},
              {"shard", env.shard},
              {"plan_digest", env.plan_digest},
              {"plugins", env.plugins}};
}

json to_json(const timing_stats& s) {
  json samples = json::array();
  for (double x : s.samples) samples.push_back(number_or_null(x));
  return json{{"median", number_or_null(s.median)}, {"p10", number_or_null(s.p10)},
              {"p90", number_or_null(s.p90)},       {"mean", number_or_null(s.mean)},
              {"stdev", number_or_null(s.stdev)},   {"n", s.n},
              {"samples", std::move(samples)}};
}

json to_json(const floor_estimate& f) {
  return json{{"bytes", number_or_null(f.bytes)},
              {"flops", number_or_null(f.flops)},
              {"floor_seconds", number_or_null(f.floor_seconds)},
              {"flop_unit", f.flop_unit},
              {"percent_of_floor", number_or_null(f.percent_of_floor)},
              {"impossible", f.impossible}};
}

json to_json(const case_result& c) {
  json j{{"model", c.model},
         {"kernelbench_id", c.kernelbench_id},
         {"config", c.config.is_null() ? json::object() : c.config},
         {"config_label", c.config_label},
         {"problem_size", number_or_null(c.problem_size)},
         {"implementation", c.implementation},
         {"outcome", std::string(to_string(c.outcome))},
         {"message", c.message},
         {"max_abs_error", number_or_null(c.max_abs_error)},
         {"max_rel_error", number_or_null(c.max_rel_error)},
         {"tolerance_ratio", number_or_null(c.tolerance_ratio)}};
  j["decided_by"] = c.decided_by ? json(std::string(to_string(*c.decided_by))) : json(nullptr);
  j["stats"] = c.stats ? to_json(*c.stats) : json(nullptr);
  j["floor"] = c.floor ? to_json(*c.floor) : json(nullptr);
  if (c.peer)
    j["peer"] = json{{"torch_version", c.peer->torch_version},
                     {"share_within_tolerance", number_or_null(c.peer->share_within_tolerance)},
                     {"compile_seconds", c.peer->compile_seconds ? number_or_null(*c.peer->compile_seconds) : json(nullptr)}};
  return j;
}

/// Reads typed fields and names the full path of whatever is missing or mistyped, so that a user
/// can find `cases[3].stats.median` in a 2 MB file.
class field_reader {
 public:
  explicit field_reader(std::string_view source) : m_source(source) {}

  [[noreturn]] void fail(std::string_view problem) const {
    throw results_error(fmt::format("results file '{}': {}", m_source, problem));
  }

  [[nodiscard]] static std::string join(std::string_view parent, std::string_view key) {
    return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
  }

  const json& require(const json& object, std::string_view parent, const char* key) const {
    const auto it = object.find(key);
    if (it == object.end()) fail(fmt::format("field {} is missing", join(parent, key)));
    return *it;
  }

  void expect_object(const json& value, const std::string& path) const {
    if (!value.is_object()) fail(fmt::format("field {} has type {}, expected an object", path, value.type_name()));
  }

  [[nodiscard]] std::string get_string(const json& object, std::string_view parent, const char* key) const {
    const json& v = require(object, parent, key);
    if (!v.is_string()) mistyped(join(parent, key), v, "a string");
    return v.get<std::string>();
  }

  /// A number, or null for a value that was not finite when written.
  [[nodiscard]] double get_number(const json& value, const std::string& path) const {
    if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!value.is_number()) mistyped(path, value, "a number");
    return value.get<double>();
  }
  [[nodiscard]] double get_number(const json& object, std::string_view parent, const char* key) const {
    return get_number(require(object, parent, key), join(parent, key));
  }

  /// A time or spread [seconds]: a finite number >= 0. null (a NaN when written), infinity or a
  /// negative time means the run measured nothing usable.
  [[nodiscard]] double get_time(const json& value, const std::string& path) const {
    if (value.is_null()) fail(fmt::format("field {} is null, expected a time in seconds", path));
    const double t = get_number(value, path);
    if (!std::isfinite(t) || t < 0.0) fail(fmt::format("field {} is {}, expected a finite time >= 0 seconds", path, t));
    return t;
  }
  [[nodiscard]] double get_time(const json& object, std::string_view parent, const char* key) const {
    return get_time(require(object, parent, key), join(parent, key));
  }

  [[nodiscard]] std::int64_t get_integer(const json& object, std::string_view parent, const char* key) const {
    const json& v = require(object, parent, key);
    if (!v.is_number_integer()) mistyped(join(parent, key), v, "an integer");
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      fail(fmt::format("field {} is {}, which does not fit in a signed 64-bit integer", join(parent, key), v.dump()));
    return v.get<std::int64_t>();
  }

  [[nodiscard]] int get_int(const json& object, std::string_view parent, const char* key) const {
    const std::int64_t v = get_integer(object, parent, key);
    if (v < INT32_MIN || v > INT32_MAX) fail(fmt::format("field {} is {}, out of range", join(parent, key), v));
    return static_cast<int>(v);
  }

  [[nodiscard]] std::uint64_t get_unsigned(const json& object, std::string_view parent, const char* key) const {
    const json& v = require(object, parent, key);
    if (!v.is_number_unsigned()) mistyped(join(parent, key), v, "a non-negative integer");
    return v.get<std::uint64_t>();
  }

  /// A seed: a decimal string (exact in jq and JavaScript), or a non-negative integer (older files).
  [[nodiscard]] std::uint64_t get_seed(const json& object, std::string_view parent, const char* key) const {
    const json& v = require(object, parent, key);
    const std::optional<std::uint64_t> s = seed_from_json(v);
    if (!s) mistyped(join(parent, key), v, "a seed (0 to 18446744073709551615 as a decimal string)");
    return *s;
  }

  [[nodiscard]] bool get_bool(const json& object, std::string_view parent, const char* key) const {
    const json& v = require(object, parent, key);
    if (!v.is_boolean()) mistyped(join(parent, key), v, "a boolean");
    return v.get<bool>();
  }

 private:
  [[noreturn]] void mistyped(const std::string& path, const json& value, std::string_view expected) const {
    // "number" alone would hide why 3.5 is wrong for an integer field, so show the value too.
    const std::string shown = value.is_primitive() ? fmt::format(" ({})", value.dump()) : std::string();
    fail(fmt::format("field {} has type {}{}, expected {}", path, value.type_name(), shown, expected));
  }

  std::string m_source;
};

run_environment environment_from_json(const field_reader& r, const json& j, const std::string& p, int version) {
  r.expect_object(j, p);
  run_environment env;
  env.device = r.get_string(j, p, "device");
  env.gpu_name = r.get_string(j, p, "gpu_name");
  if (j.contains("cpu_name")) env.cpu_name = r.get_string(j, p, "cpu_name");  // optional: newer than the schema
  env.sm_count = r.get_int(j, p, "sm_count");
  env.l2_bytes = r.get_integer(j, p, "l2_bytes");
  env.driver = r.get_string(j, p, "driver");
  env.cuda_runtime = r.get_string(j, p, "cuda_runtime");
  env.libtorch = r.get_string(j, p, "libtorch");
  env.git_commit = r.get_string(j, p, "git_commit");
  // Optional: files written before the source digest was recorded.
  if (j.contains("source_digest")) env.source_digest = r.get_string(j, p, "source_digest");
  env.build_type = r.get_string(j, p, "build_type");
  env.date = r.get_string(j, p, "date");
  env.hostname = r.get_string(j, p, "hostname");
  env.measured_bandwidth = r.get_number(j, p, "measured_bandwidth");
  env.measured_fp32_peak = r.get_number(j, p, "measured_fp32_peak");
  // Optional: files written before the fp64 MMA peak was measured.
  if (j.contains("measured_fp64_mma_peak")) env.measured_fp64_mma_peak = r.get_number(j, p, "measured_fp64_mma_peak");
  env.sweep = r.get_string(j, p, "sweep");
  env.seed = r.get_seed(j, p, "seed");
  if (version >= 2) {
    env.atol = r.get_number(j, p, "atol");
    env.rtol = r.get_number(j, p, "rtol");
  }
  // Optional: files written before sharding existed hold the whole plan.
  if (j.contains("shard")) {
    env.shard = r.get_string(j, p, "shard");
    try {
      (void)parse_shard(env.shard, "field environment.shard");
    } catch (const std::invalid_argument& e) {
      r.fail(e.what());
    }
  }
  if (j.contains("plan_digest")) env.plan_digest = r.get_string(j, p, "plan_digest");
  // Optional: files written before the plug-in set was recorded.
  if (j.contains("plugins")) {
    const json& plugins = j.at("plugins");
    if (!plugins.is_array()) r.fail("field " + p + ".plugins is not an array");
    for (const json& name : plugins) {
      if (!name.is_string()) r.fail("field " + p + ".plugins holds a non-string");
      env.plugins.push_back(name.get<std::string>());
    }
  }
  return env;
}

timing_stats stats_from_json(const field_reader& r, const json& j, const std::string& p) {
  r.expect_object(j, p);
  timing_stats s;
  s.median = r.get_time(j, p, "median");
  s.p10 = r.get_time(j, p, "p10");
  s.p90 = r.get_time(j, p, "p90");
  s.mean = r.get_time(j, p, "mean");
  s.stdev = r.get_time(j, p, "stdev");
  s.n = r.get_integer(j, p, "n");
  const json& samples = r.require(j, p, "samples");
  const std::string samples_path = field_reader::join(p, "samples");
  if (!samples.is_array())
    r.fail(fmt::format("field {} has type {}, expected an array", samples_path, samples.type_name()));
  s.samples.reserve(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const std::string path = fmt::format("{}[{}]", samples_path, i);
    s.samples.push_back(r.get_time(samples[i], path));
  }
  // A summary without its samples cannot be tested for a change, and one whose n disagrees with them
  // was not written by `bench`: compare would judge numbers nobody measured.
  if (s.samples.empty()) r.fail(fmt::format("field {} is empty, but the stats say n = {}", samples_path, s.n));
  if (s.n != static_cast<std::int64_t>(s.samples.size()))
    r.fail(fmt::format("field {} is {}, but {} holds {} samples", field_reader::join(p, "n"), s.n, samples_path,
                       s.samples.size()));
  return s;
}

floor_estimate floor_from_json(const field_reader& r, const json& j, const std::string& p) {
  r.expect_object(j, p);
  floor_estimate f;
  f.bytes = r.get_number(j, p, "bytes");
  f.flops = r.get_number(j, p, "flops");
  f.floor_seconds = r.get_number(j, p, "floor_seconds");
  // Optional: files written before the floor named its unit divided by the FP32 peak.
  if (j.contains("flop_unit")) {
    f.flop_unit = r.get_string(j, p, "flop_unit");
    const char* fp32 = arithmetic_unit_name(arithmetic_unit::fp32_fma);
    const char* fp64 = arithmetic_unit_name(arithmetic_unit::fp64_mma);
    if (f.flop_unit != fp32 && f.flop_unit != fp64)
      r.fail(fmt::format("field {} is \"{}\", expected \"{}\" or \"{}\"", field_reader::join(p, "flop_unit"),
                         f.flop_unit, fp32, fp64));
  }
  f.percent_of_floor = r.get_number(j, p, "percent_of_floor");
  f.impossible = r.get_bool(j, p, "impossible");
  return f;
}

case_result case_from_json(const field_reader& r, const json& j, const std::string& p, int version) {
  r.expect_object(j, p);
  case_result c;
  c.model = r.get_string(j, p, "model");
  c.kernelbench_id = r.get_int(j, p, "kernelbench_id");
  c.config = r.require(j, p, "config");
  r.expect_object(c.config, field_reader::join(p, "config"));
  c.config_label = r.get_string(j, p, "config_label");
  c.problem_size = r.get_number(j, p, "problem_size");
  c.implementation = r.get_string(j, p, "implementation");
  const std::string outcome_name = r.get_string(j, p, "outcome");
  const std::optional<fb::outcome> o = outcome_from_string(outcome_name);
  if (!o) {
    std::vector<std::string_view> names;
    for (fb::outcome known : all_outcomes) names.push_back(to_string(known));
    r.fail(fmt::format("field {} is \"{}\", expected one of {}", field_reader::join(p, "outcome"), outcome_name,
                       fmt::join(names, ", ")));
  }
  c.outcome = *o;
  c.message = r.get_string(j, p, "message");
  c.max_abs_error = r.get_number(j, p, "max_abs_error");
  c.max_rel_error = r.get_number(j, p, "max_rel_error");
  if (version >= 2) {
    c.tolerance_ratio = r.get_number(j, p, "tolerance_ratio");
    const json& rule = r.require(j, p, "decided_by");
    const std::string path = field_reader::join(p, "decided_by");
    if (!rule.is_null()) {
      if (!rule.is_string()) r.fail(fmt::format("field {} has type {}, expected a string", path, rule.type_name()));
      c.decided_by = verdict_rule_from_string(rule.get<std::string>());
      if (!c.decided_by) {
        std::vector<std::string_view> names;
        for (verdict_rule known : all_verdict_rules) names.push_back(to_string(known));
        r.fail(fmt::format("field {} is \"{}\", expected one of {}", path, rule.get<std::string>(), fmt::join(names, ", ")));
      }
    }
  }
  // stats and floor are optional: absent or null means "not timed" / "no floor".
  if (const auto it = j.find("stats"); it != j.end() && !it->is_null())
    c.stats = stats_from_json(r, *it, field_reader::join(p, "stats"));
  if (const auto it = j.find("floor"); it != j.end() && !it->is_null())
    c.floor = floor_from_json(r, *it, field_reader::join(p, "floor"));
  if (const auto it = j.find("peer"); it != j.end() && !it->is_null()) {
    const std::string q = field_reader::join(p, "peer");
    r.expect_object(*it, q);
    peer_details d;
    d.torch_version = r.get_string(*it, q, "torch_version");
    d.share_within_tolerance = r.get_number(*it, q, "share_within_tolerance");
    if (!std::isnan(d.share_within_tolerance) && !(d.share_within_tolerance >= 0.0 && d.share_within_tolerance <= 1.0))
      r.fail(fmt::format("field {}.share_within_tolerance is {}, expected a share from 0 to 1", q,
                         d.share_within_tolerance));
    if (const json& cs = r.require(*it, q, "compile_seconds"); !cs.is_null())
      d.compile_seconds = r.get_number(*it, q, "compile_seconds");
    c.peer = d;
  }
  return c;
}

}  // namespace

timing_stats summarize_samples(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize_samples: no samples");
  timing_stats s;
  s.median = stats::median(samples);
  s.p10 = stats::percentile(samples, 10.0);
  s.p90 = stats::percentile(samples, 90.0);
  s.mean = stats::mean(samples);
  s.stdev = stats::stdev(samples);
  s.n = static_cast<std::int64_t>(samples.size());
  s.samples = std::move(samples);
  return s;
}

floor_estimate make_floor_estimate(double bytes, double flops, double bandwidth, double peak, double median) {
  floor_estimate f;
  f.bytes = bytes;
  f.flops = flops;
  const double memory_time = bandwidth > 0.0 ? bytes / bandwidth : 0.0;
  const double compute_time = peak > 0.0 ? flops / peak : 0.0;
  f.floor_seconds = std::max(memory_time, compute_time);
  f.percent_of_floor = median > 0.0 ? f.floor_seconds / median * 100.0 : std::numeric_limits<double>::quiet_NaN();
  f.impossible = median > 0.0 && median < f.floor_seconds;
  return f;
}

nlohmann::json results_to_json(const results_file& results) {
  json cases = json::array();
  for (const case_result& c : results.cases) cases.push_back(to_json(c));
  // Always the current version: the writer writes this version's fields, whatever was read.
  return json{{"schema", results.schema},
              {"version", results_schema_version},
              {"complete", results.status.complete},
              {"incomplete_reason", results.status.incomplete_reason},
              {"planned_cases", results.status.planned_cases},
              {"environment", to_json(results.environment)},
              {"cases", std::move(cases)}};
}

results_file results_from_json(const nlohmann::json& doc, std::string_view source) {
  const field_reader r(source);
  if (!doc.is_object()) r.fail(fmt::format("the top level is {}, expected an object", doc.type_name()));
  // Schema and version first: a file of another kind or version gets that message, not a field error.
  const auto schema = doc.find("schema");
  if (schema == doc.end() || !schema->is_string())
    r.fail(fmt::format("field schema is missing or not a string: this is not a {} file", results_schema_name));
  if (schema->get<std::string>() != results_schema_name)
    r.fail(fmt::format("schema is \"{}\", expected \"{}\"", schema->get<std::string>(), results_schema_name));
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer())
    r.fail("field version is missing or not an integer");
  const std::int64_t v = version->get<std::int64_t>();
  if (v < oldest_results_schema_version || v > results_schema_version)
    r.fail(fmt::format("version {} is not supported: this fusebench reads versions {} to {}", version->dump(),
                       oldest_results_schema_version, results_schema_version));

  results_file results;
  results.schema = std::string(results_schema_name);
  results.version = static_cast<int>(v);
  if (v >= 2) {
    results.status.complete = r.get_bool(doc, "", "complete");
    results.status.incomplete_reason = r.get_string(doc, "", "incomplete_reason");
    results.status.planned_cases = r.get_integer(doc, "", "planned_cases");
    if (results.status.planned_cases < 0)
      r.fail(fmt::format("field planned_cases is {}, expected a count >= 0", results.status.planned_cases));
  }
  results.environment = environment_from_json(r, r.require(doc, "", "environment"), "environment", results.version);
  const json& cases = r.require(doc, "", "cases");
  if (!cases.is_array()) r.fail(fmt::format("field cases has type {}, expected an array", cases.type_name()));
  results.cases.reserve(cases.size());
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> seen;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    case_result c = case_from_json(r, cases[i], fmt::format("cases[{}]", i), results.version);
    // One measurement per case: with two, report and compare would each have to guess which counts.
    const auto [it, inserted] = seen.emplace(std::make_tuple(c.model, c.config_label, c.implementation), i);
    if (!inserted)
      r.fail(fmt::format("cases[{}] and cases[{}] are the same case {}/{}/{}", it->second, i, c.model,
                         c.config_label, c.implementation));
    results.cases.push_back(std::move(c));
  }
  const auto held = static_cast<std::int64_t>(results.cases.size());
  if (results.status.complete && results.status.planned_cases > 0 && held != results.status.planned_cases)
    r.fail(fmt::format("complete is true, but the file holds {} of {} planned cases", held,
                       results.status.planned_cases));
  return results;
}

results_file load_results(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw results_error(fmt::format("results file '{}' does not exist", name));
  if (!std::filesystem::is_regular_file(path, ec))
    throw results_error(fmt::format("results file '{}' is not a regular file", name));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw results_error(fmt::format("results file '{}' cannot be opened", name));
  std::ostringstream text;
  text << in.rdbuf();
  json doc;
  try {
    doc = json::parse(text.str());
  } catch (const json::parse_error& e) {
    // nlohmann's what() starts with "[json.exception.parse_error.101] "; the rest is the useful part.
    std::string_view detail = e.what();
    if (const auto cut = detail.find("] "); cut != std::string_view::npos) detail.remove_prefix(cut + 2);
    throw results_error(fmt::format("results file '{}' is not valid JSON (truncated or corrupt?) at byte {}: {}",
                                    name, e.byte, detail));
  } catch (const json::exception& e) {  // e.g. a number beyond double's range (1e999)
    std::string_view detail = e.what();
    if (const auto cut = detail.find("] "); cut != std::string_view::npos) detail.remove_prefix(cut + 2);
    throw results_error(fmt::format("results file '{}' is not valid JSON: {}", name, detail));
  }
  return results_from_json(doc, name);
}

void save_results(const results_file& results, const std::filesystem::path& path) {
  detail::write_file_atomically(path, results_to_json(results).dump(2) + "\n");
}

}  // namespace fb

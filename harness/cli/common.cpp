#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>

#include "harness/cli/commands.h"
#include "harness/format/seed_json.h"
#include "harness/plugin/plugin_loader.h"

namespace fb::cli {
namespace {

/// Optimal string alignment distance: Levenshtein plus a swap of two neighbours ("verfiy").
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

/// `text` as an unsigned decimal number (the seed rule of harness/format/seed_json.h).
std::optional<std::uint64_t> parse_decimal(const std::string& text) { return parse_decimal_seed(text); }

}  // namespace

CLI::Validator decimal_seed() {
  return CLI::Validator(
      [](std::string& value) {
        return parse_decimal(value) ? std::string()
                                    : "'" + value + "' is not a seed: give 0 to 18446744073709551615 in decimal digits";
      },
      "SEED", "");
}

CLI::Validator count_within(std::uint64_t low, std::uint64_t high) {
  return CLI::Validator(
      [low, high](std::string& value) {
        const std::optional<std::uint64_t> n = parse_decimal(value);
        return n && *n >= low && *n <= high
                   ? std::string()
                   : fmt::format("'{}' is not a whole number from {} to {} (decimal digits)", value, low, high);
      },
      "COUNT", "");
}

std::string nearest_word(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string& c : candidates)
    if (const std::size_t d = edit_distance(word, c); d < best_distance) {
      best = c;
      best_distance = d;
    }
  const std::size_t plausible = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  return best_distance <= plausible ? best : std::string();
}

void add_plugin_options(CLI::App* cmd, std::vector<std::string>& plugins, bool& isolate, int& case_timeout) {
  cmd->add_option("--plugin", plugins,
                  "A shared library of outside implementations (include/fusebench/plugin.h), shown as plugin:<name> "
                  "and judged like the in-tree ones; repeatable; FUSEBENCH_PLUGINS (':'-separated) adds more")
      ->allow_extra_args(false)
      ->check(non_empty("a library path"));
  cmd->add_flag("--isolate,!--no-isolate", isolate,
                "Run the plug-ins' cases in a child process, so that a crash is recorded as that case's error and "
                "the run goes on (default: on)");
  cmd->add_option("--case-timeout", case_timeout,
                  "Isolated plug-in cases: the time a child process has for each verdict [seconds, 1 to 86400]; past "
                  "it the child is killed and the case fails as timed out")
      ->check(count_within(1, 86400))
      ->capture_default_str();
}

std::vector<path_role> plugin_inputs(const std::vector<std::string>& given) {
  std::vector<path_role> inputs;
  for (const std::string& p : plugin::plugin_paths(given)) {
    const bool flag = std::find(given.begin(), given.end(), p) != given.end();
    inputs.push_back({flag ? "--plugin" : "FUSEBENCH_PLUGINS", p});
  }
  return inputs;
}

void add_fan_out_options(CLI::App* cmd, std::string& shard, std::string& devices, const std::string& units,
                         const std::string& devices_note) {
  cmd->add_option("--shard", shard,
                  "K/N: run only " + units + " with i % N == K-1 (K from 1); N such runs hold each once, and "
                  "`fusebench merge` joins their files into the unsharded run's")
      ->check(non_empty("K/N, e.g. 2/4"));
  cmd->add_option("--devices", devices,
                  "all, or GPU positions 0,1,...: one shard process per GPU (CUDA_VISIBLE_DEVICES), run at once and "
                  "merged; output and exit status as of one process. cpu,cpu,...: that many shard processes on the "
                  "CPU (to test the fan-out without a GPU" + (devices_note.empty() ? "" : "; " + devices_note) + ")")
      ->check(non_empty("all, GPU positions like 0,1, or cpu,cpu"));
}

}  // namespace fb::cli

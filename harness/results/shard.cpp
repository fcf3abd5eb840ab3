#include "harness/results/shard.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

namespace fb {
namespace {

bool parse_int(std::string_view s, int& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

shard_spec parse_shard(std::string_view text, std::string_view what) {
  const auto slash = text.find('/');
  shard_spec s;
  if (slash == std::string_view::npos || !parse_int(text.substr(0, slash), s.index) ||
      !parse_int(text.substr(slash + 1), s.count))
    throw std::invalid_argument(fmt::format("{} {}: expected K/N, e.g. 2/4 (part K of N, K from 1)", what, text));
  if (s.count < 1) throw std::invalid_argument(fmt::format("{} {}: N must be >= 1", what, text));
  if (s.index < 1 || s.index > s.count)
    throw std::invalid_argument(fmt::format("{} {}: K must be in 1..{} (K counts from 1)", what, text, s.count));
  return s;
}

std::string to_string(const shard_spec& shard) { return fmt::format("{}/{}", shard.index, shard.count); }

shard_spec sub_shard(const shard_spec& outer, int d, int pieces) {
  return {outer.index + outer.count * d, outer.count * pieces};
}

shard_coverage check_coverage(const std::vector<merge_part>& parts, const merge_rules& rules) {
  shard_coverage c;
  c.count = parts.front().shard.count;
  for (const merge_part& p : parts)
    if (p.shard.count != c.count)
      throw merge_error(fmt::format("{} is shard {}, but {} is shard {}: the parts of one merge come from one split "
                                    "(the same N)",
                                    p.name, to_string(p.shard), parts.front().name, to_string(parts.front().shard)));
  const shard_spec& target = rules.target;
  if (c.count % target.count != 0)
    throw merge_error(fmt::format("{} is a part of {}, which does not split shard {}", parts.front().name,
                                  to_string(parts.front().shard), to_string(target)));
  const int pieces = c.count / target.count;
  c.order.assign(static_cast<std::size_t>(pieces), -1);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const shard_spec& s = parts[i].shard;
    // Part K of N lies in target k/n when K - 1 == k - 1 (mod n); it is then piece (K - k) / n.
    if ((s.index - 1) % target.count != target.index - 1)
      throw merge_error(fmt::format("{} is shard {}, which is not part of shard {}", parts[i].name, to_string(s),
                                    to_string(target)));
    int& slot = c.order[static_cast<std::size_t>((s.index - target.index) / target.count)];
    if (slot >= 0)
      throw merge_error(fmt::format("{} and {} are both shard {}: overlapping shards would count its cases twice",
                                    parts[static_cast<std::size_t>(slot)].name, parts[i].name, to_string(s)));
    slot = static_cast<int>(i);
  }
  for (int d = 0; d < pieces; ++d)
    if (c.order[static_cast<std::size_t>(d)] < 0) c.missing.push_back(target.index + target.count * d);
  if (!c.missing.empty() && !rules.allow_missing) {
    std::vector<std::string> names;
    for (int k : c.missing) names.push_back(fmt::format("{}/{}", k, c.count));
    throw merge_error(fmt::format("shard{} {} missing ({} of {} given){}", names.size() > 1 ? "s" : "",
                                  fmt::join(names, ", "), parts.size(), pieces,
                                  "; --allow-missing merges the rest into a file marked incomplete"));
  }
  return c;
}

std::string agreed_value(std::string_view field, const std::vector<std::string>& values,
                         const std::vector<merge_part>& parts, bool allowed, std::string_view hint) {
  std::vector<std::string> distinct;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::find(distinct.begin(), distinct.end(), values[i]) != distinct.end()) continue;
    if (!distinct.empty() && !allowed)
      throw merge_error(fmt::format("{}: {} is \"{}\", but {}'s is \"{}\"{}", parts[i].name, field, values[i],
                                    parts.front().name, values.front(), hint));
    distinct.push_back(values[i]);
  }
  return fmt::format("{}", fmt::join(distinct, " + "));
}

std::string fingerprint(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char ch : text) {
    h ^= static_cast<unsigned char>(ch);
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace fb

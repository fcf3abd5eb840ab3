#pragma once
/// Splitting one run's cases over processes, GPUs and hosts (`--shard K/N`, `--devices`), and the
/// rules for joining the parts again (`fusebench merge`, and the parent process of `--devices`).
/// Torch-free: the bench results half uses it without libtorch.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fb {

/// Part K of N of a run (K 1-based). Position i of the run's case sequence belongs to part K when
/// i % N == K - 1: verify's positions are the case indices of each model (the same indices for every
/// model), bench's the configs of its plan in plan order. Round robin rather than contiguous blocks:
/// every part gets a similar mix of cheap and expensive cases, and a part split again is a part of
/// a finer split (sub_shard), which lets `--devices` split a host's `--shard` over its GPUs.
struct shard_spec {
  int index = 1;  ///< K, in 1..count
  int count = 1;  ///< N >= 1

  /// Whether position i (0-based) of the run belongs to this part.
  [[nodiscard]] bool holds(std::int64_t i) const { return i % count == index - 1; }
  /// How many of the positions 0..n-1 belong to this part [count].
  [[nodiscard]] std::int64_t size_of(std::int64_t n) const {
    return n >= index ? (n - index) / count + 1 : 0;
  }
  [[nodiscard]] bool whole() const { return count == 1; }
  friend bool operator==(const shard_spec& a, const shard_spec& b) { return a.index == b.index && a.count == b.count; }
  friend bool operator!=(const shard_spec& a, const shard_spec& b) { return !(a == b); }
};

/// Parses "K/N" (1 <= K <= N). Throws std::invalid_argument "<what> X: ..." naming the problem.
[[nodiscard]] shard_spec parse_shard(std::string_view text, std::string_view what = "--shard");

/// "K/N".
[[nodiscard]] std::string to_string(const shard_spec& shard);

/// The d-th (0-based) of `pieces` parts of `outer`: (K + N*d) / (N*pieces). The pieces together
/// hold exactly outer's positions, each once. REQUIRES: 0 <= d < pieces.
[[nodiscard]] shard_spec sub_shard(const shard_spec& outer, int d, int pieces);

/// A set of files that cannot be merged; what() is one line naming the files and the difference.
class merge_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// What `fusebench merge` accepts, and what the merged file must hold.
struct merge_rules {
  shard_spec target;                  ///< the part the merged file holds; 1/1 is the whole run
  bool allow_missing = false;         ///< parts missing: the merged file is marked incomplete
  bool allow_incomplete = false;      ///< parts marked incomplete are merged; so is the result
  bool allow_different_gpu = false;   ///< parts measured on different GPUs (names joined with " + ")
  bool allow_different_commit = false;  ///< parts built from different commits (joined with " + ")
};

/// One input of a merge: its name in messages (the file) and the part it holds.
struct merge_part {
  std::string name;
  shard_spec shard;
};

/// How the parts cover rules.target.
struct shard_coverage {
  int count = 1;                  ///< N of the parts
  std::vector<int> missing;       ///< K of each part of target that no input holds, ascending
  /// order[j]: the input holding the j-th part of target (parts ordered by K); -1 when missing.
  std::vector<int> order;
};

/// Checks that the parts are all of one split N (a multiple of target.count), that none is given
/// twice (overlap) and that each is a part of target; lists the missing ones. Throws merge_error on
/// any of those, and on missing parts unless rules.allow_missing. REQUIRES: parts not empty.
[[nodiscard]] shard_coverage check_coverage(const std::vector<merge_part>& parts, const merge_rules& rules);

/// The value every part has for `field`. When they differ: the distinct values joined by " + " (in
/// part order) if `allowed`, else merge_error "B: FIELD is X, but A's is Y" plus `hint` (which flag
/// allows it, or why nothing does). `values[i]` belongs to `parts[i]`.
[[nodiscard]] std::string agreed_value(std::string_view field, const std::vector<std::string>& values,
                                       const std::vector<merge_part>& parts, bool allowed, std::string_view hint);

/// FNV-1a, 64 bits, as 16 hex digits: a fingerprint of a plan, not a security measure.
[[nodiscard]] std::string fingerprint(std::string_view text);

}  // namespace fb

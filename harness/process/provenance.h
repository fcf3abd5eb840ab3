#pragma once
/// Provenance: which sources a fusebench was built from, and which commit holds them. The build
/// computes a digest of the source files (cmake/source_digest.cmake: no git needed); git reports the
/// commit of the project's own top level (never an enclosing repository); `history` and `compare`
/// compute the digest of a claimed commit's tree from the repository and place or flag a run by what
/// matches (README "Provenance").
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fb {

/// SHA-256 of `bytes` as 64 lower-case hex digits (FIPS 180-4; CMake's file(SHA256) and sha256sum agree).
[[nodiscard]] std::string sha256_hex(std::string_view bytes);

/// The folders and files the source digest covers, relative to the project root, as this build's
/// cmake/source_digest.cmake listed them.
[[nodiscard]] std::vector<std::string> source_digest_paths();

/// The source digest of a tree given as path -> SHA-256 of the file's contents: the SHA-256 of one
/// line "<content digest> <path>\n" per file, in byte order of the paths (cmake/source_digest.cmake).
[[nodiscard]] std::string source_digest_of(const std::map<std::string, std::string>& content_digest_by_path);

/// The source digest this fusebench was built from (computed by the build).
[[nodiscard]] std::string built_source_digest();

/// The top level of the git repository whose top level `project_root` itself is; empty when git is
/// missing, when the folder is no git checkout, or when only an enclosing repository holds it (its
/// commit would name some other project's state).
[[nodiscard]] std::filesystem::path own_git_toplevel(const std::filesystem::path& project_root);

/// Source digests of a repository's commits, computed from git's objects with the build's rule.
/// Contents are hashed once per blob, so many commits of one repository cost little more than one.
class source_repository {
 public:
  /// REQUIRES: `root` is the top level of a git repository.
  explicit source_repository(std::filesystem::path root);

  /// The full hash of `commit` (a hash or a unique prefix of one); nullopt when the repository lacks it.
  [[nodiscard]] std::optional<std::string> resolve(const std::string& commit) const;
  /// The full hash of HEAD; nullopt in a repository without commits.
  [[nodiscard]] std::optional<std::string> resolve_head() const;
  /// The source digest of `commit`'s tree; nullopt when the repository lacks the commit.
  [[nodiscard]] std::optional<std::string> digest_of(const std::string& commit);
  /// The newest of the repository's most recent `limit` commits (all branches) whose tree has
  /// `digest`; nullopt when none has.
  [[nodiscard]] std::optional<std::string> find_commit_with(const std::string& digest, std::size_t limit = 2000);
  [[nodiscard]] const std::filesystem::path& get_root() const { return m_root; }

 private:
  std::filesystem::path m_root;
  std::map<std::string, std::string> m_content_digest_by_blob;
  std::map<std::string, std::string> m_digest_by_commit;  ///< by full hash
};

/// What a results file's recorded commit and source digest say together.
struct provenance {
  enum class status {
    no_digest,      ///< a file written before digests were recorded: its commit is taken as recorded
    unverifiable,   ///< a digest, but no repository to check it against
    matches_claim,  ///< the recorded commit's tree has the recorded digest
    matches_other,  ///< the recorded commit's tree does not, another commit's does: the run measured that one
    matches_none,   ///< no commit of the repository has the digest: uncommitted sources
  };
  status verdict = status::no_digest;
  std::string recorded;  ///< the file's git_commit, as written ("-dirty" included)
  std::string commit;    ///< the full hash whose tree has the digest (matches_claim, matches_other); else ""
  /// One line for a table: e.g. "sources are 43b68bf's (digest matches)".
  [[nodiscard]] std::string get_text() const;
  /// A mismatch that a reader must see: matches_other or matches_none.
  [[nodiscard]] bool is_mismatch() const { return verdict == status::matches_other || verdict == status::matches_none; }
};

/// Checks `recorded_commit` (a results file's git_commit: a hash, "<hash>-dirty" or "unknown") against
/// `source_digest` ("" in older files) with `repository` (nullptr: none). A recorded commit whose tree
/// has the digest matches even when recorded "-dirty" (what was dirty lay outside the sources).
[[nodiscard]] provenance check_provenance(const std::string& recorded_commit, const std::string& source_digest,
                                          source_repository* repository);

}  // namespace fb

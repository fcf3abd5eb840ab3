/// Provenance: SHA-256 against the standard's vectors and coreutils; the digest the build computes
/// (cmake/source_digest.cmake) equals the digest computed from a commit's tree in git, in a scratch
/// repository that is edited and committed; the recorded commit is checked against the digest both
/// ways; the project's own top level is never an enclosing repository's; and every results file
/// committed under reports/ is valid and names the commit its sources are (older files without a
/// digest are accepted and listed as such).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "harness/history/history_model.h"
#include "harness/process/command_output.h"
#include "harness/process/provenance.h"

namespace {

using namespace fb;
namespace fs = std::filesystem;

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

/// Runs `command` in /bin/sh; fails the test when it does not exit 0.
std::string run(const std::string& command) {
  const std::optional<std::string> out = command_output(command);
  EXPECT_TRUE(out.has_value()) << command;
  return out.value_or("");
}

/// The digest cmake/source_digest.cmake computes of the files under `root`, as the build does.
std::string build_digest_of(const fs::path& root) {
  const fs::path header = root.parent_path() / (root.filename().string() + "-digest.h");
  run(fmt::format("{} -DROOT={} -DOUT={} -P {} 2>&1", shell_quoted(FUSEBENCH_CMAKE_COMMAND), shell_quoted(root.string()),
                  shell_quoted(header.string()), shell_quoted(std::string(FUSEBENCH_SOURCE_DIR) + "/cmake/source_digest.cmake")));
  std::ifstream in(header);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch found;
  EXPECT_TRUE(std::regex_search(text, found, std::regex("FUSEBENCH_SOURCE_DIGEST \"([0-9a-f]{64})\"")));
  return found.size() > 1 ? found[1].str() : std::string();
}

/// A scratch folder, removed with the object.
class scratch_folder {
 public:
  scratch_folder() {
    std::string name = (fs::temp_directory_path() / "fusebench-provenance-XXXXXX").string();
    EXPECT_NE(::mkdtemp(name.data()), nullptr);
    m_path = name;
  }
  ~scratch_folder() {
    std::error_code ignored;
    fs::remove_all(m_path, ignored);
  }
  scratch_folder(const scratch_folder&) = delete;
  scratch_folder& operator=(const scratch_folder&) = delete;
  [[nodiscard]] const fs::path& get_path() const { return m_path; }

 private:
  fs::path m_path;
};

/// A git repository in `root` with an identity of its own (CI machines have none configured).
std::string git(const fs::path& root) {
  return fmt::format("git -C {} -c user.name=fusebench -c user.email=fusebench@example.invalid -c commit.gpgsign=false ",
                     shell_quoted(root.string()));
}

std::string commit_all(const fs::path& root, const std::string& message) {
  run(git(root) + "add -A >/dev/null 2>&1 && " + git(root) + "commit -q -m " + shell_quoted(message) + " >/dev/null 2>&1");
  std::string head = run(git(root) + "rev-parse HEAD");
  while (!head.empty() && head.back() == '\n') head.pop_back();
  return head;
}

TEST(provenance, sha256_matches_the_standard_and_coreutils) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Every padding case: lengths around one and two blocks, against sha256sum.
  if (!command_output("command -v sha256sum >/dev/null")) GTEST_SKIP() << "no sha256sum";
  for (std::size_t length : {1u, 55u, 56u, 57u, 63u, 64u, 65u, 119u, 120u, 127u, 128u, 129u}) {
    std::string text;
    for (std::size_t i = 0; i < length; ++i) text += static_cast<char>('a' + (i * 7) % 26);
    const std::string coreutils = run("printf %s " + shell_quoted(text) + " | sha256sum").substr(0, 64);
    EXPECT_EQ(sha256_hex(text), coreutils) << "length " << length;
  }
}

TEST(provenance, the_build_digest_is_the_digest_of_the_committed_tree) {
  scratch_folder scratch;
  const fs::path root = scratch.get_path() / "project";
  write_file(root / "CMakeLists.txt", "project(x)\n");
  write_file(root / "harness" / "a.cpp", "int a;\n");
  write_file(root / "harness" / "deeper" / "b.h", "#pragma once\n");
  write_file(root / "cmake" / "c.cmake", "# c\n");
  write_file(root / "reports" / "results.json", "{}\n");  // outside the digest's paths
  write_file(root / "README.md", "readme\n");
  fs::create_symlink("a.cpp", root / "harness" / "link.cpp");  // links are left out on both sides
  run(git(root) + "init -q");
  const std::string first = commit_all(root, "first");
  source_repository repository(own_git_toplevel(root));
  ASSERT_FALSE(repository.get_root().empty());
  const std::string first_digest = build_digest_of(root);
  EXPECT_EQ(repository.digest_of(first), first_digest);
  EXPECT_EQ(repository.digest_of(first.substr(0, 7)), first_digest);  // a short hash
  EXPECT_EQ(repository.resolve_head(), first);

  // Outside the covered paths: the digest does not move.
  write_file(root / "reports" / "results.json", "{\"x\": 1}\n");
  write_file(root / "README.md", "changed\n");
  EXPECT_EQ(build_digest_of(root), first_digest);
  // A source edited: the build's digest moves off the commit's, onto the next commit's.
  write_file(root / "harness" / "deeper" / "b.h", "#pragma once\nint b;\n");
  const std::string edited_digest = build_digest_of(root);
  EXPECT_NE(edited_digest, first_digest);
  EXPECT_NE(repository.digest_of(first), edited_digest);
  const std::string second = commit_all(root, "second");
  EXPECT_EQ(repository.digest_of(second), edited_digest);
  EXPECT_EQ(repository.find_commit_with(first_digest), first);
  EXPECT_EQ(repository.find_commit_with(edited_digest), second);
  // A new file counts too, and so does a rename.
  fs::rename(root / "cmake" / "c.cmake", root / "cmake" / "d.cmake");
  EXPECT_NE(build_digest_of(root), edited_digest);
  EXPECT_FALSE(repository.digest_of("0123456789abcdef0123456789abcdef01234567").has_value());
  EXPECT_FALSE(repository.digest_of("--all").has_value());
}

TEST(provenance, the_recorded_commit_is_checked_against_the_digest) {
  scratch_folder scratch;
  const fs::path root = scratch.get_path() / "project";
  write_file(root / "harness" / "a.cpp", "int a;\n");
  run(git(root) + "init -q");
  const std::string first = commit_all(root, "first");
  write_file(root / "harness" / "a.cpp", "int a = 1;\n");
  const std::string second = commit_all(root, "second");
  source_repository repository(root);
  const std::string first_digest = *repository.digest_of(first);
  const std::string second_digest = *repository.digest_of(second);

  const provenance matches = check_provenance(second, second_digest, &repository);
  EXPECT_EQ(matches.verdict, provenance::status::matches_claim);
  EXPECT_EQ(matches.commit, second);
  EXPECT_FALSE(matches.is_mismatch());
  // "-dirty" where the dirt lay outside the sources: still the commit's sources.
  EXPECT_EQ(check_provenance(second.substr(0, 7) + "-dirty", second_digest, &repository).verdict,
            provenance::status::matches_claim);
  // The device's lagging copy: recorded as the older commit, dirty, with the newer one's sources.
  const provenance lagging = check_provenance(first + "-dirty", second_digest, &repository);
  EXPECT_EQ(lagging.verdict, provenance::status::matches_other);
  EXPECT_EQ(lagging.commit, second);
  EXPECT_TRUE(lagging.is_mismatch());
  EXPECT_NE(lagging.get_text().find("DIGEST MISMATCH"), std::string::npos) << lagging.get_text();
  // An enclosing repository's commit: not this project's at all.
  EXPECT_EQ(check_provenance("unknown", first_digest, &repository).verdict, provenance::status::matches_other);
  const provenance nowhere = check_provenance(second, sha256_hex("uncommitted"), &repository);
  EXPECT_EQ(nowhere.verdict, provenance::status::matches_none);
  EXPECT_TRUE(nowhere.is_mismatch());
  EXPECT_EQ(check_provenance(second, "", &repository).verdict, provenance::status::no_digest);
  EXPECT_EQ(check_provenance(second, second_digest, nullptr).verdict, provenance::status::unverifiable);
}

TEST(provenance, only_the_projects_own_top_level_names_a_commit) {
  scratch_folder scratch;
  const fs::path outer = scratch.get_path() / "outer";
  write_file(outer / "project" / "harness" / "a.cpp", "int a;\n");
  run(git(outer) + "init -q");
  commit_all(outer, "outer");
  // A copy of the project without its .git inside another checkout: no commit of its own.
  EXPECT_TRUE(own_git_toplevel(outer / "project").empty());
  EXPECT_EQ(own_git_toplevel(outer), fs::weakly_canonical(outer));
  EXPECT_TRUE(own_git_toplevel(scratch.get_path()).empty());  // no repository at all
}

TEST(provenance, this_build_digest_is_of_the_tree_it_was_built_from) {
  // Fails when the binary is older than the sources (rebuild), which is what a results file's
  // digest must never hide.
  EXPECT_EQ(built_source_digest(), build_digest_of(FUSEBENCH_SOURCE_DIR));
}

TEST(provenance, every_committed_results_file_names_its_commit) {
  std::vector<std::string> skipped;
  // Loading validates each file against the schema: an invalid one throws here.
  std::vector<history::loaded_results> files = history::load_results_files({fs::path(FUSEBENCH_REPORTS_DIR)}, skipped);
  ASSERT_FALSE(files.empty());
  const fs::path top = own_git_toplevel(FUSEBENCH_SOURCE_DIR);
  const bool full_history = !top.empty() && command_output("git -C " + shell_quoted(top.string()) +
                                                           " rev-parse --is-shallow-repository 2>/dev/null")
                                                    .value_or("true")
                                                    .rfind("false", 0) == 0;
  std::optional<source_repository> repository;
  if (full_history) repository.emplace(top);
  std::size_t with_digest = 0, without_digest = 0;
  for (const history::loaded_results& file : files) {
    const run_environment& env = file.results.environment;
    const provenance check =
        check_provenance(env.git_commit, env.source_digest, repository ? &*repository : nullptr);
    if (env.source_digest.empty()) {
      ++without_digest;
      std::cout << "no source digest (older file, accepted): " << file.source << " (" << env.git_commit << ")\n";
      // Its commit is still one of the project's, dirty or not.
      if (repository) {
        const std::string hash = env.git_commit.substr(0, env.git_commit.find("-dirty"));
        EXPECT_TRUE(repository->resolve(hash).has_value()) << file.source << ": " << env.git_commit;
      }
      continue;
    }
    ++with_digest;
    EXPECT_TRUE(std::regex_match(env.source_digest, std::regex("[0-9a-f]{64}"))) << file.source;
    if (repository) {
      EXPECT_EQ(check.verdict, provenance::status::matches_claim) << file.source << ": " << check.get_text();
    }
  }
  std::cout << fmt::format("{} results files: {} with a source digest{}, {} without (older files)\n", files.size(),
                           with_digest, repository ? " (each matches its commit)" : " (not checked: no full git history)",
                           without_digest);
}

}  // namespace

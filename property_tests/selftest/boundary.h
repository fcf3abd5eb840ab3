#pragma once
/// Boundary sets: each fused model declares the internal boundaries its kernels branch or loop on
/// (chunk and stage loops, tiles, work items per plane, blocks per reduction, ...), as named paths,
/// and a small set of problems that takes every loop through at least two iterations and every
/// path at least once. The paths a problem reaches are computed from the kernels' own plan
/// (make_plan), so the declaration cannot drift from what the kernels do.
///
/// Who uses it:
///  - fused_cuda_selftest --boundary-only runs exactly these problems (the GPU gate runs it under
///    compute-sanitizer memcheck, racecheck, synccheck and initcheck, and repeats them under the
///    stress stage), printing one `BOUNDARY` line per problem with the paths it reached;
///  - property_tests/fused_boundary_sets_test.cpp checks on the CPU that every declared path is
///    reached by some problem (or declared unreachable with a reason) and that the problems stay
///    small enough for the sanitizers;
///  - `boundary_sets --configs` prints the problems as fusebench configs, which
///    property_tests/boundary_sets_host_test.sh verifies on the CPU (host executor vs reference).
///
/// A model takes part with one header, property_tests/selftest/<id>_boundary.h, that defines its
/// set and registers it with FB_BOUNDARY_MODEL (an inline variable: one registration per program
/// however many files include it). The tools and the CPU test include it for every model of the
/// registry's list (harness/model/built_in_models.def) that has kernels, a folder fused/<id>/
/// (property_tests/fused.cmake generates their include list). Torch-free and CUDA-free: the CPU test
/// links the host executors only.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fb::boundary {

/// What reaching a path can depend on besides the problem: how many blocks the device keeps resident
/// (persistent grids stride or batch their items only past it). Paths use an upper bound (SMs x the
/// blocks the thread limit allows), so a problem that reaches a path under the bound reaches it on any
/// device with no more SMs. The CPU test assumes an H100/H200 (132 SMs); the GPU self-test passes the
/// device's own figures and reports a path its problems miss there.
struct device_limits {
  int sms = 132;
  int max_threads_per_sm = 2048;
  /// The most blocks of `threads` threads the device can keep resident.
  [[nodiscard]] int64_t resident_upper_bound(int threads) const {
    return static_cast<int64_t>(sms) * (max_threads_per_sm / threads);
  }
};

/// The input distribution a boundary problem draws (the self-test's `dist`, in the same order).
enum class input_kind { uniform, normal, offset, border_only, sparse };

/// A declared path: a kernel instantiation ("kernel:<name>") or a branch / loop count inside one.
struct path {
  std::string name;
  std::string what;         ///< what it exercises, in words
  std::string unreachable;  ///< "" when a boundary problem must reach it; else why none can
};

/// One model's boundary set, type-erased for the tools (the selftest keeps the typed problems).
struct model_set {
  std::string model;
  std::vector<path> paths;
  std::vector<std::string> problem_names;  ///< "#i: note (sizes)"
  /// Paths problem i reaches on a device with these limits.
  std::function<std::vector<std::string>(std::size_t, const device_limits&)> reached;
  /// Problem i as a fusebench config (JSON text) for `fusebench verify --config`.
  std::function<std::string(std::size_t)> config_json;
  /// Output elements of problem i plus its input elements (a size figure for the sanitizer budget).
  std::function<double(std::size_t)> elements;
};

/// Registers a model's set (FB_BOUNDARY_MODEL does this); returns the number registered.
inline std::map<std::string, model_set>& registry() {
  static std::map<std::string, model_set> sets;
  return sets;
}
inline int register_set(model_set s) {
  registry()[s.model] = std::move(s);
  return static_cast<int>(registry().size());
}

/// Every registered model's set, sorted by model id.
[[nodiscard]] inline std::vector<model_set> all_sets() {
  std::vector<model_set> out;
  for (const auto& [id, s] : registry()) out.push_back(s);
  return out;
}

/// Builds a model_set from a typed declaration: `cases` (each with .note and .problem), `paths`, and
/// `reached(problem, limits)`, `config(problem, case)` (JSON text), `elements(problem)`.
template <class Case, class Reached, class Config, class Elements>
model_set make_set(std::string model, std::vector<path> paths, std::vector<Case> cases, Reached reached,
                   Config config, Elements elements, std::function<std::string(const Case&)> describe) {
  model_set s;
  s.model = std::move(model);
  s.paths = std::move(paths);
  for (std::size_t i = 0; i < cases.size(); ++i)
    s.problem_names.push_back("#" + std::to_string(i) + ": " + cases[i].note + " (" + describe(cases[i]) + ")");
  s.reached = [cases, reached](std::size_t i, const device_limits& lim) { return reached(cases.at(i).problem, lim); };
  s.config_json = [cases, config](std::size_t i) { return config(cases.at(i)); };
  s.elements = [cases, elements](std::size_t i) { return elements(cases.at(i).problem); };
  return s;
}

/// Collects the names of the paths whose condition holds: add("name", condition).
class reached_paths {
 public:
  void add(const std::string& name, bool condition) {
    if (condition) m_names.push_back(name);
  }
  [[nodiscard]] std::vector<std::string> take() { return std::move(m_names); }

 private:
  std::vector<std::string> m_names;
};

/// The declared paths that no problem of the set reaches on a device with `lim`, and that are not
/// declared unreachable; also any reached path that is not declared (a typo in a declaration).
struct coverage_gaps {
  std::vector<std::string> unreached;
  std::vector<std::string> undeclared;
};
[[nodiscard]] inline coverage_gaps gaps_of(const model_set& s, const device_limits& lim) {
  std::map<std::string, bool> hit;
  for (const path& p : s.paths) hit[p.name] = false;
  coverage_gaps g;
  for (std::size_t i = 0; i < s.problem_names.size(); ++i)
    for (const std::string& name : s.reached(i, lim)) {
      auto it = hit.find(name);
      if (it == hit.end())
        g.undeclared.push_back(name);
      else
        it->second = true;
    }
  for (const path& p : s.paths)
    if (!hit[p.name] && p.unreachable.empty()) g.unreached.push_back(p.name);
  return g;
}

/// "a,b,c"
[[nodiscard]] inline std::string join(const std::vector<std::string>& v, const char* sep = ",") {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace fb::boundary

/// Registers `set_fn()` (returning a model_set) once per program. One line at the end of the
/// model's <id>_boundary.h.
#define FB_BOUNDARY_MODEL(tag, set_fn) \
  inline const int fb_boundary_registration_##tag = ::fb::boundary::register_set(set_fn());

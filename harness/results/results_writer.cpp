#include "harness/results/results_writer.h"

#include "harness/results/gbench_json.h"

namespace fb {

results_writer::results_writer(std::filesystem::path path, run_environment environment,
                               std::filesystem::path gbench_path)
    : m_path(std::move(path)), m_gbench_path(std::move(gbench_path)) {
  m_results.environment = std::move(environment);
  flush();
}

void results_writer::add_case(case_result result) {
  m_results.cases.push_back(std::move(result));
  flush();
}

void results_writer::set_environment(run_environment environment) {
  m_results.environment = std::move(environment);
  flush();
}

void results_writer::flush() const {
  // Rewriting everything is O(cases) per case; a run has at most a few hundred cases, and a
  // self-contained file per step is what makes the crash safety trivial to reason about.
  save_results(m_results, m_path);
  if (!m_gbench_path.empty()) save_gbench_json(m_results, m_gbench_path);
}

}  // namespace fb

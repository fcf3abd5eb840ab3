#include "harness/results/results_writer.h"

#include <fmt/format.h>

#include <stdexcept>
#include <system_error>

#include "harness/results/gbench_json.h"

namespace fb {

std::filesystem::path partial_path(const std::filesystem::path& path) {
  std::filesystem::path partial = path;
  partial.replace_filename(path.stem().string() + ".partial" + path.extension().string());
  return partial;
}

results_writer::results_writer(std::filesystem::path path, run_environment environment,
                               std::filesystem::path gbench_path)
    : m_path(std::move(path)), m_gbench_path(std::move(gbench_path)), m_live_path(m_path),
      m_live_gbench_path(m_gbench_path) {
  std::error_code ec;
  if (std::filesystem::exists(m_path, ec)) {
    m_live_path = partial_path(m_path);
    if (!m_gbench_path.empty()) m_live_gbench_path = partial_path(m_gbench_path);
  }
  m_results.environment = std::move(environment);
  m_results.status.complete = false;
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

void results_writer::set_planned_cases(std::int64_t planned) {
  m_results.status.planned_cases = planned;
  flush();
}

void results_writer::finish() {
  m_results.status.complete = true;
  m_results.status.incomplete_reason.clear();
  m_explicit_reason = false;
  flush();
  // Complete: now it may replace the previous run's files (rename() is atomic: old or new, never neither).
  const auto promote = [](std::filesystem::path& live, const std::filesystem::path& final_path) {
    if (live == final_path) return;
    std::error_code ec;
    std::filesystem::rename(live, final_path, ec);
    if (ec)
      throw std::runtime_error(fmt::format("cannot replace {} by {}: {}", final_path.string(), live.string(),
                                           ec.message()));
    live = final_path;
  };
  if (!m_gbench_path.empty()) promote(m_live_gbench_path, m_gbench_path);
  promote(m_live_path, m_path);
}

void results_writer::mark_incomplete(std::string reason) {
  m_results.status.complete = false;
  m_results.status.incomplete_reason = std::move(reason);
  m_explicit_reason = true;
  flush();
}

void results_writer::flush() {
  // Until finish() or mark_incomplete(), what a reader sees is a run in progress or one that was
  // killed without a chance to say so (SIGKILL, power loss): the reason says both, with the count.
  if (!m_results.status.complete && !m_explicit_reason)
    m_results.status.incomplete_reason =
        m_results.status.planned_cases > 0
            ? fmt::format("not finished (still running, or killed): {} of {} planned cases written",
                          m_results.cases.size(), m_results.status.planned_cases)
            : fmt::format("not finished (still running, or killed): {} cases written", m_results.cases.size());
  // Rewriting everything is O(cases) per case; a run has at most a few hundred cases, and a
  // self-contained file per step is what makes the crash safety trivial to reason about.
  save_results(m_results, m_live_path);
  if (!m_live_gbench_path.empty()) save_gbench_json(m_results, m_live_gbench_path);
}

}  // namespace fb

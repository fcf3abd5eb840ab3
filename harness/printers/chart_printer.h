#pragma once
/// PNG charts drawn by gnuplot: speedup per model (default config) and, per model, median time
/// against problem size. The printer writes gnuplot scripts and data files, then runs gnuplot on
/// them; the scripts stay beside the PNGs so a chart can be restyled and redrawn by hand.
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "harness/printers/printer.h"

namespace fb::printers {

/// The executable to run: `program` itself when it contains a '/' (if executable), else the first
/// match on PATH; nothing when there is none.
[[nodiscard]] std::optional<std::filesystem::path> find_program(const std::string& program);

/// Writes `speedup.{dat,gp,png}` and `time_vs_size_<model>.{dat,gp,png}` (with the roofline floor as a
/// dashed line) into a folder; titles start with "INCOMPLETE RUN: ..." for an incomplete run. Uses the
/// pngcairo terminal when gnuplot has it (checked in the script through GPVAL_TERMINALS), else png.
/// When gnuplot is not installed it writes the scripts, prints one warning line and draws nothing:
/// charts are optional, so that is not an error.
class chart_printer final : public printer {
 public:
  /// `gnuplot` is a program name looked up on PATH, or a path. Warnings go to `warnings`.
  /// REQUIRES: `warnings` outlives the printer.
  chart_printer(std::filesystem::path out_dir, std::ostream& warnings, std::string gnuplot = "gnuplot");

  /// PNG files drawn by the last print_report [paths].
  [[nodiscard]] const std::vector<std::filesystem::path>& get_charts() const { return m_charts; }
  /// gnuplot scripts written by the last print_report [paths].
  [[nodiscard]] const std::vector<std::filesystem::path>& get_scripts() const { return m_scripts; }
  /// The PNGs drawn by the last print_report as links for another printer: title, model ("" for the
  /// speedup chart) and the file name inside the chart folder.
  [[nodiscard]] const std::vector<report::chart_link>& get_links() const { return m_links; }

 protected:
  /// Throws std::runtime_error when a file cannot be written or gnuplot fails on a script.
  void do_print_report(const report::report_model& report) override;

 private:
  std::filesystem::path m_out_dir;
  std::ostream& m_warnings;
  std::string m_gnuplot;
  std::vector<std::filesystem::path> m_charts;
  std::vector<std::filesystem::path> m_scripts;
  std::vector<report::chart_link> m_links;
};

}  // namespace fb::printers

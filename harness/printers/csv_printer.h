#pragma once
/// CSV report: one row per (model, config_label, implementation) with every statistic, the floor,
/// the speedups and the outcome, for spreadsheets and pandas.
#include <iosfwd>
#include <string>
#include <vector>

#include "harness/printers/printer.h"

namespace fb::printers {

/// Writes RFC 4180 CSV (comma separated, fields with commas, quotes or newlines quoted) with a
/// header line. Times are in seconds, numbers in shortest round-trip form, unknown values empty.
/// time_over_floor is median / floor_s (1 = at the roofline floor, < 1 impossible); max_err_over_tol
/// is the verification's max |err| / (atol + rtol*|ref|) (<= 1 passes); decided_by is the verdict rule;
/// run_complete is false on every row of an interrupted or failed run.
class csv_printer final : public printer {
 public:
  /// REQUIRES: `out` outlives the printer.
  explicit csv_printer(std::ostream& out) : m_out(out) {}

  /// The header, in column order.
  [[nodiscard]] static const std::vector<std::string>& get_columns();

 protected:
  void do_print_report(const report::report_model& report) override;

 private:
  std::ostream& m_out;
};

}  // namespace fb::printers

#pragma once
/// Markdown report: a summary of the default configs with the geometric mean, one sweep table per
/// model, the failures with their messages, and the environment.
#include <iosfwd>

#include "harness/printers/printer.h"

namespace fb::printers {

/// Writes GitHub-flavoured Markdown to a stream. The output depends only on the report model, so a
/// results file always renders to the same bytes (the golden test relies on it).
class markdown_printer final : public printer {
 public:
  /// REQUIRES: `out` outlives the printer.
  explicit markdown_printer(std::ostream& out) : m_out(out) {}

 protected:
  void do_print_report(const report::report_model& report) override;

 private:
  std::ostream& m_out;
};

}  // namespace fb::printers

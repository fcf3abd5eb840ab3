#pragma once
/// Base of every report printer (cf. nvbench printer_base): public non-virtual calls forward to
/// protected virtuals, so the base can add bookkeeping later without touching the printers.
#include "harness/report/report_model.h"

namespace fb::printers {

/// Formats a report_model somewhere (a stream, a folder of charts, several of them).
class printer {
 public:
  printer() = default;
  printer(const printer&) = delete;
  printer& operator=(const printer&) = delete;
  virtual ~printer() = default;

  /// Formats the whole report. Throws std::runtime_error when the output cannot be produced.
  void print_report(const report::report_model& report) { do_print_report(report); }

 protected:
  /// Implemented by each printer.
  virtual void do_print_report(const report::report_model& report) = 0;
};

}  // namespace fb::printers

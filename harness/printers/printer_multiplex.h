#pragma once
/// Fans one report out to several printers (cf. nvbench printer_multiplex).
#include <memory>
#include <vector>

#include "harness/printers/printer.h"

namespace fb::printers {

/// Owns printers and forwards every call to each, in the order they were added.
class printer_multiplex final : public printer {
 public:
  /// Adds a printer; returns it for further setup.
  printer& add_printer(std::unique_ptr<printer> p);
  /// Number of printers [count].
  [[nodiscard]] std::size_t get_printer_count() const { return m_printers.size(); }

 protected:
  void do_print_report(const report::report_model& report) override;

 private:
  std::vector<std::unique_ptr<printer>> m_printers;
};

}  // namespace fb::printers

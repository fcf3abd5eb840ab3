#include "harness/printers/printer_multiplex.h"

namespace fb::printers {

printer& printer_multiplex::add_printer(std::unique_ptr<printer> p) {
  m_printers.push_back(std::move(p));
  return *m_printers.back();
}

void printer_multiplex::do_print_report(const report::report_model& report) {
  for (const auto& p : m_printers) p->print_report(report);
}

}  // namespace fb::printers

#include "harness/printers/csv_printer.h"

#include <cmath>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include "harness/format/number_format.h"

namespace fb::printers {
namespace {

using namespace report;

using format::csv_field;

std::string number(double x) { return std::isfinite(x) ? fmt::format("{}", x) : std::string(); }

void append_ratio(std::vector<std::string>& row, const std::optional<stats::ratio_estimate>& r) {
  row.push_back(r ? number(r->ratio) : std::string());
  row.push_back(r ? number(r->low) : std::string());
  row.push_back(r ? number(r->high) : std::string());
}

}  // namespace

const std::vector<std::string>& csv_printer::get_columns() {
  static const std::vector<std::string> columns{
      "model",          "kernelbench_id",     "config_label",      "problem_size",     "implementation",
      "outcome",        "status",             "median_s",          "p10_s",            "p90_s",
      "mean_s",         "stdev_s",            "n",                 "floor_bytes",      "floor_flops",
      "floor_s",        "time_over_floor",    "impossible",        "speedup_vs_ref",   "speedup_vs_ref_low",
      "speedup_vs_ref_high", "speedup_vs_ref_tf32", "speedup_vs_ref_tf32_low", "speedup_vs_ref_tf32_high",
      "max_abs_error",  "max_err_over_tol",   "decided_by",        "message",          "config",
      "run_complete"};
  return columns;
}

void csv_printer::do_print_report(const report_model& report) {
  fmt::print(m_out, "{}\n", fmt::join(get_columns(), ","));
  for (const model_report& m : report.models) {
    for (const sweep_row& row : m.rows) {
      for (const impl_cell& cell : row.all) {
        const fused_entry* fused = nullptr;
        for (const fused_entry& e : row.fused)
          if (e.cell.implementation == cell.implementation) fused = &e;
        std::vector<std::string> r{csv_field(m.model), std::to_string(m.kernelbench_id), csv_field(row.config_label),
                                   number(row.problem_size), csv_field(cell.implementation),
                                   std::string(to_string(cell.outcome))};
        // status: the report's verdict for fused implementations; references have none.
        r.push_back(fused != nullptr ? std::string(to_string(fused->status)) : std::string());
        const timing_stats* s = cell.stats ? &*cell.stats : nullptr;
        for (double v : {s ? s->median : NAN, s ? s->p10 : NAN, s ? s->p90 : NAN, s ? s->mean : NAN, s ? s->stdev : NAN})
          r.push_back(number(v));
        r.push_back(s ? std::to_string(s->n) : std::string());
        const floor_estimate* f = cell.floor ? &*cell.floor : nullptr;
        for (double v : {f ? f->bytes : NAN, f ? f->flops : NAN, f ? f->floor_seconds : NAN})
          r.push_back(number(v));
        const std::optional<double> over = f && s ? format::time_over_floor(s->median, f->floor_seconds) : std::nullopt;
        r.push_back(over ? number(*over) : std::string());
        r.push_back(f ? (f->impossible ? "true" : "false") : std::string());
        append_ratio(r, fused != nullptr ? fused->vs_ref : std::nullopt);
        append_ratio(r, fused != nullptr ? fused->vs_ref_tf32 : std::nullopt);
        r.push_back(number(cell.max_abs_error));
        r.push_back(number(cell.tolerance_ratio));
        r.push_back(cell.decided_by ? std::string(to_string(*cell.decided_by)) : std::string());
        r.push_back(csv_field(cell.message));
        r.push_back(csv_field(row.config.is_null() ? std::string() : row.config.dump()));
        // On every row, so a filtered or concatenated CSV still says its run was cut short.
        r.push_back(report.status.complete ? "true" : "false");
        fmt::print(m_out, "{}\n", fmt::join(r, ","));
      }
    }
  }
}

}  // namespace fb::printers

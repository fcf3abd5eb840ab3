#pragma once
/// The outputs of `fusebench history`: a self-contained page (inline SVG, no script, no network) and
/// the same steps and series as Markdown and CSV. They only format a history (history_model.h).
#include <string>

#include "harness/history/history_model.h"

namespace fb::history {

/// index.html: per (device, model) a chart of the median time per run with its p10-p90 band, the
/// floor and the detected steps, the speedup over the strict reference below it, hover text on every
/// point and step; then the steps table and the runs. Well-formed XML (XHTML syntax), so a plain XML
/// parser reads it.
[[nodiscard]] std::string render_history_html(const history& h);

/// history.md: the method, the steps table, the runs, then one table per chart.
[[nodiscard]] std::string render_history_markdown(const history& h);

/// history.csv: one row per point of every series (RFC 4180), with the step that starts at it, if any.
[[nodiscard]] std::string render_history_csv(const history& h);

/// One line per step for a terminal, e.g. "NVIDIA H100 80GB HBM3 convt3d_bn_sub fused_cuda default:
/// 40f9cd5-dirty..20dcfc3-dirty 1.13 ms -> 873.1 us (0.772x, p 1.2e-05; runs per level 1 -> 2)".
[[nodiscard]] std::string describe_step(const history& h, const run_series& s, const series_step& step);

}  // namespace fb::history

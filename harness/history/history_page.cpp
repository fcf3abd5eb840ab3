/// index.html: a static page of inline SVG charts, written as XHTML so that an XML parser can check it.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/history/history_writers.h"
#include "harness/format/number_format.h"
#include "harness/format/xml_text.h"
#include "harness/report/report_model.h"

namespace fb::history {
namespace {

using format::format_time;

/// A time axis switches to log scale when its largest value is this many times its smallest.
constexpr double log_axis_span = 10.0;

// Chart geometry [px].
constexpr double chart_width = 920.0;
constexpr double plot_left = 78.0;
constexpr double plot_right = 900.0;
constexpr double time_top = 34.0;
constexpr double time_bottom = 300.0;
constexpr double speedup_top = 338.0;
constexpr double speedup_bottom = 448.0;
constexpr double chart_height = 500.0;

/// Colours by implementation (the strict reference grey, TF32 brown-grey, fused ones in colour).
std::string colour_of(const std::string& implementation, const std::vector<std::string>& fused_names) {
  if (implementation == report::ref_impl) return "#555555";
  if (implementation == report::ref_tf32_impl) return "#a0826d";
  static const char* const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#e377c2"};
  const auto it = std::find(fused_names.begin(), fused_names.end(), implementation);
  const auto i = static_cast<std::size_t>(it - fused_names.begin());
  return palette[i % (sizeof palette / sizeof palette[0])];
}

/// Dash pattern by the config's place in the chart: the default solid.
std::string dash_of(std::size_t config_rank) {
  static const char* const dashes[] = {"", "6 3", "2 3", "8 3 2 3", "12 4"};
  return dashes[config_rank % (sizeof dashes / sizeof dashes[0])];
}

/// Text for XML content and attribute values (the page is SVG inside HTML).
std::string escaped(std::string_view text) { return format::xml_escaped(text); }

std::string id_of(const chart& c) { return c.device_slug + "--" + c.model; }

std::string px(double x) { return fmt::format("{:.1f}", x); }

/// "1 run", "8 runs".
std::string count_of(std::size_t n, std::string_view noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

/// A value axis: linear or log, with ticks.
class value_axis {
 public:
  value_axis(double low, double high, double top, double bottom) : m_top(top), m_bottom(bottom) {
    if (!(low > 0.0) || !std::isfinite(low)) low = high > 0.0 ? high / 2.0 : 1.0;
    if (!(high > low)) high = low * 1.5;
    m_log = high / low >= log_axis_span;
    if (m_log) {
      m_low = std::pow(10.0, std::floor(std::log10(low) * 4.0) / 4.0);
      m_high = std::pow(10.0, std::ceil(std::log10(high) * 4.0) / 4.0);
      for (int e = static_cast<int>(std::floor(std::log10(m_low))); e <= static_cast<int>(std::ceil(std::log10(m_high))); ++e)
        for (double m : {1.0, 2.0, 5.0}) {
          const double v = m * std::pow(10.0, e);
          if (v >= m_low * 0.999 && v <= m_high * 1.001) m_ticks.push_back(v);
        }
    } else {
      const double pad = (high - low) * 0.08;
      m_low = std::max(0.0, low - pad);
      m_high = high + pad;
      const double raw = (m_high - m_low) / 5.0;
      const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
      double step = magnitude;
      for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (raw <= m * magnitude) {
          step = m * magnitude;
          break;
        }
      for (double v = std::ceil(m_low / step) * step; v <= m_high * (1.0 + 1e-9); v += step) m_ticks.push_back(v);
    }
  }
  [[nodiscard]] double y(double v) const {
    const double f = m_log ? (std::log(v) - std::log(m_low)) / (std::log(m_high) - std::log(m_low))
                           : (v - m_low) / (m_high - m_low);
    return m_bottom - std::clamp(f, -0.02, 1.02) * (m_bottom - m_top);
  }
  [[nodiscard]] bool is_log() const { return m_log; }
  [[nodiscard]] const std::vector<double>& get_ticks() const { return m_ticks; }

 private:
  double m_top, m_bottom, m_low = 1.0, m_high = 2.0;
  bool m_log = false;
  std::vector<double> m_ticks;
};

/// Draws the grid and tick labels of one panel.
void draw_axis(std::ostream& out, const value_axis& axis, double top, double bottom, const std::string& title,
               bool times) {
  out << fmt::format(R"(<rect class="panel" x="{}" y="{}" width="{}" height="{}"/>)", px(plot_left), px(top),
                     px(plot_right - plot_left), px(bottom - top))
      << "\n";
  for (double v : axis.get_ticks()) {
    const double y = axis.y(v);
    out << fmt::format(R"(<line class="grid" x1="{}" y1="{}" x2="{}" y2="{}"/>)", px(plot_left), px(y), px(plot_right), px(y));
    out << fmt::format(R"(<text class="tick" x="{}" y="{}" text-anchor="end">{}</text>)", px(plot_left - 6), px(y + 3.5),
                       escaped(times ? format_time(v) : fmt::format("{:g}×", v)))
        << "\n";
  }
  out << fmt::format(R"(<text class="axis-title" x="{}" y="{}">{}{}</text>)", px(plot_left), px(top - 8),
                     escaped(title), axis.is_log() ? " (log scale)" : "")
      << "\n";
}

/// Everything one point's hover text says.
std::string point_title(const history& h, const run_series& s, const series_point& p) {
  const run_record& r = h.runs[p.run];
  std::string text = fmt::format("{} · {}\nrun {} · commit {}{} · {}\nmedian {} (p10 {} – p90 {}), n {}", s.get_name(),
                                 s.model, p.run + 1, r.commit.substr(0, 12), r.dirty ? " (dirty tree)" : "", r.date,
                                 format_time(p.median), format_time(p.p10), format_time(p.p90), p.n);
  if (std::isfinite(p.speedup)) text += fmt::format("\n{:.3g}× the strict reference of this run", p.speedup);
  if (std::isfinite(p.floor_seconds))
    text += fmt::format("\nfloor {} ({:.2f}× floor)", format_time(p.floor_seconds), p.median / p.floor_seconds);
  if (p.outcome != fb::outcome::passed) text += fmt::format("\ncase {}", to_string(p.outcome));
  if (!r.complete) text += "\nINCOMPLETE RUN: " + r.incomplete_reason;
  if (!p.excluded_because.empty()) text += "\nnot used to find steps: " + p.excluded_because;
  return text;
}

/// How a point is marked: a filled circle for a clean, complete run; hollow for a dirty tree or an
/// incomplete run; a square for a point that step detection leaves out.
struct marker_style {
  bool hollow = false;
  bool excluded = false;
};

marker_style style_of(const history& h, const series_point& p) {
  return {!h.runs[p.run].get_caveat().empty(), !p.excluded_because.empty()};
}

void draw_marker(std::ostream& out, const char* css_class, double x, double y, const std::string& colour,
                 marker_style style, const std::string& title) {
  const std::string fill = style.hollow ? "#ffffff" : colour;
  if (style.excluded)
    out << fmt::format(R"(<rect class="{}" x="{}" y="{}" width="8" height="8" fill="{}" stroke="{}" stroke-width="1.5"><title>{}</title></rect>)",
                       css_class, px(x - 4), px(y - 4), fill, colour, escaped(title));
  else
    out << fmt::format(R"(<circle class="{}" cx="{}" cy="{}" r="4" fill="{}" stroke="{}" stroke-width="1.5"><title>{}</title></circle>)",
                       css_class, px(x), px(y), fill, colour, escaped(title));
  out << "\n";
}

void render_chart(std::ostream& out, const history& h, const chart& c, const std::vector<std::string>& fused_names) {
  // x: the chart's runs, evenly spaced.
  std::map<std::size_t, double> x_of;
  const double slot = (plot_right - plot_left) / static_cast<double>(std::max<std::size_t>(c.runs.size(), 1));
  for (std::size_t i = 0; i < c.runs.size(); ++i) x_of[c.runs[i]] = plot_left + slot * (static_cast<double>(i) + 0.5);

  double low = INFINITY, high = 0.0, speed_low = INFINITY, speed_high = 0.0;
  for (std::size_t i : c.series)
    for (const series_point& p : h.series[i].points) {
      for (double v : {p.p10, p.median, p.p90, p.floor_seconds})
        if (std::isfinite(v) && v > 0.0) {
          low = std::min(low, v);
          high = std::max(high, v);
        }
      if (std::isfinite(p.speedup) && h.series[i].implementation != report::ref_impl) {
        speed_low = std::min(speed_low, p.speedup);
        speed_high = std::max(speed_high, p.speedup);
      }
    }
  const value_axis time_axis(low, high, time_top, time_bottom);
  const value_axis speed_axis(std::min(speed_low, 1.0), std::max(speed_high, 1.0), speedup_top, speedup_bottom);

  out << fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-gpu="{}" data-model="{}" )"
                     R"(width="{}" height="{}" viewBox="0 0 {} {}" role="img">)",
                     escaped(c.device), escaped(c.model), px(chart_width), px(chart_height), px(chart_width),
                     px(chart_height))
      << "\n";
  out << fmt::format("<title>{} · {}: median time per run, p10–p90 band, floor, steps; speedup over the strict reference</title>\n",
                     escaped(c.device), escaped(c.model));
  draw_axis(out, time_axis, time_top, time_bottom, "time per call: median, p10–p90 band; dashed black: floor", true);
  draw_axis(out, speed_axis, speedup_top, speedup_bottom, "speedup over the strict reference (ref) of the same run", false);

  // Run columns: a faint line per run and its commit and date below.
  const std::size_t label_every = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(56.0 / slot)));
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    const run_record& r = h.runs[c.runs[i]];
    const double x = x_of[c.runs[i]];
    out << fmt::format(R"(<line class="run" x1="{}" y1="{}" x2="{}" y2="{}"/>)", px(x), px(time_top), px(x), px(speedup_bottom));
    if (i % label_every != 0) continue;
    const std::string when = r.date.size() >= 16 ? r.date.substr(5, 5) + " " + r.date.substr(11, 5) : r.date;
    const std::string caveat = r.get_caveat();
    out << fmt::format(R"(<text class="run-label{}" x="{}" y="{}" text-anchor="middle"><tspan x="{}">{}</tspan>)"
                       R"(<tspan x="{}" dy="12">{}</tspan>{}<title>{}</title></text>)",
                       caveat.empty() ? "" : " caveat", px(x), px(speedup_bottom + 16), px(x),
                       escaped(r.commit.substr(0, 7)), px(x), escaped(when),
                       caveat.empty() ? std::string()
                                      : fmt::format(R"(<tspan x="{}" dy="12">{}</tspan>)", px(x),
                                                    !r.complete ? "incomplete" : "dirty"),
                       escaped(fmt::format("run {}: commit {} · {} · {} · {}{}", c.runs[i] + 1, r.commit, r.date,
                                           r.hostname, r.sweep, caveat.empty() ? "" : " · " + caveat)))
        << "\n";
  }

  // Configs in the order their first series appears: the default first.
  std::vector<std::string> configs;
  for (std::size_t i : c.series) {
    const std::string key = h.series[i].get_name().substr(h.series[i].implementation.size());
    if (std::find(configs.begin(), configs.end(), key) == configs.end()) configs.push_back(key);
  }
  const auto config_rank = [&](const run_series& s) {
    return static_cast<std::size_t>(std::find(configs.begin(), configs.end(), s.get_name().substr(s.implementation.size())) -
                                    configs.begin());
  };

  // Floors: one dashed line per config, from the first series that carries one.
  std::set<std::size_t> floor_drawn;
  for (std::size_t i : c.series) {
    const run_series& s = h.series[i];
    const std::size_t rank = config_rank(s);
    std::vector<const series_point*> with_floor;
    for (const series_point& p : s.points)
      if (std::isfinite(p.floor_seconds) && p.floor_seconds > 0.0) with_floor.push_back(&p);
    if (with_floor.empty() || !floor_drawn.insert(rank).second) continue;
    out << fmt::format(R"(<g class="floor" data-series="floor{}">)", escaped(configs[rank])) << "\n";
    std::string points;
    for (const series_point* p : with_floor) points += fmt::format("{},{} ", px(x_of[p->run]), px(time_axis.y(p->floor_seconds)));
    out << fmt::format(R"(<polyline points="{}" fill="none" stroke="#000000" stroke-width="1.2" stroke-dasharray="4 3"/>)", points)
        << "\n";
    for (const series_point* p : with_floor)
      out << fmt::format(R"(<circle cx="{}" cy="{}" r="2" fill="#000000"><title>floor{} · run {} · {}</title></circle>)",
                         px(x_of[p->run]), px(time_axis.y(p->floor_seconds)), escaped(configs[rank]), p->run + 1,
                         escaped(format_time(p->floor_seconds)))
          << "\n";
    out << "</g>\n";
  }

  for (std::size_t i : c.series) {
    const run_series& s = h.series[i];
    const std::string colour = colour_of(s.implementation, fused_names);
    const std::string dash = dash_of(config_rank(s));
    const std::string dash_attribute = dash.empty() ? std::string() : fmt::format(R"( stroke-dasharray="{}")", dash);
    out << fmt::format(R"(<g class="series" data-series="{}" data-implementation="{}" data-config="{}">)",
                       escaped(s.get_name()), escaped(s.implementation), escaped(s.config_label))
        << "\n";
    // Band: p90 forward, p10 back.
    if (s.points.size() >= 2) {
      std::string band;
      for (const series_point& p : s.points) band += fmt::format("{},{} ", px(x_of[p.run]), px(time_axis.y(p.p90)));
      for (auto it = s.points.rbegin(); it != s.points.rend(); ++it)
        band += fmt::format("{},{} ", px(x_of[it->run]), px(time_axis.y(it->p10)));
      out << fmt::format(R"(<polygon class="band" points="{}" fill="{}" fill-opacity="0.15" stroke="none"/>)", band, colour)
          << "\n";
      std::string line;
      for (const series_point& p : s.points) line += fmt::format("{},{} ", px(x_of[p.run]), px(time_axis.y(p.median)));
      out << fmt::format(R"(<polyline class="median" points="{}" fill="none" stroke="{}" stroke-width="2"{}/>)", line,
                         colour, dash_attribute)
          << "\n";
    }
    for (const series_point& p : s.points) {
      const double x = x_of[p.run];
      out << fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1"/>)", px(x),
                         px(time_axis.y(p.p10)), px(x), px(time_axis.y(p.p90)), colour);
      draw_marker(out, "point", x, time_axis.y(p.median), colour, style_of(h, p), point_title(h, s, p));
    }
    // Steps: a dashed line between the two runs and the ratio above it.
    for (std::size_t k = 0; k < s.steps.size(); ++k) {
      const series_step& step = s.steps[k];
      const double x = (x_of[step.last_run_before] + x_of[step.first_run_after]) / 2.0;
      const double label_y = time_top + 12.0 + 12.0 * static_cast<double>(std::find(c.series.begin(), c.series.end(), i) - c.series.begin());
      out << fmt::format(R"(<g class="step"><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1.5" stroke-dasharray="3 3"/>)"
                         R"(<text x="{}" y="{}" text-anchor="middle" fill="{}" class="step-label">{}</text><title>step: {}</title></g>)",
                         px(x), px(time_top), px(x), px(time_bottom), colour, px(x), px(label_y), colour,
                         escaped(fmt::format("{:.2f}×", step.ratio)), escaped(describe_step(h, s, step)))
          << "\n";
    }
    // Speedup over the strict reference, for every other implementation.
    if (s.implementation != report::ref_impl) {
      std::vector<const series_point*> with_speedup;
      for (const series_point& p : s.points)
        if (std::isfinite(p.speedup)) with_speedup.push_back(&p);
      if (with_speedup.size() >= 2) {
        std::string line;
        for (const series_point* p : with_speedup) line += fmt::format("{},{} ", px(x_of[p->run]), px(speed_axis.y(p->speedup)));
        out << fmt::format(R"(<polyline class="speedup" points="{}" fill="none" stroke="{}" stroke-width="1.5"{}/>)", line,
                           colour, dash_attribute)
            << "\n";
      }
      for (const series_point* p : with_speedup)
        draw_marker(out, "speedup-point", x_of[p->run], speed_axis.y(p->speedup), colour, style_of(h, *p),
                    fmt::format("{}: {:.3g}× the strict reference\nrun {} · commit {} · {}", s.get_name(), p->speedup,
                                p->run + 1, h.runs[p->run].get_short_commit(), h.runs[p->run].date));
    }
    out << "</g>\n";
  }
  out << "</svg>\n";

  // Legend.
  out << "<ul class=\"legend\">\n";
  for (std::size_t i : c.series) {
    const run_series& s = h.series[i];
    const std::string dash = dash_of(config_rank(s));
    out << fmt::format(
        R"(<li><svg xmlns="http://www.w3.org/2000/svg" width="28" height="10"><line x1="0" y1="5" x2="28" y2="5" stroke="{}" stroke-width="3"{}/></svg> {} <span class="muted">({}{})</span></li>)",
        colour_of(s.implementation, fused_names), dash.empty() ? std::string() : fmt::format(R"( stroke-dasharray="{}")", dash),
        escaped(s.get_name()), count_of(s.points.size(), "run"),
        s.steps.empty() ? std::string() : ", " + count_of(s.steps.size(), "step"))
        << "\n";
  }
  out << R"(<li><svg xmlns="http://www.w3.org/2000/svg" width="28" height="10"><line x1="0" y1="5" x2="28" y2="5" stroke="#000000" stroke-width="1.2" stroke-dasharray="4 3"/></svg> floor</li>)"
      << "\n</ul>\n";
}

void render_steps_table(std::ostream& out, const history& h) {
  std::size_t count = 0;
  for (const run_series& s : h.series) count += s.steps.size();
  if (count == 0) {
    out << "<p>No steps found.</p>\n";
    return;
  }
  out << "<table class=\"steps\">\n<thead><tr><th>GPU</th><th>model</th><th>series</th><th>commits</th><th>before</th>"
         "<th>after</th><th>ratio</th><th>p-value</th><th>runs before / after</th></tr></thead>\n<tbody>\n";
  for (const chart& c : h.charts)
    for (std::size_t i : c.series)
      for (const series_step& step : h.series[i].steps) {
        const run_record& before = h.runs[step.last_run_before];
        const run_record& after = h.runs[step.first_run_after];
        out << fmt::format(
            "<tr class=\"{}\"><td>{}</td><td><a href=\"#{}\">{}</a></td><td>{}</td><td class=\"commits\" title=\"{} ({}) .. {} ({})\">{}..{}</td>"
            "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.3g}×</td><td class=\"num\">{:.2g}</td>"
            "<td class=\"num\">{} / {}</td></tr>\n",
            step.ratio > 1.0 ? "slower" : "faster", escaped(c.device), escaped(id_of(c)), escaped(c.model),
            escaped(h.series[i].get_name()), escaped(before.commit), escaped(before.date), escaped(after.commit),
            escaped(after.date), escaped(before.get_short_commit()), escaped(after.get_short_commit()),
            escaped(format_time(step.before_median)), escaped(format_time(step.after_median)), step.ratio, step.p_value,
            step.level_before_runs, step.level_after_runs);
      }
  out << "</tbody>\n</table>\n";
}

void render_runs_table(std::ostream& out, const history& h) {
  out << "<table class=\"runs\">\n<thead><tr><th>#</th><th>GPU</th><th>commit</th><th>date</th><th>sweep</th><th>host</th>"
         "<th>status</th><th>sources</th><th>files</th></tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < h.runs.size(); ++i) {
    const run_record& r = h.runs[i];
    const std::string caveat = r.get_caveat();
    std::vector<std::string> sources;
    for (const std::string& source : r.sources) sources.push_back(escaped(source));
    const std::string files = fmt::format("{}", fmt::join(sources, "<br/>"));
    out << fmt::format("<tr{}><td class=\"num\">{}</td><td>{}</td><td title=\"{}\">{}{}</td><td>{}</td><td>{}</td><td>{}</td>"
                       "<td>{}</td><td>{}</td><td class=\"files\">{}</td></tr>\n",
                       caveat.empty() ? "" : " class=\"caveat\"", i + 1, escaped(r.device), escaped(r.commit),
                       escaped(r.get_short_commit()), r.commit_in_repository ? "" : " (not in the repository)",
                       escaped(r.date), escaped(r.sweep), escaped(r.hostname),
                       caveat.empty() ? "complete" : escaped(caveat), escaped(r.source_check), files);
  }
  out << "</tbody>\n</table>\n";
}

constexpr const char* page_style = R"(
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1000px; padding: 0 12px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; } h3 { font-size: 15px; margin: 24px 0 4px; }
.muted, .method { color: #555; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.files { font-size: 11px; color: #444; }
td.commits { white-space: nowrap; font-family: ui-monospace, monospace; font-size: 12px; }
tr.slower td { background: #fdecea; } tr.faster td { background: #e9f5ec; } tr.caveat td { background: #fff6db; }
svg.chart { display: block; font: 11px system-ui, sans-serif; }
svg.chart .panel { fill: #fcfcfc; stroke: #bbb; }
svg.chart .grid { stroke: #e4e4e4; } svg.chart .run { stroke: #f0f0f0; }
svg.chart .tick { fill: #555; } svg.chart .axis-title { fill: #333; font-weight: 600; }
svg.chart .run-label { fill: #444; font-size: 10px; } svg.chart .run-label.caveat { fill: #b06000; }
svg.chart .step-label { font-weight: 700; }
ul.legend { list-style: none; padding: 0; margin: 4px 0 0 78px; display: flex; flex-wrap: wrap; gap: 4px 18px; }
nav a { margin-right: 12px; }
)";

}  // namespace

std::string render_history_html(const history& h) {
  std::vector<std::string> fused_names;
  for (const run_series& s : h.series)
    if (report::is_fused_implementation(s.implementation) &&
        std::find(fused_names.begin(), fused_names.end(), s.implementation) == fused_names.end())
      fused_names.push_back(s.implementation);
  std::sort(fused_names.begin(), fused_names.end());

  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
         "<title>fusebench performance history</title>\n<style>"
      << page_style << "</style>\n</head>\n<body>\n<h1>Performance history</h1>\n";
  std::set<std::string> devices;
  for (const run_record& r : h.runs) devices.insert(r.device);
  out << fmt::format("<p>{} on {}, {} series, {}. {}</p>\n", count_of(h.runs.size(), "run"),
                     escaped(fmt::format("{}", fmt::join(devices, ", "))), h.series.size(), count_of(h.charts.size(), "chart"),
                     escaped(h.ordering));
  out << fmt::format(
      "<p class=\"method\">Steps: binary segmentation of each series' run medians (log scale); a change point is kept "
      "where the pooled median of the runs before and after it moves by more than {:g}% and a two-sided Mann-Whitney U "
      "test of their kept samples gives p &lt; {:g} (<code>--min-effect</code>, <code>--alpha</code>). {} Hover a "
      "point, a step or a commit for details.</p>\n",
      h.settings.steps.min_effect * 100.0, h.settings.steps.alpha,
      h.settings.clean_runs_only
          ? "Hollow markers: dirty trees and incomplete runs; squares: points not used to find steps (those, and cases that did not pass; --clean-runs-only)."
          : "Hollow markers: runs of dirty trees (their commit is the parent of what ran) and incomplete runs; they are used to find steps. Squares: cases that did not pass, never used.");
  out << "<nav>";
  for (const chart& c : h.charts)
    out << fmt::format("<a href=\"#{}\">{}</a>", escaped(id_of(c)),
                       escaped(devices.size() > 1 ? c.device_slug + " " + c.model : c.model));
  out << "</nav>\n<h2>Steps</h2>\n";
  render_steps_table(out, h);
  std::string device;
  for (const chart& c : h.charts) {
    if (c.device != device) {
      device = c.device;
      out << fmt::format("<h2>{}</h2>\n", escaped(device));
    }
    out << fmt::format("<section id=\"{}\">\n<h3>{} (KernelBench #{})</h3>\n", escaped(id_of(c)), escaped(c.model),
                       c.kernelbench_id);
    render_chart(out, h, c, fused_names);
    out << "</section>\n";
  }
  out << "<h2>Runs</h2>\n";
  render_runs_table(out, h);
  if (!h.skipped_files.empty())
    out << fmt::format("<p class=\"muted\">Not results files (skipped): {}</p>\n",
                       escaped(fmt::format("{}", fmt::join(h.skipped_files, ", "))));
  out << "</body>\n</html>\n";
  return out.str();
}

}  // namespace fb::history

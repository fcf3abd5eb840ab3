#include "harness/printers/chart_printer.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/std.h>

#include "harness/format/number_format.h"

namespace fb::printers {
namespace {

using namespace report;
namespace fs = std::filesystem;

/// Lower and upper bounds of the values drawn, for explicit axis ranges: gnuplot warns about (and
/// pads arbitrarily) an empty autoscaled range, which a one-config run always has on the x axis.
struct extent {
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  void add(double x) {
    if (!std::isfinite(x) || x <= 0) return;  // log axes: only positive values count
    low = std::min(low, x);
    high = std::max(high, x);
  }
  [[nodiscard]] bool empty() const { return !(low <= high); }
  /// "[low/1.5:high*1.5]": a margin of half a step on a log axis.
  [[nodiscard]] std::string log_range() const { return fmt::format("[{:.6g}:{:.6g}]", low / 1.5, high * 1.5); }
};

/// Header shared by every script. gnuplot itself checks for pngcairo (GPVAL_TERMINALS lists what
/// `set terminal` would print), so a script stays valid on a machine whose gnuplot lacks cairo.
std::string script_header(std::string_view png, int width, int height) {
  return fmt::format(
      "# Written by `fusebench report`; run `gnuplot {0}.gp` in this folder to redraw.\n"
      "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {{\n"
      "  set terminal pngcairo noenhanced size {1},{2}\n"
      "}} else {{\n"
      "  set terminal png noenhanced size {1},{2}\n"
      "}}\n"
      "set output '{0}.png'\n"
      "set datafile missing 'NaN'\n"
      "set grid\n",
      png, width, height);
}

/// A gnuplot single-quoted string: a quote inside is doubled.
std::string gp_quoted(std::string_view text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("''") : std::string(1, ch);
  return out + "'";
}

/// "INCOMPLETE RUN: ... | " before every title, so a chart copied out of the report still says so.
std::string title_prefix(const report_model& report) {
  const std::string note = report.get_incomplete_note();
  return note.empty() ? std::string() : note + " | ";
}

std::string value_or_nan(double x) { return std::isfinite(x) ? fmt::format("{:.6g}", x) : std::string("NaN"); }

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
}

/// File-name-safe form of a model id.
std::string file_stem(std::string_view name) {
  std::string out(name);
  for (char& ch : out)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') ch = '_';
  return out;
}



/// Runs `gnuplot script` inside `dir`, so the scripts can use plain relative names.
void run_gnuplot(const fs::path& gnuplot, const fs::path& dir, const std::string& script) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("cannot start gnuplot: {}", std::strerror(errno)));
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    const std::string program = gnuplot.string();
    char* argv[] = {const_cast<char*>(program.c_str()), const_cast<char*>(script.c_str()), nullptr};
    ::execv(program.c_str(), argv);
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(fmt::format("waiting for gnuplot failed: {}", std::strerror(errno)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(fmt::format("gnuplot failed on {} ({})", dir / script,
                                         WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                                                           : std::string("killed by a signal")));
}

/// speedup.{dat,gp}: one point per (model, fused implementation) of the default config. Returns
/// false when no model has a speedup to draw (reference-only or failing everywhere).
bool write_speedup_chart(const fs::path& dir, const report_model& report) {
  const std::size_t fused_names = report.geomeans.size();  // one geomean per fused implementation name
  std::string data = "# label vs_ref low high vs_ref_tf32 low high\n";
  extent y;
  y.add(1.0);  // keep the parity line in view
  int points = 0;
  bool any_ref = false;   // a series without a single point makes gnuplot warn ("no valid points")
  bool any_tf32 = false;  // and a CPU run has no ref_tf32 at all
  for (const model_report& m : report.models) {
    const sweep_row* row = m.get_default_row();
    if (row == nullptr) continue;
    for (const fused_entry& e : row->fused) {
      if (e.status != fused_status::ok || (!e.vs_ref && !e.vs_ref_tf32)) continue;
      any_ref = any_ref || e.vs_ref.has_value();
      any_tf32 = any_tf32 || e.vs_ref_tf32.has_value();
      const std::string label = fused_names > 1 ? fmt::format("{}/{}", m.model, e.cell.implementation) : m.model;
      std::string line = fmt::format("\"{}\"", label);
      for (const auto& r : {e.vs_ref, e.vs_ref_tf32}) {
        // No interval (no samples kept): draw the point with a zero-length bar.
        const double low = r && std::isfinite(r->low) ? r->low : (r ? r->ratio : NAN);
        const double high = r && std::isfinite(r->high) ? r->high : (r ? r->ratio : NAN);
        line += fmt::format(" {} {} {}", value_or_nan(r ? r->ratio : NAN), value_or_nan(low), value_or_nan(high));
        y.add(low);
        y.add(high);
      }
      data += line + "\n";
      ++points;
    }
  }
  if (points == 0) return false;
  write_text(dir / "speedup.dat", data);
  std::string labels;
  for (const model_report& m : report.models)
    if (const sweep_row* row = m.get_default_row(); row != nullptr && labels.find(row->config_label) == std::string::npos)
      labels += (labels.empty() ? "" : ", ") + row->config_label;
  std::string script = script_header("speedup", 1000, 600);
  script += fmt::format(
      "set title {}\n"
      "set ylabel 'speedup (log scale)'\n"
      "set logscale y\n"
      "set yrange {}\n"
      "set xrange [-0.5:{}]\n"
      "set xtics rotate by -20\n"
      "set key below\n"
      "set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2\n",
      gp_quoted(fmt::format("{}Fused speedup over libtorch, config {}: median ratio with 95% bootstrap interval",
                            title_prefix(report), labels)),
      y.log_range(), points - 0.5);
  std::vector<std::string> plots;
  if (any_ref) plots.emplace_back("using ($0-0.1):2:3:4:xtic(1) with yerrorbars pointtype 7 title 'vs ref (fp32, TF32 off)'");
  if (any_tf32)
    plots.push_back(fmt::format("using ($0+0.1):5:6:7{} with yerrorbars pointtype 5 title 'vs ref_tf32'",
                                any_ref ? "" : ":xtic(1)"));
  script += fmt::format("plot 'speedup.dat' {}\n", fmt::join(plots, ", \\\n     '' "));
  write_text(dir / "speedup.gp", script);
  return true;
}

/// time_vs_size_<model>.{dat,gp}: one line per implementation, median with p10–p90 bars, log-log.
/// Returns the stem, or nullopt when the model has no timed case at all.
std::optional<std::string> write_time_chart(const fs::path& dir, const report_model& report, const model_report& m) {
  const std::string stem = "time_vs_size_" + file_stem(m.model);
  std::vector<std::string> impls{std::string(ref_impl), std::string(ref_tf32_impl)};
  impls.insert(impls.end(), m.fused_implementations.begin(), m.fused_implementations.end());
  // The peers too: a peer whose values miss the tolerance is drawn with its time, its title says so.
  impls.insert(impls.end(), m.peer_implementations.begin(), m.peer_implementations.end());
  std::string data;
  std::vector<std::string> plots;
  extent x;
  extent y;
  // One x tic per config, labelled like the Markdown size column: log decades alone say little
  // when a sweep spans a factor of four.
  std::vector<std::string> size_tics;
  for (const sweep_row& row : m.rows)
    if (std::isfinite(row.problem_size) && row.problem_size > 0)
      size_tics.push_back(fmt::format("'{}' {:.6g}", format::format_count(row.problem_size), row.problem_size));
  for (const std::string& impl : impls) {
    std::string block;
    bool outside_tolerance = false;
    for (const sweep_row& row : m.rows) {
      const impl_cell* cell = nullptr;
      for (const impl_cell& c : row.all)
        if (c.implementation == impl) cell = &c;
      if (cell == nullptr) continue;
      const bool timed_peer = is_peer_implementation(impl) && cell->stats && cell->outcome == outcome::incorrect;
      if (!cell->is_timed() && !timed_peer) continue;
      outside_tolerance = outside_tolerance || timed_peer;
      if (cell->floor && cell->floor->impossible) continue;  // suspect timing: not drawn as a result
      const timing_stats& s = *cell->stats;
      block += fmt::format("{} {} {} {}\n", value_or_nan(row.problem_size), value_or_nan(s.median * 1e3),
                           value_or_nan(s.p10 * 1e3), value_or_nan(s.p90 * 1e3));
      x.add(row.problem_size);
      y.add(s.p10 * 1e3);
      y.add(s.p90 * 1e3);
      y.add(s.median * 1e3);
    }
    if (block.empty()) continue;
    // gnuplot separates data sets ("index") by two blank lines.
    data += fmt::format("# {}\n{}\n\n", impl, block);
    plots.push_back(fmt::format("'{}.dat' index {} using 1:2:3:4 with yerrorlines pointtype 7 title '{}{}'", stem,
                                plots.size(), impl, outside_tolerance ? " (outside tol)" : ""));
  }
  if (plots.empty()) return std::nullopt;
  // The roofline floor of each config: how far the fused line sits above what no kernel can beat.
  std::string floors;
  for (const sweep_row& row : m.rows)
    for (const impl_cell& c : row.all)
      if (c.floor && std::isfinite(c.floor->floor_seconds) && c.floor->floor_seconds > 0) {
        floors += fmt::format("{} {}\n", value_or_nan(row.problem_size), value_or_nan(c.floor->floor_seconds * 1e3));
        x.add(row.problem_size);
        y.add(c.floor->floor_seconds * 1e3);
        break;
      }
  if (!floors.empty()) {
    data += fmt::format("# roofline floor\n{}\n\n", floors);
    plots.push_back(fmt::format("'{}.dat' index {} using 1:2 with lines dashtype 2 linecolor rgb 'gray40' title "
                                "'roofline floor (fused algorithm)'",
                                stem, plots.size()));
  }
  write_text(dir / (stem + ".dat"), data);
  std::string script = script_header(stem, 900, 600);
  script += fmt::format(
      "set title {}\n"
      "set xlabel 'problem size (elements)'\n"
      "set ylabel 'median time [ms]'\n"
      "set logscale xy\n"
      "set xrange {}\n"
      "set yrange {}\n"
      "set xtics ({})\n"
      "set key below\n",
      gp_quoted(fmt::format("{}{} (KernelBench #{}): median time vs problem size, bars p10-p90", title_prefix(report),
                            m.model, m.kernelbench_id)),
      x.log_range(), y.log_range(), fmt::join(size_tics, ", "));
  std::string plot_line;
  for (const std::string& p : plots)
    plot_line += (plot_line.empty() ? "plot " : ", \\\n     ") + p;
  script += plot_line + "\n";
  write_text(dir / (stem + ".gp"), script);
  return stem;
}

}  // namespace

std::optional<fs::path> find_program(const std::string& program) {
  if (program.find('/') != std::string::npos)
    return ::access(program.c_str(), X_OK) == 0 ? std::optional<fs::path>(program) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

chart_printer::chart_printer(std::filesystem::path out_dir, std::ostream& warnings, std::string gnuplot)
    : m_out_dir(std::move(out_dir)), m_warnings(warnings), m_gnuplot(std::move(gnuplot)) {}

void chart_printer::do_print_report(const report_model& report) {
  m_charts.clear();
  m_scripts.clear();
  m_links.clear();
  std::error_code ec;
  fs::create_directories(m_out_dir, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create chart folder {}: {}", m_out_dir, ec.message()));

  std::vector<std::string> stems;
  std::vector<chart_link> links;
  if (write_speedup_chart(m_out_dir, report)) {
    stems.emplace_back("speedup");
    links.push_back({"fused speedup over libtorch", "", "speedup.png"});
  }
  for (const model_report& m : report.models)
    if (const auto stem = write_time_chart(m_out_dir, report, m)) {
      stems.push_back(*stem);
      links.push_back({m.model + ": median time vs problem size", m.model, *stem + ".png"});
    }
  for (const std::string& stem : stems) m_scripts.push_back(m_out_dir / (stem + ".gp"));

  const std::optional<fs::path> gnuplot = find_program(m_gnuplot);
  if (!gnuplot) {
    fmt::print(m_warnings, "fusebench: warning: gnuplot not found ('{}'); charts skipped, scripts left in {}\n",
               m_gnuplot, m_out_dir);
    return;
  }
  for (const std::string& stem : stems) {
    run_gnuplot(*gnuplot, m_out_dir, stem + ".gp");
    m_charts.push_back(m_out_dir / (stem + ".png"));
  }
  m_links = std::move(links);
}

}  // namespace fb::printers

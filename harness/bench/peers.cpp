#include "harness/bench/peers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <thread>

#include "harness/detail/remove_tree.h"
#include "harness/fan_out/device_fan_out.h"
#include "harness/fan_out/fan_out.h"
#include "harness/process/interrupt.h"
#include "harness/results/gbench_json.h"

namespace fb::bench {
namespace {

using json = nlohmann::json;

/// How long a helper killed with SIGTERM gets before SIGKILL [seconds].
constexpr double kill_grace = 2.0;
/// The longest protocol line quoted in a message [characters].
constexpr std::size_t quoted_line = 80;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// `text` shortened for a one-line message, control characters shown as '?'.
std::string quoted(const std::string& text) {
  std::string s = text.substr(0, quoted_line);
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) == 0x7f) ch = '?';
  return "'" + s + (text.size() > quoted_line ? "...'" : "'");
}

/// The last non-empty line of a file (the helper's stderr: a traceback ends with the exception).
std::string last_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::string last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

/// "crashed (signal 11, SIGSEGV)", "exited (status 3)", "timed out": how a helper ended, in words.
std::string ending(const helper_exit& e, double limit) {
  if (e.timed_out) return fmt::format("timed out (killed after {:g} s, --peer-timeout)", limit);
  if (e.signal != 0) return fan_out::crash_message(e.signal);
  return fmt::format("exited (status {})", e.exit_code);
}

}  // namespace

std::string peer_helper_path(const peer_settings& settings) {
  if (!settings.helper.empty()) return settings.helper;
#ifdef FUSEBENCH_PEER_HELPER
  return FUSEBENCH_PEER_HELPER;
#else
  return "peers/torch_peers.py";
#endif
}

std::optional<peer_record> parse_peer_record(const std::string& line, const std::vector<std::string>& expected,
                                             std::string& why) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception&) {
    why = "printed garbage instead of its record: " + quoted(line);
    return std::nullopt;
  }
  const auto text = [&](const char* key) -> std::optional<std::string> {
    if (!j.contains(key) || !j.at(key).is_string()) return std::nullopt;
    return j.at(key).get<std::string>();
  };
  if (!j.is_object() || !text("peer") || !text("status")) {
    why = "printed a record without \"peer\" and \"status\": " + quoted(line);
    return std::nullopt;
  }
  peer_record r;
  r.peer = *text("peer");
  r.status = *text("status");
  if (std::find(expected.begin(), expected.end(), r.peer) == expected.end()) {
    why = fmt::format("printed a record of peer \"{}\", which it was not asked to run: {}", r.peer, quoted(line));
    return std::nullopt;
  }
  r.reason = text("reason").value_or("");
  r.torch_version = text("torch").value_or("");
  if (r.status == "skipped" || r.status == "error") {
    if (r.reason.empty()) r.reason = "no reason given";
    return r;
  }
  if (r.status != "timed") {
    why = fmt::format("printed status \"{}\" for peer {} (timed, skipped or error)", r.status, r.peer);
    return std::nullopt;
  }
  const json samples = j.value("samples", json());
  if (!samples.is_array() || samples.empty()) {
    why = fmt::format("printed a timed record of peer {} without samples: {}", r.peer, quoted(line));
    return std::nullopt;
  }
  for (const json& s : samples) {
    if (!s.is_number() || !std::isfinite(s.get<double>()) || s.get<double>() <= 0.0) {
      why = fmt::format("printed a sample of peer {} that is no time: {}", r.peer, s.dump());
      return std::nullopt;
    }
    r.samples.push_back(s.get<double>());
  }
  if (j.contains("compile_seconds") && j.at("compile_seconds").is_number())
    r.compile_seconds = j.at("compile_seconds").get<double>();
  const std::optional<std::string> output = text("output");
  // The output must be a file of the case folder: a name, never a path that leaves it.
  if (!output || output->empty() || output->find('/') != std::string::npos || *output == "." || *output == "..") {
    why = fmt::format("printed a timed record of peer {} without an output file name: {}", r.peer, quoted(line));
    return std::nullopt;
  }
  r.output = *output;
  return r;
}

helper_exit run_helper_process(const std::vector<std::string>& argv, const std::filesystem::path& stdout_file,
                               const std::filesystem::path& stderr_file, double limit,
                               const std::function<int()>& stop) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("peers: cannot start the helper: fork failed"));
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: a hang is killed with everything it started (compile workers)
    const int out = ::open(stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null_in = ::open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || null_in < 0) ::_exit(126);
    ::dup2(null_in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execvp(args[0], args.data());
    ::_exit(127);  // the interpreter is missing: "exited (status 127)"
  }
  ::setpgid(pid, pid);  // both sides set it: whichever runs first
  helper_exit result;
  const auto started = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> term_sent;
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
      break;
    }
    if (!term_sent) {
      if (const int s = stop ? stop() : 0; s != 0) result.stopped_by = s;
      else if (seconds_since(started) > limit) result.timed_out = true;
      if (result.stopped_by != 0 || result.timed_out) {
        ::kill(-pid, SIGTERM);
        term_sent = std::chrono::steady_clock::now();
      }
    } else if (seconds_since(*term_sent) > kill_grace) {
      ::kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);  // whatever it left behind in its group (a compile worker) goes with it
  return result;
}

void run_case_peers(const peer_settings& settings, const peer_case& c, std::vector<case_result>& rows,
                    double deadline_left, const std::function<int()>& stop,
                    const std::function<void(const std::string&)>& log) {
  namespace fs = std::filesystem;
  const auto stage_start = std::chrono::steady_clock::now();
  const auto budget_left = [&] { return deadline_left - seconds_since(stage_start); };
  std::vector<std::size_t> remaining;  // indices into rows, in the helper's order
  for (std::size_t i = 0; i < rows.size(); ++i) remaining.push_back(i);
  const auto name_of = [&](std::size_t i) { return rows[i].implementation.substr(peer_prefix.size()); };
  const auto mark = [&](std::size_t i, outcome o, const std::string& message) {
    rows[i].outcome = o;
    rows[i].message = message;
  };
  const auto out_of_budget = [&](std::size_t i) {
    mark(i, outcome::not_run,
         fmt::format("skipped for time: the peer stage's budget (--peer-budget {:g} s, dealt over the cases) was spent",
                     settings.budget));
  };

  const std::string folder = fan_out::make_scratch_folder(fs::temp_directory_path().string(), "fusebench-peers-");
  const fs::path dir(folder);
  try {
    c.write_tensors(dir);
  } catch (const std::exception& e) {
    for (std::size_t i : remaining) mark(i, outcome::failed, std::string("writing the case's tensors: ") + e.what());
    fb::detail::remove_tree(folder);
    return;
  }
  const std::string helper = peer_helper_path(settings);
  while (!remaining.empty()) {
    if (budget_left() <= 0.0) {
      for (std::size_t i : remaining) out_of_budget(i);
      break;
    }
    std::vector<std::string> names;
    for (std::size_t i : remaining) names.push_back(name_of(i));
    const json case_json{{"model", c.model},          {"config", c.config},          {"device", c.device},
                         {"peers", names},            {"policy", c.policy},          {"warmup_calls", c.warmup_calls},
                         {"output_shape", c.output_shape}};
    std::ofstream(dir / "case.json") << case_json.dump(1) << '\n';
    const double limit = std::min(settings.timeout, budget_left());
    const bool limited_by_budget = budget_left() < settings.timeout;
    const helper_exit e = run_helper_process({settings.python, helper, folder}, dir / "protocol.txt",
                                             dir / "helper.log", limit, stop);
    if (e.stopped_by != 0) {
      fb::detail::remove_tree(folder);
      throw run_interrupted(e.stopped_by);
    }
    // The records, in the order printed; a line that is no record of a peer still waiting is laid on
    // the first peer still waiting, the one the helper was on.
    std::vector<std::size_t> still;
    std::vector<std::size_t> done;
    std::string garbage;
    {
      std::ifstream in(dir / "protocol.txt");
      std::vector<std::string> waiting = names;
      for (std::string line; std::getline(in, line);) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        std::string why;
        const std::optional<peer_record> r = parse_peer_record(line, waiting, why);
        const auto first_waiting = [&]() -> std::optional<std::size_t> {
          for (std::size_t i : remaining)
            if (std::find(waiting.begin(), waiting.end(), name_of(i)) != waiting.end()) return i;
          return std::nullopt;
        };
        const std::optional<std::size_t> target = [&]() -> std::optional<std::size_t> {
          if (!r) return first_waiting();
          for (std::size_t i : remaining)
            if (name_of(i) == r->peer) return i;
          return std::nullopt;
        }();
        if (!target) break;  // nothing left waiting: whatever follows has no peer to be about
        case_result& row = rows[*target];
        waiting.erase(std::find(waiting.begin(), waiting.end(), name_of(*target)));
        done.push_back(*target);
        row.peer = peer_details{};
        if (!r) {
          mark(*target, outcome::failed, "the peer helper " + why);
          log(fmt::format("PEER ERROR: {}: {}", gbench_name(row), row.message));
          continue;
        }
        row.peer->torch_version = r->torch_version;
        row.peer->compile_seconds = r->compile_seconds;
        if (r->status == "skipped") {
          mark(*target, outcome::not_supported, "skipped: " + r->reason);
          continue;
        }
        if (r->status == "error") {
          mark(*target, outcome::failed, "the peer helper reported an error: " + r->reason);
          log(fmt::format("PEER ERROR: {}: {}", gbench_name(row), row.message));
          continue;
        }
        const fs::path output = dir / r->output;
        row.stats = summarize_samples(r->samples);
        try {
          c.judge(output, row);
        } catch (const std::exception& ex) {
          mark(*target, outcome::failed, std::string("its output: ") + ex.what());
          row.stats.reset();  // the time of an output that cannot be judged says nothing
          log(fmt::format("PEER ERROR: {}: {}", gbench_name(row), row.message));
        }
        std::error_code ec;
        fs::remove(output, ec);  // a peer's output can be a GiB (#34): removed once judged
      }
      for (std::size_t i : remaining)
        if (std::find(done.begin(), done.end(), i) == done.end()) still.push_back(i);
    }
    if (still.empty()) break;
    // The helper ended before a record of every peer: the first one missing is the one it was on.
    const std::size_t on = still.front();
    if (e.timed_out && limited_by_budget) {
      for (std::size_t i : still) out_of_budget(i);
      break;
    }
    if (e.exit_code == 127 && done.empty()) {  // execvp found no such interpreter: no Python, no peers
      for (std::size_t i : still)
        mark(i, outcome::not_supported,
             fmt::format("skipped: no Python: '{}' could not be started (--peer-python)", settings.python));
      break;
    }
    const std::string stderr_tail = last_line(dir / "helper.log");
    const std::string why = fmt::format("the peer helper {} before its record{}", ending(e, limit),
                                        stderr_tail.empty() ? std::string() : "; its last words: " + quoted(stderr_tail));
    rows[on].peer = peer_details{};
    mark(on, outcome::failed, why);
    log(fmt::format("PEER ERROR: {}: {}", gbench_name(rows[on]), why));
    still.erase(still.begin());
    if (e.exit_code == 2) {  // it refused the case itself (bad usage): every later peer would be refused too
      for (std::size_t i : still) {
        rows[i].peer = peer_details{};
        mark(i, outcome::failed, why);
      }
      break;
    }
    remaining = still;  // started again for the peers after the one that failed
  }
  fb::detail::remove_tree(folder);
}

}  // namespace fb::bench

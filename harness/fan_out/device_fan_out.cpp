#include "harness/fan_out/device_fan_out.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "harness/device/gpu_assignment.h"

extern char** environ;

namespace fb::fan_out {
namespace {

constexpr std::size_t kept_lines = 5;

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  for (const char ch : text + ",") {
    if (ch == ',') {
      out.push_back(item);
      item.clear();
    } else if (ch != ' ') {
      item += ch;
    }
  }
  return out;
}

std::string this_executable() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("--devices: cannot find this executable (/proc/self/exe): " + ec.message());
  return self.string();
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

/// A started child: its pid, the read end of its stderr and what is not yet a whole line.
struct running_child {
  pid_t pid = -1;
  int fd = -1;
  std::string pending;
  std::deque<std::string> last;
  bool killed = false;  ///< sent SIGKILL because `overdue` said so
};

}  // namespace

std::vector<device_slot> parse_devices(const std::string& text, int visible_gpus, const char* inherited) {
  std::vector<device_slot> slots;
  const std::vector<std::string> items = text == "all" ? std::vector<std::string>{} : split_list(text);
  if (text == "all") {
    if (visible_gpus <= 0)
      throw std::invalid_argument(
          "--devices all: no CUDA device is visible (a CPU-only build, or no GPU); --devices cpu,cpu runs shard "
          "processes on the CPU, for tests");
    for (int i = 0; i < visible_gpus; ++i)
      slots.push_back({fmt::format("gpu {}", i), false, i, gpus::visible_device_for(i, inherited)});
    return slots;
  }
  const bool cpu = !items.empty() && items.front() == "cpu";
  for (const std::string& item : items) {
    if (item == "cpu") {
      if (!cpu) throw std::invalid_argument("--devices " + text + ": mixes cpu and GPUs; give GPUs or cpu,cpu,...");
      slots.push_back({fmt::format("cpu {}", slots.size()), true, -1, ""});
      continue;
    }
    if (cpu) throw std::invalid_argument("--devices " + text + ": mixes cpu and GPUs; give GPUs or cpu,cpu,...");
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 6)
      throw std::invalid_argument("--devices " + text + ": \"" + item +
                                  "\" is not a GPU position; give all, GPU positions like 0,1,3, or cpu,cpu");
    const int index = std::atoi(item.c_str());
    if (visible_gpus <= 0)
      throw std::invalid_argument("--devices " + text +
                                  ": no CUDA device is visible (a CPU-only build, or no GPU); --devices cpu,cpu runs "
                                  "shard processes on the CPU, for tests");
    if (index >= visible_gpus)
      throw std::invalid_argument(fmt::format("--devices {}: GPU {} does not exist; this process sees {} GPU{} (0..{})",
                                              text, index, visible_gpus, visible_gpus == 1 ? "" : "s",
                                              visible_gpus - 1));
    const std::string label = fmt::format("gpu {}", index);
    if (std::any_of(slots.begin(), slots.end(), [&](const device_slot& s) { return s.label == label; }))
      throw std::invalid_argument(fmt::format("--devices {}: GPU {} is given twice; one shard process per GPU", text,
                                              index));
    slots.push_back({label, false, index, gpus::visible_device_for(index, inherited)});
  }
  if (slots.empty()) throw std::invalid_argument("--devices " + text + ": no device given");
  return slots;
}

std::vector<device_slot> per_device_slots(const std::vector<device_slot>& slots, int per_device) {
  if (per_device <= 1) return slots;
  std::vector<device_slot> out;
  for (const device_slot& s : slots)
    for (int k = 1; k <= per_device; ++k) {
      device_slot copy = s;
      copy.label = fmt::format("{}.{}", s.label, k);
      copy.sharing = per_device;
      out.push_back(copy);
    }
  return out;
}

std::vector<std::string> shard_environment(const char* const* parent, const std::string& visible,
                                           unsigned threads, int sharing) {
  std::vector<std::string> env;
  bool threads_set = false;
  for (const char* const* e = parent; *e != nullptr; ++e) {
    if (std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) == 0 || std::strncmp(*e, "FUSEBENCH_SHARED_GPU=", 21) == 0)
      continue;
    threads_set = threads_set || std::strncmp(*e, "OMP_NUM_THREADS=", 16) == 0;
    env.emplace_back(*e);
  }
  env.push_back("CUDA_VISIBLE_DEVICES=" + visible);
  if (!threads_set) env.push_back("OMP_NUM_THREADS=" + std::to_string(std::max(1u, threads)));
  if (sharing > 1) env.push_back("FUSEBENCH_SHARED_GPU=" + std::to_string(sharing));
  return env;
}

std::vector<shard_exit> run_shard_processes(const std::vector<shard_process>& processes, const line_hook& hook,
                                            const std::function<int()>& stop_signal,
                                            const std::function<bool(std::size_t)>& overdue) {
  const std::string exe = this_executable();
  const pid_t parent = ::getpid();
  std::vector<running_child> children(processes.size());
  std::vector<shard_exit> exits(processes.size());
  const unsigned threads = std::thread::hardware_concurrency() / static_cast<unsigned>(processes.size());
  const long max_fd = ::sysconf(_SC_OPEN_MAX);

  const auto emit = [&](std::size_t i, const std::string& line) {
    running_child& c = children[i];
    c.last.push_back(line);
    if (c.last.size() > kept_lines) c.last.pop_front();
    if (!hook || !hook(i, line)) fmt::print(stderr, "[{}] {}\n", processes[i].slot.label, line);
  };

  for (std::size_t i = 0; i < processes.size(); ++i) {
    // Everything the child needs is built before fork: between fork and exec only async-signal-safe calls.
    std::vector<std::string> argv_strings{exe};
    argv_strings.insert(argv_strings.end(), processes[i].args.begin(), processes[i].args.end());
    std::vector<char*> argv = c_strings(argv_strings);
    std::vector<std::string> env_strings =
        shard_environment(environ, processes[i].slot.cuda_visible_devices, threads, processes[i].slot.sharing);
    std::vector<char*> envp = c_strings(env_strings);
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("--devices: pipe: ") + std::strerror(errno));
    const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("--devices: fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::setpgid(0, 0);
      // The signals the parent passes on must act: a shell starts background jobs with SIGINT ignored,
      // and an ignored signal stays ignored across exec.
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(143);  // the parent died before prctl took effect
      ::dup2(pipe_fds[1], STDERR_FILENO);
      if (devnull >= 0) ::dup2(devnull, STDOUT_FILENO);
      // Nothing of the parent's but stdin, stdout and stderr passes exec: on a GPU the parent holds
      // the CUDA driver's descriptors (it asked for device names), which are not all close-on-exec;
      // a shard that kept them open past exec would share and outlive the parent's driver state.
      // (Hygiene: the parent's SIGSEGV on the H100 had another cause, harness/detail/remove_tree.h.)
#if defined(SYS_close_range)
      if (::syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
#endif
        for (long fd = 3; fd < (max_fd > 0 ? max_fd : 1024); ++fd) ::close(static_cast<int>(fd));
      ::execve(exe.c_str(), argv.data(), envp.data());
      const char message[] = "fusebench: error: cannot execute this executable for a shard process\n";
      (void)!::write(STDERR_FILENO, message, sizeof message - 1);
      ::_exit(127);
    }
    ::close(pipe_fds[1]);
    if (devnull >= 0) ::close(devnull);
    children[i].pid = pid;
    children[i].fd = pipe_fds[0];
  }

  bool forwarded = false;
  char buffer[4096];
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::size_t> owner;
    for (std::size_t i = 0; i < children.size(); ++i)
      if (children[i].fd >= 0) {
        fds.push_back({children[i].fd, POLLIN, 0});
        owner.push_back(i);
      }
    if (fds.empty()) break;
    // A timeout, so that a signal recorded by the parent's handler is seen and passed on soon.
    const int ready = ::poll(fds.data(), fds.size(), 200);
    if (!forwarded && stop_signal) {
      if (const int sig = stop_signal(); sig != 0) {
        for (const running_child& c : children) ::kill(c.pid, sig);
        forwarded = true;
      }
    }
    if (overdue)
      for (std::size_t i = 0; i < children.size(); ++i)
        if (children[i].fd >= 0 && !children[i].killed && overdue(i)) {
          // Its whole process group: the child and whatever it started (a hung plug-in ignores politer signals).
          ::kill(-children[i].pid, SIGKILL);
          children[i].killed = true;
        }
    if (ready <= 0) continue;  // timeout, or EINTR from the signal just passed on
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      running_child& c = children[owner[k]];
      const ssize_t n = ::read(c.fd, buffer, sizeof buffer);
      if (n > 0) {
        c.pending.append(buffer, static_cast<std::size_t>(n));
        for (std::size_t nl; (nl = c.pending.find_first_of("\n\r")) != std::string::npos;) {
          std::string line = c.pending.substr(0, nl);
          c.pending.erase(0, nl + 1);
          if (!line.empty()) emit(owner[k], line);
        }
      } else if (n == 0 || errno != EINTR) {
        if (!c.pending.empty()) emit(owner[k], c.pending);
        c.pending.clear();
        ::close(c.fd);
        c.fd = -1;
      }
    }
  }
  for (std::size_t i = 0; i < children.size(); ++i) {
    int status = 0;
    while (::waitpid(children[i].pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) exits[i].exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) exits[i].signal = WTERMSIG(status);
    exits[i].last_lines.assign(children[i].last.begin(), children[i].last.end());
  }
  return exits;
}

std::string describe_exit(const shard_process& process, const shard_exit& exit) {
  std::string what = exit.signal != 0 ? fmt::format("killed by signal {}", exit.signal)
                                      : fmt::format("exit {}", exit.exit_code);
  if (!exit.last_lines.empty()) what += ": " + exit.last_lines.back();
  return fmt::format("{} (shard {}): {}", process.slot.label, to_string(process.shard), what);
}

std::string make_scratch_folder(const std::string& parent, const std::string& prefix) {
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  std::string pattern = (std::filesystem::path(parent) / (prefix + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error(fmt::format("cannot create a folder for the shard processes in {}: {}", parent,
                                         std::strerror(errno)));
  return pattern;
}

}  // namespace fb::fan_out

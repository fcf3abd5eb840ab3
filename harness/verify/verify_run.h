#pragma once
/// `fusebench verify`'s run: fuzz every registered implementation against the libtorch reference under
/// the verdict rules, and the reference's own semantics against the fp64 loop oracle (README "The
/// equivalence contract"); or replay one config, a repro bundle, or a user's own tensors. The CLI
/// (harness/cli/verify.cpp) only parses the options into `options` and calls run().
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "harness/verify/tolerance.h"

namespace fb::verify {

/// Options of `fusebench verify`. A new option that changes which cases a fuzz run draws, or how
/// they are judged, must also be passed on to the shard processes (shard_arguments).
struct options {
  std::vector<std::string> models;
  int cases = 100;
  uint64_t seed = 1;
  std::string device;
  double atol = default_atol;
  double rtol = default_rtol;
  std::string config;  ///< FILE or inline JSON: replay one config, or a repro bundle's config.json
  std::string tensors;  ///< a torch.save dict of state_dict keys + "input"
  std::string save_failures;
  std::optional<uint64_t> case_seed;
  std::string inputs;
  std::string params;
  std::string json_out;
  std::string junit_out;
  std::string shard;    ///< "K/N": only case indices i with i % N == K-1 (harness/results/shard.h)
  std::string devices;  ///< "all", "0,1", "cpu,cpu": one shard process per device, merged
  int per_device = 1;   ///< --per-device: shard processes per device of --devices
  std::string case_size;  ///< --case-size: "" the device's own fuzz sizes, else cpu or oracle
  bool strict_fp32 = false;
  bool wide = false;    ///< --wide: the table with every column (the default fits 120 columns)
  std::vector<std::string> plugins;  ///< --plugin: outside implementations (harness/plugin/plugin_loader.h)
  bool isolate = true;               ///< --isolate: plug-in cases in a child process (only with plug-ins)
  int case_timeout = 300;            ///< --case-timeout: an isolated child's time for each verdict [seconds]
  std::string only;                  ///< --only: check this implementation alone (no reference check)
  int from_case = 0;                 ///< --from-case: fuzz case indices below this are skipped (isolation)
  std::string case_stream;           ///< --case-stream: append each verdict to FILE as a JSON line (isolation)
  bool cases_given = false, atol_given = false, rtol_given = false, device_given = false, seed_given = false;
};

/// Runs verify as `opt` says and returns its exit status (harness/process/exit_status.h): exit_ok when every
/// case passed, exit_failure when one failed or nothing was judged, 128 + the signal when a --devices
/// run was interrupted. Throws ref::config_error (an invalid config), json::exception (bad JSON),
/// std::invalid_argument (bad usage, a file that cannot be read or written): the CLI exits 2 on those.
[[nodiscard]] int run(const options& opt);

/// One line for any exception: libtorch's c10::Error carries a C++ stack trace after its message.
[[nodiscard]] std::string one_line(const std::exception& e);

}  // namespace fb::verify

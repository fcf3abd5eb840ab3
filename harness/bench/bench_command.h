#pragma once
/// `fusebench bench`'s run: plan the configs (a sweep or --config), fan them out over --devices or
/// time this shard of them (runner.h), and print the summary. The CLI (harness/cli/bench.cpp) only
/// parses the options into `command_options` and calls run_command().
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fb::bench {

/// The largest --min-samples [count]: min_samples beats the time cap (a median of fewer samples would
/// pass for a stable one), so this bound is what keeps a run's length finite (2^31 samples ran for
/// days); 100000 keeps "a run long enough to interrupt" possible on a tiny config.
inline constexpr std::size_t max_min_samples = 100000;

/// The largest --time-cap [seconds]: a day per case.
inline constexpr double max_time_cap = 86400.0;

/// Options of `fusebench bench`. A new option that changes the plan or the measurement must also be
/// passed on to the shard processes of --devices (shard_arguments).
struct command_options {
  std::vector<std::string> models;     ///< ids; empty: all
  std::string sweep = "quick";         ///< quick or standard
  std::string config;                  ///< FILE or inline JSON of custom configs; replaces the sweep
  std::string device;                  ///< cpu or cuda; empty: the best present
  std::string out = "bench-results";   ///< folder of results.json and gbench.json
  uint64_t seed = 1;                   ///< verification and input sets
  std::optional<double> time_cap;      ///< per case [seconds]; default 2 on cuda, 0.5 on cpu
  std::size_t min_samples = 10;        ///< per case [count]
  bool no_cpu_scale = false;           ///< time the sweep's full-size configs on a CPU too
  std::string shard;                   ///< "K/N": only the plan's configs p with p % N == K-1
  std::string devices;                 ///< "all", "0,1", "cpu,cpu": one shard process per device, merged
  std::vector<std::string> plugins;    ///< --plugin: outside implementations (harness/plugin/plugin_loader.h)
  bool isolate = true;                 ///< --isolate: a plug-in's verification of each config in a child first
  int case_timeout = 300;              ///< --case-timeout: that child's time limit [seconds]
  std::string peers;                   ///< --peers: "torch" adds the torch peers (peers.h); "" or "none": none
  std::string peer_python = "python3"; ///< --peer-python: the Python that has torch
  std::string peer_helper;             ///< --peer-helper: the helper script; empty: peers/torch_peers.py
  double peer_timeout = 900.0;         ///< --peer-timeout: one helper process per case, at most [seconds]
  double peer_budget = 0.0;            ///< --peer-budget: the whole peer stage, at most [seconds]; 0: no limit
};

/// Runs bench as `opt` says; returns its exit status (harness/process/exit_status.h; 128 + the signal when
/// interrupted). Throws ref::config_error, json::exception, std::invalid_argument on bad usage (exit 2).
[[nodiscard]] int run_command(const command_options& opt);

}  // namespace fb::bench

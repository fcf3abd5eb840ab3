#pragma once
/// The versioned results file (schema "fusebench-results"): what `bench` writes and what `report` and
/// `compare` read. Plain structs, torch-free and CUDA-free, so that every tool can use them.
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/model/arithmetic_unit.h"
#include "harness/results/outcome.h"

namespace fb {

/// Name written in the "schema" field of every results file.
inline constexpr std::string_view results_schema_name = "fusebench-results";
/// Version this build writes; bump it when a field changes meaning. Version 2 added the run status
/// (complete, incomplete_reason, planned_cases), the verification tolerances (environment.atol,
/// environment.rtol) and per case decided_by and tolerance_ratio. environment.shard and
/// environment.plan_digest (and environment.source_digest, environment.plugins) came later within version 2: they add meaning,
/// change none, and read as "1/1", "" and [] where absent.
inline constexpr int results_schema_version = 2;
/// Oldest version this build reads. Version 1 files have no run status and are read as complete runs
/// (they were only ever committed from runs that finished), with decided_by and tolerance_ratio unknown.
inline constexpr int oldest_results_schema_version = 1;

/// Where and how a run was measured; compare refuses to mix runs of different GPUs.
struct run_environment {
  std::string device;               ///< "cuda" or "cpu"
  std::string gpu_name;             ///< e.g. "NVIDIA H200"; empty on CPU runs
  std::string cpu_name;             ///< the host CPU's model name (/proc/cpuinfo); empty when unknown or in older files
  int sm_count = 0;                 ///< streaming multiprocessors [count]
  std::int64_t l2_bytes = 0;        ///< L2 cache size [bytes]
  std::string driver;               ///< driver version, e.g. "580.65.06 (CUDA 13.0)"
  std::string cuda_runtime;         ///< CUDA runtime version, e.g. "13.0"
  std::string libtorch;             ///< libtorch version of the references, e.g. "2.11.0"
  std::string git_commit;           ///< commit of the harness that measured (harness/process/build_info.h)
  /// SHA-256 over the sources that were built (cmake/source_digest.cmake); "" in files written before
  /// it was recorded. `history` and `compare` check git_commit against it (harness/process/provenance.h).
  std::string source_digest;
  std::string build_type;           ///< CMAKE_BUILD_TYPE, e.g. "Release"
  std::string date;                 ///< start of the run, ISO-8601 UTC, e.g. "2025-11-22T03:33:00Z"
  std::string hostname;             ///< machine that measured
  double measured_bandwidth = 0.0;  ///< the floor's: max(copy read + written, read only) [bytes/s]
  double measured_fp32_peak = 0.0;  ///< calibrated FMA kernel [FLOP/s]
  /// calibrated fp64 MMA kernel (mma.sync m16n8k16 f64; on the CPU fp64 FMAs); 0 in files written
  /// before it was measured [FLOP/s]
  double measured_fp64_mma_peak = 0.0;
  std::string sweep;                ///< name of the config sweep that was run, e.g. "default" or "batch"
  std::uint64_t seed = 0;           ///< seed of inputs and parameters
  double atol = std::numeric_limits<double>::quiet_NaN();  ///< absolute tolerance of the verification; NaN: unknown
  double rtol = std::numeric_limits<double>::quiet_NaN();  ///< relative tolerance of the verification; NaN: unknown
  /// The part of the plan this file holds, "K/N" (bench --shard; harness/results/shard.h); "1/1": all of it.
  std::string shard = "1/1";
  /// Fingerprint of the whole plan (every config and label, before sharding): the shards of one run
  /// share it, so merge can tell them from parts of other sweeps or configs. "" when not recorded.
  std::string plan_digest;
  /// The plug-ins' implementations the run was asked to judge ("plugin:<name>", sorted; --plugin,
  /// FUSEBENCH_PLUGINS): merge joins only shards with the same set. Empty: none, or a file written
  /// before the set was recorded.
  std::vector<std::string> plugins;
};

/// Whether a run finished. `bench` writes the file after every case with complete = false and sets it
/// true only once every planned case is in, so a run killed at any instant reads as incomplete.
struct run_status {
  bool complete = true;            ///< every planned case finished
  std::string incomplete_reason;   ///< e.g. "interrupted by SIGINT after 10 of 12 cases"; empty when complete
  std::int64_t planned_cases = 0;  ///< cases the run planned [count]; 0 when not recorded (version 1)
};

/// Summary of the timed repetitions of one case.
struct timing_stats {
  double median = 0.0;          ///< [seconds]
  double p10 = 0.0;             ///< 10th percentile [seconds]
  double p90 = 0.0;             ///< 90th percentile [seconds]
  double mean = 0.0;            ///< [seconds]
  double stdev = 0.0;           ///< sample standard deviation [seconds]
  std::int64_t n = 0;           ///< number of timed repetitions [count]
  std::vector<double> samples;  ///< every repetition, kept for rank tests and intervals [seconds]
};

/// Roofline floor of a case: no correct implementation can beat floor_seconds on this device.
struct floor_estimate {
  double bytes = 0.0;             ///< minimal global-memory traffic of the fused algorithm [bytes]
  double flops = 0.0;             ///< minimal arithmetic of the fused algorithm [FLOP]
  double floor_seconds = 0.0;     ///< max(bytes / bandwidth, flops / peak) [seconds]
  std::string flop_unit = arithmetic_unit_name(arithmetic_unit::fp32_fma);  ///< whose peak the flops were divided by
  double percent_of_floor = 0.0;  ///< floor_seconds / median * 100; 100 means at the floor [%]
  bool impossible = false;        ///< median < floor_seconds: the timing or the floor is wrong
};

/// Implementation names of peer rows start with this: "peer:eager", ... (harness/bench/peers.h).
inline constexpr std::string_view peer_implementation_prefix = "peer:";

/// True for "peer:<name>": PyTorch run as a user would, information beside ours, never a fused result.
[[nodiscard]] inline bool is_peer_implementation(std::string_view implementation) {
  return implementation.substr(0, peer_implementation_prefix.size()) == peer_implementation_prefix;
}

/// What only a peer row has (implementation "peer:<name>", harness/bench/peers.h): PyTorch run the way
/// a user would instead of our kernels, timed by the peer helper and judged by the harness.
struct peer_details {
  std::string torch_version;  ///< torch.__version__ of the helper that ran it; "" when it never reported
  /// Share of the output's elements within tolerance under the verdict rule [fraction 0..1]; NaN when
  /// the output was not judged (skipped, error).
  double share_within_tolerance = std::numeric_limits<double>::quiet_NaN();
  std::optional<double> compile_seconds;  ///< first call, torch.compile's compilation included [seconds]
};

/// One (model, config, implementation) measurement.
struct case_result {
  std::string model;                    ///< registry id, e.g. "convt2d_mul_gap"
  int kernelbench_id = 0;               ///< KernelBench level-2 problem number
  nlohmann::json config;                ///< the config, with the KernelBench key names
  std::string config_label;             ///< e.g. "default", "batch x0.5"
  double problem_size = 0.0;            ///< size axis of the charts, e.g. conv-output elements [count]
  std::string implementation;           ///< "ref", "ref_tf32", "fused_cuda", "fused_host", ...
  fb::outcome outcome = fb::outcome::not_run;  ///< verification result
  std::string message;                  ///< why it did not pass; empty when it passed
  double max_abs_error = 0.0;           ///< against the reference; NaN when not computed
  double max_rel_error = 0.0;           ///< against the reference; NaN when not computed. Huge where the
                                        ///< reference is near 0: read tolerance_ratio instead
  /// Largest |got - ref| / (atol + rtol*|ref|) over the output at verification: <= 1 passes, 0.1 means a
  /// tenth of the tolerance used. NaN when not computed (references, version 1 files).
  double tolerance_ratio = std::numeric_limits<double>::quiet_NaN();
  /// Verdict rule that decided a fused case's verification; verdict_rule::none for timing-only rows
  /// (ref, ref_tf32) and cases whose values were never judged; nullopt when not recorded (version 1).
  std::optional<verdict_rule> decided_by;
  std::optional<timing_stats> stats;    ///< absent when the case was not timed
  std::optional<floor_estimate> floor;  ///< absent when the model declares no floor
  /// Peer rows only; written as "peer" (absent in other rows and in files written before peers).
  /// A peer keeps its stats when its values fail: how fast a wrong answer comes is what it is compared by.
  std::optional<peer_details> peer;
};

/// The whole file.
struct results_file {
  std::string schema = std::string(results_schema_name);  ///< always "fusebench-results"
  int version = results_schema_version;                   ///< schema version
  run_environment environment;                            ///< where it was measured
  run_status status;                                      ///< complete, or why not
  std::vector<case_result> cases;                         ///< in the order they finished
};

/// A results file that cannot be used; what() names the file and what is wrong with it.
class results_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Summary statistics of samples [seconds]; keeps the samples. REQUIRES: samples non-empty.
[[nodiscard]] timing_stats summarize_samples(std::vector<double> samples);

/// Floor of a case from its minimal traffic [bytes] and work [FLOP], the device's measured
/// bandwidth [bytes/s] and peak [FLOP/s], and its median time [seconds]. A bandwidth or peak <= 0
/// drops that term (unknown device).
[[nodiscard]] floor_estimate make_floor_estimate(double bytes, double flops, double bandwidth, double peak,
                                                 double median);

/// The file as JSON; non-finite numbers are written as null (JSON has no NaN).
[[nodiscard]] nlohmann::json results_to_json(const results_file& results);

/// Parses and validates a results document. `source` names it in error messages.
/// Throws results_error naming the field path (e.g. `cases[3].stats.median`) on a missing or
/// mistyped field, a wrong schema name or an unsupported version, and on contents no run can produce:
/// stats with null, negative or non-finite times, empty samples, n not matching the samples, the same
/// (model, config_label, implementation) twice, or a complete run holding fewer cases than it planned.
[[nodiscard]] results_file results_from_json(const nlohmann::json& doc, std::string_view source);

/// Reads a results file. Throws results_error for a missing file, corrupt or truncated JSON (with
/// the byte position), a wrong schema or version, and missing or mistyped fields.
[[nodiscard]] results_file load_results(const std::filesystem::path& path);

/// Writes a results file atomically (temporary file, then rename), so readers never see half a file.
void save_results(const results_file& results, const std::filesystem::path& path);

}  // namespace fb

#pragma once
/// Joining the results files of `bench --shard K/N` runs (or of `bench --devices` shard processes)
/// into the file one process running the whole plan would have written. Torch-free.
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/results/shard.h"

namespace fb {

/// One input of a merge: its name in messages (the file) and its contents.
struct named_results {
  std::string name;
  results_file results;
};

/// The results of `parts`, which must be the shards of one bench run making up rules.target:
///  - always refused (merge_error): shards of different splits, overlapping or outside the target,
///    missing (unless rules.allow_missing), of another device kind, plan (plan_digest: the configs,
///    labels, --model; the sweep's name where a file has no digest), seed, tolerances or plug-in set, or
///    incomplete (unless rules.allow_incomplete);
///  - refused unless allowed: another GPU (name, SMs, L2, driver: rules.allow_different_gpu) or
///    another build (git commit, libtorch, CUDA runtime, build type: rules.allow_different_commit);
///    the merged field then joins the distinct values with " + ".
/// The merged file holds every case once, in plan order (each shard's configs interleaved back in
/// the round-robin order they were dealt), planned_cases summed, complete when every shard is and
/// none is missing (else incomplete_reason says which shards are missing or incomplete and why).
/// Its environment is the first shard's with shard = rules.target, the earliest date, the distinct
/// hostnames joined with ",", and the first shard's measured bandwidth and peak (each shard's floors
/// are in its own cases). It equals the unsharded run's file except for what is measured: the
/// timings, the floors' times, bandwidth, peak, date and host.
[[nodiscard]] results_file merge_results(const std::vector<named_results>& parts, const merge_rules& rules);

}  // namespace fb

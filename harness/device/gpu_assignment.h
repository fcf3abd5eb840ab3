#pragma once
/// Which GPU a process uses when one host runs several fusebench processes at once: the
/// CUDA_VISIBLE_DEVICES of a `--devices` shard process, and of a test that ctest's resource
/// allocation gave a GPU (RESOURCE_GROUPS "gpus:1", spec file from scripts/gpu-resources).
/// Header-only and std-only: the torch-free fused_cuda_selftest (scripts/build-probe) includes it.
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fb::gpus {

/// Reads an environment variable; nullptr when unset. A parameter so that tests can feed values.
using env_reader = std::function<const char*(const char*)>;

/// The entries of a CUDA_VISIBLE_DEVICES value ("0,2", "GPU-5c1e...,GPU-9a0b..."); empty for nullptr.
/// An empty value is one that hides every GPU: also empty.
inline std::vector<std::string> split_visible_devices(const char* value) {
  std::vector<std::string> out;
  if (value == nullptr) return out;
  std::string item;
  for (const char* p = value;; ++p) {
    if (*p == ',' || *p == '\0') {
      if (!item.empty()) out.push_back(item);
      item.clear();
      if (*p == '\0') break;
    } else if (*p != ' ') {
      item += *p;
    }
  }
  return out;
}

/// The CUDA_VISIBLE_DEVICES value that shows a child process exactly GPU `index` of this process's
/// view: the index-th entry of the inherited value when one is set (so `--devices 0,1` under
/// CUDA_VISIBLE_DEVICES=2,3 runs on physical GPUs 2 and 3, and UUIDs pass through), else the index
/// itself. "" when index is outside the inherited list.
inline std::string visible_device_for(int index, const char* inherited) {
  if (index < 0) return {};
  if (inherited == nullptr) return std::to_string(index);
  const std::vector<std::string> entries = split_visible_devices(inherited);
  return static_cast<std::size_t>(index) < entries.size() ? entries[static_cast<std::size_t>(index)] : std::string();
}

/// The id ctest allocated to this test from the resource type "gpus": ctest sets
/// CTEST_RESOURCE_GROUP_COUNT, CTEST_RESOURCE_GROUP_<i> (the type names of group i) and
/// CTEST_RESOURCE_GROUP_<i>_GPUS ("id:1,slots:1"). nullopt when ctest allocated no GPU (run without
/// --resource-spec-file, or a test without RESOURCE_GROUPS).
inline std::optional<std::string> ctest_gpu_id(const env_reader& getenv) {
  const char* count_text = getenv("CTEST_RESOURCE_GROUP_COUNT");
  if (count_text == nullptr) return std::nullopt;
  const int groups = std::atoi(count_text);
  for (int i = 0; i < groups; ++i) {
    const std::string var = "CTEST_RESOURCE_GROUP_" + std::to_string(i) + "_GPUS";
    const char* value = getenv(var.c_str());
    if (value == nullptr) continue;
    const std::string v = value;
    const auto start = v.find("id:");
    if (start == std::string::npos) continue;
    const auto end = v.find(',', start);
    return v.substr(start + 3, end == std::string::npos ? std::string::npos : end - start - 3);
  }
  return std::nullopt;
}

/// The CUDA_VISIBLE_DEVICES a test should run with, given the GPU ctest allocated it: the spec's ids
/// are the positions 0..n-1 of this process's GPUs (scripts/gpu-resources writes them so), mapped by
/// visible_device_for. nullopt when ctest allocated none, or the id is not such a position.
inline std::optional<std::string> ctest_visible_devices(const env_reader& getenv) {
  const std::optional<std::string> id = ctest_gpu_id(getenv);
  if (!id || id->empty() || id->find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const std::string visible = visible_device_for(std::atoi(id->c_str()), getenv("CUDA_VISIBLE_DEVICES"));
  if (visible.empty()) return std::nullopt;
  return visible;
}

}  // namespace fb::gpus

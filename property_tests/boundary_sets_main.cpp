// boundary_sets: the fused models' boundary sets (property_tests/selftest/<id>_boundary.h), printed.
//   boundary_sets --configs [--model ID]   one line per problem: model <TAB> name <TAB> fusebench config JSON
//   boundary_sets --coverage               per problem the paths it reaches (H100/H200 limits), then the
//                                          declared paths no problem reaches; exit 1 when a reachable one is missed
//   boundary_sets --declared               the declared paths as fused_cuda_selftest --boundary-only prints them
// Torch-free and CUDA-free (the host executors' plans only).
#include <cstdio>
#include <cstring>
#include <string>

#include "property_tests/selftest/boundary.h"
#include "property_tests/selftest/convt2d_gap_bias_lse_boundary.h"
#include "property_tests/selftest/convt2d_mul_gap_boundary.h"
#include "property_tests/selftest/convt3d_bn_sub_boundary.h"
#include "property_tests/selftest/convt3d_ln_gelu_scale_boundary.h"
#include "property_tests/selftest/convt3d_scale_bn_gap_boundary.h"

int main(int argc, char** argv) {
  using namespace fb::boundary;
  std::string mode, only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--configs" || a == "--coverage" || a == "--declared") mode = a;
    else if (a == "--model" && i + 1 < argc) only = argv[++i];
    else mode = "";
  }
  if (mode.empty()) {
    std::fprintf(stderr, "usage: %s --configs [--model ID] | --coverage | --declared\n", argv[0]);
    return 2;
  }
  int status = 0;
  bool found = only.empty();
  for (const model_set& s : all_sets()) {
    if (!only.empty() && s.model != only) continue;
    found = true;
    if (mode == "--declared") {
      for (const path& p : s.paths)
        std::printf("DECLARED %s %s%s%s\n", s.model.c_str(), p.name.c_str(), p.unreachable.empty() ? "" : " unreachable: ",
                    p.unreachable.c_str());
      continue;
    }
    for (std::size_t i = 0; i < s.problem_names.size(); ++i) {
      if (mode == "--configs")
        std::printf("%s\t%s\t%s\n", s.model.c_str(), s.problem_names[i].c_str(), s.config_json(i).c_str());
      else
        std::printf("%s %s: %s\n", s.model.c_str(), s.problem_names[i].c_str(),
                    join(s.reached(i, device_limits{}), " ").c_str());
    }
    if (mode == "--coverage") {
      const coverage_gaps g = gaps_of(s, device_limits{});
      for (const path& p : s.paths)
        if (!p.unreachable.empty()) std::printf("%s unreachable %s: %s\n", s.model.c_str(), p.name.c_str(), p.unreachable.c_str());
      if (!g.unreached.empty() || !g.undeclared.empty()) {
        std::printf("%s GAPS: unreached [%s] undeclared [%s]\n", s.model.c_str(), join(g.unreached).c_str(),
                    join(g.undeclared).c_str());
        status = 1;
      }
    }
  }
  if (!found) {
    std::fprintf(stderr, "boundary_sets: no boundary set for model %s\n", only.c_str());
    return 2;
  }
  return status;
}

# Reporting and regression tracking: results file, statistics, printers, report/compare, and the
# torch-free bench building blocks. Included from harness/CMakeLists.txt. Nothing here needs libtorch
# or a GPU, so reports and compares build and test on any CI machine.
set(FUSEBENCH_REPORTING_DIR ${CMAKE_CURRENT_LIST_DIR})

# Shards of a run (--shard K/N, --devices) and the rules of merging them: shared by the verify
# reports (fusebench_core) and the results files (below), torch-free.
add_library(fusebench_shard STATIC ${FUSEBENCH_REPORTING_DIR}/results/shard.cpp)
target_include_directories(fusebench_shard PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(fusebench_shard PUBLIC fmt::fmt-header-only)
target_compile_features(fusebench_shard PUBLIC cxx_std_17)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(fusebench_shard PRIVATE -Wall -Wextra -Wpedantic)
endif()

# Provenance (harness/process/provenance.h): the build's source digest, computed at every build by
# cmake/source_digest.cmake into a header (rewritten only when the digest changes, so an unchanged
# tree rebuilds nothing), and the digests of a repository's commits, computed with the same rule.
set(FUSEBENCH_SOURCE_DIGEST_HEADER ${PROJECT_BINARY_DIR}/generated/fusebench_source_digest.h)
add_custom_target(fusebench_source_digest
  COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -DOUT=${FUSEBENCH_SOURCE_DIGEST_HEADER}
          -P ${PROJECT_SOURCE_DIR}/cmake/source_digest.cmake
  BYPRODUCTS ${FUSEBENCH_SOURCE_DIGEST_HEADER}
  COMMENT "Source digest (cmake/source_digest.cmake)"
  VERBATIM)
add_library(fusebench_provenance STATIC ${FUSEBENCH_REPORTING_DIR}/process/provenance.cpp)
add_dependencies(fusebench_provenance fusebench_source_digest)
target_include_directories(fusebench_provenance PUBLIC ${PROJECT_SOURCE_DIR} PRIVATE ${PROJECT_BINARY_DIR}/generated)
target_link_libraries(fusebench_provenance PUBLIC fmt::fmt-header-only)
target_compile_features(fusebench_provenance PUBLIC cxx_std_17)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(fusebench_provenance PRIVATE -Wall -Wextra -Wpedantic)
endif()

add_library(fusebench_reporting STATIC
  ${FUSEBENCH_REPORTING_DIR}/results/results.cpp
  ${FUSEBENCH_REPORTING_DIR}/results/results_writer.cpp
  ${FUSEBENCH_REPORTING_DIR}/results/results_merge.cpp
  ${FUSEBENCH_REPORTING_DIR}/results/gbench_json.cpp
  ${FUSEBENCH_REPORTING_DIR}/results/detail/atomic_file.cpp
  ${FUSEBENCH_REPORTING_DIR}/stats/summary.cpp
  ${FUSEBENCH_REPORTING_DIR}/stats/mann_whitney.cpp
  ${FUSEBENCH_REPORTING_DIR}/stats/ratio_interval.cpp
  ${FUSEBENCH_REPORTING_DIR}/stats/change_points.cpp
  ${FUSEBENCH_REPORTING_DIR}/history/history_model.cpp
  ${FUSEBENCH_REPORTING_DIR}/history/history_page.cpp
  ${FUSEBENCH_REPORTING_DIR}/history/history_tables.cpp
  ${FUSEBENCH_REPORTING_DIR}/format/number_format.cpp
  ${FUSEBENCH_REPORTING_DIR}/printers/markdown_printer.cpp
  ${FUSEBENCH_REPORTING_DIR}/printers/csv_printer.cpp
  ${FUSEBENCH_REPORTING_DIR}/printers/chart_printer.cpp
  ${FUSEBENCH_REPORTING_DIR}/printers/printer_multiplex.cpp
  ${FUSEBENCH_REPORTING_DIR}/report/report_model.cpp
  ${FUSEBENCH_REPORTING_DIR}/report/compare.cpp
  ${FUSEBENCH_REPORTING_DIR}/bench/bench_state.cpp
  ${FUSEBENCH_REPORTING_DIR}/process/interrupt.cpp
  ${FUSEBENCH_REPORTING_DIR}/bench/repetition_policy.cpp
  ${FUSEBENCH_REPORTING_DIR}/bench/progress.cpp
  ${FUSEBENCH_REPORTING_DIR}/bench/host_timing.cpp)
# Repo root, so that sources include "harness/results/results.h".
target_include_directories(fusebench_reporting PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(fusebench_reporting PUBLIC fusebench_shard fusebench_provenance nlohmann_json::nlohmann_json fmt::fmt-header-only CLI11::CLI11)
target_compile_features(fusebench_reporting PUBLIC cxx_std_17)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(fusebench_reporting PRIVATE -Wall -Wextra -Wpedantic)
endif()

# The `report`, `compare` and `history` subcommands, linked into the fusebench executable by main.cpp,
# and the output-path checks every subcommand shares.
add_library(fusebench_reporting_cli STATIC
  ${FUSEBENCH_REPORTING_DIR}/cli/report.cpp
  ${FUSEBENCH_REPORTING_DIR}/cli/compare.cpp
  ${FUSEBENCH_REPORTING_DIR}/cli/history.cpp
  ${FUSEBENCH_REPORTING_DIR}/cli/output_paths.cpp)
target_link_libraries(fusebench_reporting_cli PUBLIC fusebench_reporting)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(fusebench_reporting_cli PRIVATE -Wall -Wextra -Wpedantic)
endif()

# CUDA timing blocks (events, L2 flush, bandwidth and FMA-peak calibration), wherever nvcc exists.
if(FUSEBENCH_HAVE_CUDA)
  add_library(fusebench_bench_device STATIC ${FUSEBENCH_REPORTING_DIR}/bench/device_timing.cu)
  set_target_properties(fusebench_bench_device PROPERTIES CUDA_ARCHITECTURES 90)
  target_include_directories(fusebench_bench_device PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(fusebench_bench_device PUBLIC CUDA::cudart)
endif()

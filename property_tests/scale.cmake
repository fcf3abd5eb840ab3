# Scale-out: shards (--shard K/N), --devices, `fusebench merge`, and ctest's GPU resource allocation.
# Included from property_tests/CMakeLists.txt; everything here runs on the CPU.
include(GoogleTest)

# The split, the GPU a process gets, and the merges of bench results and verify reports.
# verify_accounting_test.cpp: the counts of cases not judged in the table, --json, JUnit and the exit status.
add_executable(merge_test ${CMAKE_CURRENT_LIST_DIR}/merge_test.cpp ${CMAKE_CURRENT_LIST_DIR}/verify_accounting_test.cpp)
target_link_libraries(merge_test PRIVATE fusebench_bench fusebench_fan_out GTest::gtest GTest::gtest_main)
gtest_discover_tests(merge_test DISCOVERY_TIMEOUT 60)

# The CLI end to end (property_tests/cli_scale_test.sh): verify shards cover the unsharded run's cases
# exactly once for several N (N > cases too); merge of verify and bench shards equals the unsharded
# file but for timings; bad merges exit 2 with one line; --devices cpu,cpu fans out and merges.
add_test(NAME cli_scale_end_to_end
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_scale_test.sh $<TARGET_FILE:fusebench> ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_scale_end_to_end PROPERTIES TIMEOUT 900)

# ctest's resource allocation: the GPU tests carry RESOURCE_GROUPS gpus:1, no other test does, and a
# spec from scripts/gpu-resources spreads such tests over the GPUs one per GPU (a scratch project).
add_test(NAME ctest_gpu_resources
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ctest_resources_test.sh ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                 $<TARGET_FILE:model_property_tests>)
set_tests_properties(ctest_gpu_resources PROPERTIES TIMEOUT 120)

# The gate is a shell script run on a host no CI machine is: at least it must parse.
add_test(NAME gpu_gate_parses COMMAND bash -n ${PROJECT_SOURCE_DIR}/scripts/gpu-gate)

# std::filesystem calls bound to libstdc++, never to libtorch's exported copies (reference/CMakeLists.txt):
# fusebench, which creates, replaces and removes files.
add_test(NAME filesystem_not_bound_to_libtorch
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/filesystem_binding_test.sh $<TARGET_FILE:fusebench>)

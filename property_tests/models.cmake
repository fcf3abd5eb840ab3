# Model property tests (libtorch + RapidCheck). Included from property_tests/CMakeLists.txt.
include(GoogleTest)


# The standard properties run for every registered model (model_properties.cpp instantiates them over
# the registry); a model's own tests, if any, are property_tests/models/*.cpp, picked up by this glob.
file(GLOB FUSEBENCH_MODEL_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/models/*.cpp)
# model_properties.cpp is compiled into the executable (not a library): its TEST_P registrations must
# not be dropped by the linker. rapidcheck's gtest integration is header-only (rapidcheck/gtest.h).
add_executable(model_property_tests ${CMAKE_CURRENT_LIST_DIR}/model_properties.cpp ${FUSEBENCH_MODEL_TESTS}
               ${CMAKE_CURRENT_LIST_DIR}/equivalence_doubles_test.cpp ${CMAKE_CURRENT_LIST_DIR}/generators_test.cpp
               ${CMAKE_CURRENT_LIST_DIR}/ctest_gpu_allocation.cpp)
target_link_libraries(model_property_tests PRIVATE fusebench_core GTest::gtest GTest::gtest_main)
# generators_test.cpp checks the README's fuzz-domain table against the declared domains.
target_compile_definitions(model_property_tests PRIVATE FUSEBENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# 200 RapidCheck cases per property (SPEC: at least 200 reference-vs-oracle cases per model).
# FUSEBENCH_RC_CASES overrides it (scripts/gpu-gate raises it for the CUDA properties).
set(FUSEBENCH_RC_CASES 200 CACHE STRING "RapidCheck cases per property")
# The GPU properties (names containing Cuda_) each take one GPU from ctest's resource allocation:
# `ctest --resource-spec-file gpus.json -j <GPUs>` (scripts/gpu-resources writes the file) runs them
# spread over the host's GPUs, never two on one (ctest_gpu_allocation.cpp turns the allocation into
# CUDA_VISIBLE_DEVICES). Without a spec file RESOURCE_GROUPS is ignored and nothing changes.
gtest_discover_tests(model_property_tests
  TEST_FILTER "-*Cuda_*"
  DISCOVERY_TIMEOUT 120
  PROPERTIES ENVIRONMENT "RC_PARAMS=max_success=${FUSEBENCH_RC_CASES} seed=20261122" TIMEOUT 1200)
gtest_discover_tests(model_property_tests
  TEST_FILTER "*Cuda_*"
  DISCOVERY_TIMEOUT 120
  PROPERTIES ENVIRONMENT "RC_PARAMS=max_success=${FUSEBENCH_RC_CASES} seed=20261122" TIMEOUT 1200
             RESOURCE_GROUPS "gpus:1")

# The CLI end to end: list, verify exit codes, invalid config -> exit 2 with the field named.
add_test(NAME cli_end_to_end COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_test.sh $<TARGET_FILE:fusebench>)

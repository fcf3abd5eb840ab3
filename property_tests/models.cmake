# Model property tests (libtorch + RapidCheck). Included from property_tests/CMakeLists.txt.
include(GoogleTest)

# rapidcheck's gtest integration is header-only (rapidcheck/gtest.h).
add_library(fusebench_model_properties STATIC ${CMAKE_CURRENT_LIST_DIR}/model_properties.cpp)
target_link_libraries(fusebench_model_properties PUBLIC fusebench_core GTest::gtest)

file(GLOB FUSEBENCH_MODEL_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/convt*_test.cpp)
add_executable(model_property_tests ${FUSEBENCH_MODEL_TESTS} ${CMAKE_CURRENT_LIST_DIR}/equivalence_doubles_test.cpp
               ${CMAKE_CURRENT_LIST_DIR}/generators_test.cpp)
target_link_libraries(model_property_tests PRIVATE fusebench_model_properties GTest::gtest_main)
# 200 RapidCheck cases per property (SPEC: at least 200 reference-vs-oracle cases per model).
# Ill-conditioned cases are discarded (verify_plan.h), up to 100 per success for #34.
# FUSEBENCH_RC_CASES overrides it (scripts/gpu-gate raises it for the CUDA properties).
set(FUSEBENCH_RC_CASES 200 CACHE STRING "RapidCheck cases per property")
gtest_discover_tests(model_property_tests
  DISCOVERY_TIMEOUT 120
  PROPERTIES ENVIRONMENT "RC_PARAMS=max_success=${FUSEBENCH_RC_CASES} max_discard_ratio=100 seed=20261122" TIMEOUT 1200)

# The CLI end to end: list, verify exit codes, invalid config -> exit 2 with the field named.
add_test(NAME cli_end_to_end COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_test.sh $<TARGET_FILE:fusebench>)

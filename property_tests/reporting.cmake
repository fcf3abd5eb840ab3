# Tests of the reporting half (results IO, statistics, report, compare). Included from
# property_tests/CMakeLists.txt; torch-free and GPU-free, so they run on every CI machine.
include(GoogleTest)

add_executable(reporting_test
  ${CMAKE_CURRENT_LIST_DIR}/report_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compare_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/results_io_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stats_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/history_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/provenance_test.cpp)
target_link_libraries(reporting_test PRIVATE fusebench_reporting_cli fusebench_reporting GTest::gtest GTest::gtest_main)
# The fixtures are read in place; FUSEBENCH_UPDATE_GOLDEN=1 rewrites the golden there.
target_compile_definitions(reporting_test PRIVATE FUSEBENCH_FIXTURE_DIR="${CMAKE_CURRENT_LIST_DIR}/fixtures"
                                                  FUSEBENCH_REPORTS_DIR="${PROJECT_SOURCE_DIR}/reports"
                                                  FUSEBENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                                  FUSEBENCH_CMAKE_COMMAND="${CMAKE_COMMAND}")
gtest_discover_tests(reporting_test DISCOVERY_MODE PRE_TEST)

# `fusebench history` end to end on the repository's own results (property_tests/cli_history_test.sh):
# the page parses as XML with one chart per (GPU, model) and every series; bad or mixed input exits 2.
add_test(NAME cli_history_end_to_end
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_history_test.sh $<TARGET_FILE:fusebench> ${PROJECT_SOURCE_DIR})

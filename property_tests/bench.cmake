# Tests of `fusebench bench` on the CPU (no GPU needed). Included from property_tests/CMakeLists.txt.
include(GoogleTest)

# The bench flow end to end on one tiny config: verify, time, floor, results and gbench files, and a
# planted failing fused implementation recorded as incorrect and never timed.
add_executable(bench_test ${CMAKE_CURRENT_LIST_DIR}/bench_test.cpp)
target_link_libraries(bench_test PRIVATE fusebench_bench GTest::gtest GTest::gtest_main)
gtest_discover_tests(bench_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)

# Bad usage exits 2 with one line; --help ends with examples.
add_test(NAME bench_cli_usage COMMAND bash -c [[
fb="$1"
"$fb" bench --sweep huge >/dev/null 2>&1; test $? -eq 2 || { echo "--sweep huge: not exit 2"; exit 1; }
"$fb" bench --device cpu --min-samples 0 >/dev/null 2>&1; test $? -eq 2 || { echo "--min-samples 0: not exit 2"; exit 1; }
"$fb" bench --device cpu --time-cap 0 >/dev/null 2>&1; test $? -eq 2 || { echo "--time-cap 0: not exit 2"; exit 1; }
"$fb" bench --device cpu --model nope >/dev/null 2>&1; test $? -eq 2 || { echo "--model nope: not exit 2"; exit 1; }
"$fb" bench --device cpu --config /nonexistent.json >/dev/null 2>&1; test $? -eq 2 || { echo "--config missing: not exit 2"; exit 1; }
"$fb" bench --device cpu --config '{"model": ' >/dev/null 2>&1; test $? -eq 2 || { echo "--config bad inline JSON: not exit 2"; exit 1; }
test "$("$fb" bench --device cpu --model nope 2>&1 | wc -l)" -eq 1 || { echo "error is not one line"; exit 1; }
"$fb" bench --help | tail -n 12 | grep -q "fusebench bench" || { echo "--help does not end with examples"; exit 1; }
]] bench_cli_usage $<TARGET_FILE:fusebench>)

# The CLI end to end (property_tests/cli_bench_test.sh): a misspelt subcommand, --version, inline
# --config and --model 44, a config too big for memory, SIGINT during a run (exit 130, file marked
# incomplete, report's banner, compare's refusal) and a CPU quick run whose report has its defaults.
add_test(NAME cli_bench_end_to_end
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_bench_test.sh $<TARGET_FILE:fusebench> ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_bench_end_to_end PROPERTIES TIMEOUT 600)

# Hostile inputs across the subcommands (property_tests/cli_hostile.sh, issue 25): bad numbers, seeds,
# clashing output paths and bad output folders exit 2 with one line and leave the given files alone; a
# rerun keeps the earlier complete results.json until it is complete itself.
add_test(NAME cli_hostile_inputs COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_hostile.sh $<TARGET_FILE:fusebench>)
set_tests_properties(cli_hostile_inputs PROPERTIES TIMEOUT 600)

# Issue 25, findings 5, 8, 9, 10 (property_tests/cli_results_test.sh): verify keeps its work on SIGINT and
# SIGTERM, duplicate models run once, non-finite expectations are not judged, the readable table, bench's
# speedup lines, 9-digit failure values, progress in a CI log, '-' for stdout, seeds as decimal strings.
add_test(NAME cli_results_kept_and_readable
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_results_test.sh $<TARGET_FILE:fusebench>)
set_tests_properties(cli_results_kept_and_readable PROPERTIES TIMEOUT 600)

# The test-only sixth model (property_tests/sixth_model/): new files plus its registry lines, in test
# executables only, so `fusebench list` does not show it. Included from property_tests/CMakeLists.txt.
set(FUSEBENCH_SIXTH_MODEL_SOURCES ${CMAKE_CURRENT_LIST_DIR}/sixth_model/model.cpp
                                  ${CMAKE_CURRENT_LIST_DIR}/sixth_model/reference.cpp)

# The fusebench CLI itself, built again from the fusebench target's own sources and libraries, with the
# model's files linked in: `list` and `verify` meet it through the same path as the five.
get_target_property(FUSEBENCH_CLI_SOURCES fusebench SOURCES)
get_target_property(FUSEBENCH_CLI_SOURCE_DIR fusebench SOURCE_DIR)
get_target_property(FUSEBENCH_CLI_LIBRARIES fusebench LINK_LIBRARIES)
list(TRANSFORM FUSEBENCH_CLI_SOURCES PREPEND ${FUSEBENCH_CLI_SOURCE_DIR}/)
add_executable(fusebench_sixth_model ${FUSEBENCH_CLI_SOURCES} ${FUSEBENCH_SIXTH_MODEL_SOURCES})
target_link_libraries(fusebench_sixth_model PRIVATE ${FUSEBENCH_CLI_LIBRARIES})
set_target_properties(fusebench_sixth_model PROPERTIES ENABLE_EXPORTS ON)
add_test(NAME sixth_model_end_to_end
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/sixth_model/sixth_model_test.sh
                 $<TARGET_FILE:fusebench_sixth_model> $<TARGET_FILE:fusebench>)
set_tests_properties(sixth_model_end_to_end PROPERTIES TIMEOUT 600)

# The registry's order and checks, and the README fuzz-table check, with the model registered.
add_executable(sixth_model_registry_test ${CMAKE_CURRENT_LIST_DIR}/sixth_model/registry_test.cpp
                                         ${FUSEBENCH_SIXTH_MODEL_SOURCES})
target_link_libraries(sixth_model_registry_test PRIVATE fusebench_core GTest::gtest GTest::gtest_main)
target_compile_definitions(sixth_model_registry_test PRIVATE FUSEBENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")  # README.md
gtest_discover_tests(sixth_model_registry_test DISCOVERY_TIMEOUT 120)

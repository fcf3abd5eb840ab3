# Outside implementations (issue 26): the example plug-ins of examples/plugins/ through --plugin on the
# CPU, one test per part so that ctest -j runs them side by side; and the CMake package, by building
# examples/plugins/template/ with find_package(fusebench) from this build tree. Included from
# property_tests/CMakeLists.txt.
foreach(part load verify isolate bench)
  # The folder as --plugin-dir=: scripts/mutants reads an argument that starts with the build folder as
  # a target to build.
  add_test(NAME plugins_${part} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/plugins_test.sh $<TARGET_FILE:fusebench>
                                        --plugin-dir=${PROJECT_BINARY_DIR}/plugins ${part})
  set_tests_properties(plugins_${part} PROPERTIES TIMEOUT 600)
endforeach()
add_test(NAME plugins_cmake_package COMMAND bash -c [[
set -eu
fb="$1" build_dir="${2#--build-dir=}" template="$3"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp -r "$template" "$tmp/my_kernel"
cd "$tmp/my_kernel"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -Dfusebench_DIR="$build_dir" >/dev/null
cmake --build build >/dev/null
"$fb" verify --device cpu --model 44 --cases 8 --plugin build/libmy_kernel.so --only plugin:my_kernel
]] _ $<TARGET_FILE:fusebench> --build-dir=${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}/examples/plugins/template)
set_tests_properties(plugins_cmake_package PROPERTIES TIMEOUT 600)

# Hostile plug-ins (issue 40): one test source (hostile_plugin.cpp), one behaviour per library, built
# into <build>/hostile_plugins/ and run by plugins_hostile_test.sh, one test per part.
set(FUSEBENCH_HOSTILE_PLUGIN_DIR ${PROJECT_BINARY_DIR}/hostile_plugins)
# hostile_plugin(NAME DEFINES...): lib<NAME>.so, registered as plugin:<NAME>.
function(hostile_plugin name)
  add_library(hostile_plugin_${name} MODULE ${CMAKE_CURRENT_LIST_DIR}/hostile_plugin.cpp)
  target_link_libraries(hostile_plugin_${name} PRIVATE fusebench::plugin)
  target_include_directories(hostile_plugin_${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(hostile_plugin_${name} PRIVATE HOSTILE_NAME="${name}" ${ARGN})
  set_target_properties(hostile_plugin_${name} PROPERTIES OUTPUT_NAME ${name}
                        LIBRARY_OUTPUT_DIRECTORY ${FUSEBENCH_HOSTILE_PLUGIN_DIR} CXX_VISIBILITY_PRESET hidden)
  add_dependencies(hostile_plugins hostile_plugin_${name})
endfunction()
add_custom_target(hostile_plugins ALL)
hostile_plugin(hostile_exit0 HOSTILE_EXIT=0)
hostile_plugin(hostile_exit1 HOSTILE_EXIT=1)
hostile_plugin(hostile_exit3 HOSTILE_EXIT=3)
hostile_plugin(hostile_hang HOSTILE_HANG)
hostile_plugin(hostile_crash_always HOSTILE_CRASH_ALWAYS)
hostile_plugin(hostile_cuda_only HOSTILE_CUDA_ONLY)
hostile_plugin(hostile_init_throws HOSTILE_INIT_THROWS)
hostile_plugin(hostile_init_sigint HOSTILE_INIT_SIGINT)
hostile_plugin(hostile_sigint2 HOSTILE_SIGINTS=2)
hostile_plugin(hostile_sigint3 HOSTILE_SIGINTS=3)
foreach(part exits hang last_case cuda_only init merge quoting interrupts)
  add_test(NAME plugins_hostile_${part}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/plugins_hostile_test.sh $<TARGET_FILE:fusebench>
                   --plugin-dir=${FUSEBENCH_HOSTILE_PLUGIN_DIR} --examples=${PROJECT_BINARY_DIR}/plugins ${part})
  set_tests_properties(plugins_hostile_${part} PROPERTIES TIMEOUT 600)
endforeach()

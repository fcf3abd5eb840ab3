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

# Tests of fused/ (torch-free). Included from property_tests/CMakeLists.txt.
include(GoogleTest)

# Index map, border sums and the host executors against brute force (RapidCheck + GoogleTest),
# torch-free. fused_math_test.cpp holds the shared pieces; each fused model may add its own
# fused_<id>_test.cpp, picked up by this glob.
file(GLOB FUSEBENCH_FUSED_MATH_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/fused_*test.cpp)
add_executable(fused_math_test ${FUSEBENCH_FUSED_MATH_TESTS})
target_link_libraries(fused_math_test PRIVATE fusebench_fused_host GTest::gtest_main rapidcheck_gtest)
gtest_discover_tests(fused_math_test DISCOVERY_TIMEOUT 60)

# The block executor's contract and the traits that check it and the tiles' epilogue policies
# (fused/exec/block_program.cuh). Headers only, in an executable of its own: a mutant of the
# executor rebuilds this one file, not every host executor.
add_executable(block_executor_test ${CMAKE_CURRENT_LIST_DIR}/block_executor_test.cpp)
target_include_directories(block_executor_test PRIVATE ${PROJECT_SOURCE_DIR})
target_compile_features(block_executor_test PRIVATE cxx_std_17)
target_link_libraries(block_executor_test PRIVATE GTest::gtest_main)
gtest_discover_tests(block_executor_test DISCOVERY_TIMEOUT 60)

# run_cuda vs run_host on random configs; prints "SKIPPED: no CUDA device" and exits 0 without a GPU.
if(FUSEBENCH_HAVE_CUDA)
  # One file per fused model under selftest/ (FB_SELFTEST_MODEL registers it): a new model's file is
  # picked up here without an edit.
  file(GLOB FUSEBENCH_SELFTEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/selftest/*.cpp)
  add_executable(fused_cuda_selftest ${FUSEBENCH_SELFTEST_SOURCES} ${CMAKE_CURRENT_LIST_DIR}/timing_probes.cu
                 ${CMAKE_CURRENT_LIST_DIR}/sm_hog.cu ${CMAKE_CURRENT_LIST_DIR}/ctest_gpu_allocation.cpp)
  set_target_properties(fused_cuda_selftest PROPERTIES CUDA_ARCHITECTURES 90)
  target_link_libraries(fused_cuda_selftest PRIVATE fusebench_fused_cuda fusebench_bench_device)
  # One CUDA runtime per process: the shared one (as libtorch uses), not cudart_static as well.
  set_target_properties(fused_cuda_selftest PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
  add_test(NAME fused_cuda_selftest COMMAND fused_cuda_selftest)
  # One GPU of ctest's resource allocation, as the Cuda_ properties (models.cmake).
  set_tests_properties(fused_cuda_selftest PROPERTIES LABELS "cuda" TIMEOUT 900 RESOURCE_GROUPS "gpus:1")
endif()

# The DMMA convolution probe of issue 11 (probes/tc_precision/dmma_conv_bench.cu, built for the GPU
# host by its own script): its staging and operand offsets, emulated on the host with the fragment
# layout the kernel assumes, against the convolution's definition. No GPU needed.
if(FUSEBENCH_HAVE_CUDA)
  add_executable(dmma_conv_bench ${PROJECT_SOURCE_DIR}/probes/tc_precision/dmma_conv_bench.cu)
  set_target_properties(dmma_conv_bench PROPERTIES CUDA_ARCHITECTURES 90)
  target_include_directories(dmma_conv_bench PRIVATE ${PROJECT_SOURCE_DIR})
  add_test(NAME dmma_conv_probe_host_check COMMAND dmma_conv_bench --host-check)
endif()

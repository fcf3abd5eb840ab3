# The GPU gate's boundary sets and liveness controls, and their CPU halves (scripts/gpu-gate runs
# the GPU halves: property_tests/selftest/boundary.h, property_tests/liveness/controls.cu).
# Included from property_tests/CMakeLists.txt.

# boundary_sets: every fused model's boundary set as fusebench configs (torch-free, CUDA-free).
# Its sets: generated/built_in_boundary_sets.h (fused.cmake, from the registry's list).
add_executable(boundary_sets ${CMAKE_CURRENT_LIST_DIR}/boundary_sets_main.cpp)
target_link_libraries(boundary_sets PRIVATE fusebench_fused_host)
target_include_directories(boundary_sets PRIVATE ${FUSEBENCH_GENERATED_DIR})

# Each model's boundary set through its host executor against the libtorch reference (fusebench
# verify --device cpu, one case per problem): the host half of what the sanitizer and stress stages
# run on the GPU. One test per built-in model with kernels (fused.cmake), so ctest -j spreads them.
foreach(model IN LISTS FUSEBENCH_MODELS_WITH_KERNELS)
  add_test(NAME boundary_set_host_${model}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/boundary_sets_host_test.sh $<TARGET_FILE:boundary_sets>
                   $<TARGET_FILE:fusebench> ${model})
  set_tests_properties(boundary_set_host_${model} PROPERTIES TIMEOUT 600)
endforeach()

if(FUSEBENCH_HAVE_CUDA)
  # The liveness controls: planted defects and their fixed twins, in this test binary only.
  add_executable(liveness_controls ${CMAKE_CURRENT_LIST_DIR}/liveness/controls.cu ${CMAKE_CURRENT_LIST_DIR}/sm_hog.cu)
  set_target_properties(liveness_controls PROPERTIES CUDA_ARCHITECTURES 90 CUDA_RUNTIME_LIBRARY Shared)
  target_include_directories(liveness_controls PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_features(liveness_controls PRIVATE cxx_std_17)
  add_test(NAME liveness_controls_run COMMAND liveness_controls --control fence --runs 3)
  set_tests_properties(liveness_controls_run PROPERTIES LABELS "cuda")  # a few milliseconds of GPU time: no allocation

  # The compiled code carries the planted defects (and the fixed twins do not), and every fused
  # kernel that arrives on a counter fences before it: PTX here (CI has no cuobjdump for CUDA 13),
  # SASS on the GPU host (scripts/gpu-gate). Only the fused sources with atomics are compiled again.
  set(FUSEBENCH_PTX_FLAGS -arch=sm_90 -std=c++17 -I${PROJECT_SOURCE_DIR} -ptx)
  set(controls_ptx ${CMAKE_CURRENT_BINARY_DIR}/liveness_controls.ptx)
  add_custom_command(OUTPUT ${controls_ptx}
                     COMMAND ${CMAKE_CUDA_COMPILER} ${FUSEBENCH_PTX_FLAGS} -o ${controls_ptx}
                             ${CMAKE_CURRENT_LIST_DIR}/liveness/controls.cu
                     DEPENDS ${CMAKE_CURRENT_LIST_DIR}/liveness/controls.cu VERBATIM)
  set(fused_ptx)
  # A source's text with the project headers it includes, transitively (an atomic in a shared
  # header, as conv_persistent's tile counter, counts for every kernel source that includes it).
  function(fusebench_text_with_includes file out files)
    set(seen ${file})
    set(todo ${file})
    set(all "")
    while(todo)
      list(POP_FRONT todo f)
      file(READ ${f} t)
      string(APPEND all "${t}")
      string(REGEX MATCHALL "#include \"fused/[^\"]+\"" incs "${t}")
      foreach(inc ${incs})
        string(REGEX REPLACE "#include \"(fused/[^\"]+)\"" "${PROJECT_SOURCE_DIR}/\\1" h "${inc}")
        if(EXISTS ${h} AND NOT h IN_LIST seen)
          list(APPEND seen ${h})
          list(APPEND todo ${h})
        endif()
      endforeach()
    endwhile()
    set(${out} "${all}" PARENT_SCOPE)
    set(${files} ${seen} PARENT_SCOPE)
  endfunction()
  file(GLOB_RECURSE FUSEBENCH_FUSED_CU CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/fused/*.cu)
  foreach(cu ${FUSEBENCH_FUSED_CU})
    fusebench_text_with_includes(${cu} text sources)
    if(text MATCHES "atomic(Add|Sub|Inc|Dec|CAS|Exch|Max|Min|And|Or|Xor)|atomic_ref|atom\\.")
      # Named by the path under fused/ (file names repeat across model folders).
      file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR}/fused ${cu})
      string(REGEX REPLACE "\\.cu$" "" rel ${rel})
      string(REPLACE "/" "_" stem ${rel})
      set(ptx ${CMAKE_CURRENT_BINARY_DIR}/fused_${stem}.ptx)
      add_custom_command(OUTPUT ${ptx} COMMAND ${CMAKE_CUDA_COMPILER} ${FUSEBENCH_PTX_FLAGS} -o ${ptx} ${cu}
                         DEPENDS ${sources} VERBATIM)
      list(APPEND fused_ptx ${ptx})
    endif()
  endforeach()
  add_custom_target(gate_code_checks ALL DEPENDS ${controls_ptx} ${fused_ptx})
  add_test(NAME liveness_controls_carry_their_defects
           COMMAND python3 ${PROJECT_SOURCE_DIR}/scripts/sass-lint controls ${controls_ptx})
  add_test(NAME fused_kernels_fence_before_arrival
           COMMAND bash -c "cat \"$@\" | python3 ${PROJECT_SOURCE_DIR}/scripts/sass-lint fences -" _ ${fused_ptx})
  # The lint itself is live: the fence control's defective kernel fails it.
  add_test(NAME fence_lint_catches_the_control
           COMMAND python3 ${PROJECT_SOURCE_DIR}/scripts/sass-lint fences --match fence_kernel ${controls_ptx})
  set_tests_properties(fence_lint_catches_the_control PROPERTIES WILL_FAIL TRUE)
  # #44's kernel and #34's persistent kernel keep nothing in local memory: #44's stream evicts every
  # cached line, so a reloaded spill cost a round trip to DRAM per step
  # (fused/convt2d_mul_gap/convt2d_mul_gap.cu). ptxas allocates the registers of the PTX the fence
  # lint reads, as the CUDA build does.
  get_filename_component(cuda_bin ${CMAKE_CUDA_COMPILER} DIRECTORY)
  add_test(NAME fused_kernels_keep_no_local_memory
           COMMAND bash -c "for ptx in \"\${@:3}\"; do \"$1\" -arch=sm_90 -v \"$ptx\" -o /dev/null 2>&1 || exit 2; done | python3 \"$2\" locals --match mul_gap_kernel,persistent_kernel -"
                   _ ${cuda_bin}/ptxas ${PROJECT_SOURCE_DIR}/scripts/sass-lint
                   ${CMAKE_CURRENT_BINARY_DIR}/fused_convt2d_mul_gap_convt2d_mul_gap.ptx
                   ${CMAKE_CURRENT_BINARY_DIR}/fused_convt3d_ln_gelu_scale_convt3d_ln_gelu_scale.ptx)
  # Its work-counter exemption needs a listed kernel's whole name.
  add_test(NAME sass_lint_work_counters_are_scoped
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/sass_lint_work_counters_test.sh)
endif()

# A verify shard stopped by its box keeps its finished cases (what the gate's verify stage needs).
add_test(NAME verify_stop_keeps_finished_cases
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/verify_stop_test.sh $<TARGET_FILE:fusebench>)
set_tests_properties(verify_stop_keeps_finished_cases PROPERTIES TIMEOUT 120)

# The gate's sanitizer, stress and liveness judgements, with stand-in tools on the CPU.
add_test(NAME gpu_gate_dry_run
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/gpu_gate_dry_run_test.sh $<TARGET_FILE:boundary_sets>)
set_tests_properties(gpu_gate_dry_run PROPERTIES TIMEOUT 300)

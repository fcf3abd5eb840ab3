# Issue 38, the peer column (`bench --peers torch`, harness/bench/peers.h, peers/torch_peers.py), on the
# CPU. Included from property_tests/CMakeLists.txt.

# A Python that imports torch: Debian's python3-torch (scripts/setup installs it) is /usr/bin/python3's;
# a python3 earlier on PATH (pyenv) may have none. Found once, at configure time.
set(FUSEBENCH_PEER_TEST_PYTHON "" CACHE STRING "A Python with torch for the peer tests; empty: found at configure time")
if(NOT FUSEBENCH_PEER_TEST_PYTHON)
  find_program(_fb_path_python3 python3)
  foreach(candidate /usr/bin/python3 ${_fb_path_python3})
    if(candidate AND EXISTS ${candidate})
      execute_process(COMMAND ${candidate} -c "import torch" RESULT_VARIABLE _fb_no_torch OUTPUT_QUIET ERROR_QUIET)
      if(_fb_no_torch EQUAL 0)
        set(_fb_peer_python ${candidate})
        break()
      endif()
    endif()
  endforeach()
else()
  set(_fb_peer_python ${FUSEBENCH_PEER_TEST_PYTHON})
endif()
if(NOT _fb_peer_python)
  message(STATUS "peer tests: no Python with torch (apt-get install python3-torch): peers_on_cpu skips itself")
  set(_fb_peer_python "")
endif()

# Debian's torch 1.13 on two tiny CPU cases: eager timed and judged by the harness, the compile and TF32
# peers skipped with their reasons in the console, results.json and the report; compare: information.
add_test(NAME peers_on_cpu COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/peers_test.sh $<TARGET_FILE:fusebench> "${_fb_peer_python}")
set_tests_properties(peers_on_cpu PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)

# Hostile helpers (property_tests/peers/): crash, hang, budget, garbage, wrong shape, no tensor, bad
# samples, an escaping path, wrong values (judged incorrect here, never taken on the helper's word).
add_test(NAME peers_hostile_helpers
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/peers_hostile_test.sh $<TARGET_FILE:fusebench> ${PROJECT_SOURCE_DIR}
                 "${_fb_peer_python}")
set_tests_properties(peers_hostile_helpers PROPERTIES TIMEOUT 600)

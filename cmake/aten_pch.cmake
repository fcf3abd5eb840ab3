# ATen/ATen.h precompiled once. fusebench_reference compiles the header (PRIVATE in
# reference/CMakeLists.txt) and every other target that links it, directly or through another of
# our targets, reuses that one file (REUSE_FROM). As a PUBLIC usage requirement the header was
# compiled again for each such target: 12 copies of 257 MB with libtorch 1.13, 3.1 GB of a 3.2 GB
# build tree, and CI's build on 6554516 stopped with "cannot write PCH file: No space left on device".
# The reuse is sound because every consumer compiles with the same compiler, -O level, language
# standard and torch flags (fusebench_reference's PUBLIC options); GCC checks the rest itself and,
# under the -Winvalid-pch CMake adds, says so and parses the header instead.
# Included from the top-level CMakeLists.txt after every add_subdirectory, so that new targets
# (a test executable, a library) are covered without a line of their own.

# Every target defined in `dir` and the directories below it.
function(_fusebench_targets_below dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _fusebench_targets_below(${sub} below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# TRUE when `target` links fusebench_reference through the link graph of this project's targets.
# Each target's verdict is kept (a global property) so that a library many targets share is walked
# once; it reads FALSE while its walk is under way, which also ends a cycle of static libraries.
function(_fusebench_links_reference target out)
  get_property(known GLOBAL PROPERTY _FUSEBENCH_PCH_LINKS_${target} SET)
  if(known)
    get_property(verdict GLOBAL PROPERTY _FUSEBENCH_PCH_LINKS_${target})
    set(${out} ${verdict} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY _FUSEBENCH_PCH_LINKS_${target} FALSE)
  set(verdict FALSE)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(deps ${target} INTERFACE_LINK_LIBRARIES)
  else()
    get_target_property(deps ${target} LINK_LIBRARIES)
  endif()
  foreach(dep IN LISTS deps)
    if(dep STREQUAL "fusebench_reference")
      set(verdict TRUE)
      break()
    endif()
    if(TARGET ${dep})
      get_target_property(imported ${dep} IMPORTED)
      if(NOT imported)
        _fusebench_links_reference(${dep} dep_links)
        if(dep_links)
          set(verdict TRUE)
          break()
        endif()
      endif()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY _FUSEBENCH_PCH_LINKS_${target} ${verdict})
  set(${out} ${verdict} PARENT_SCOPE)
endfunction()

_fusebench_targets_below(${PROJECT_SOURCE_DIR} _fusebench_all_targets)
foreach(_target IN LISTS _fusebench_all_targets)
  get_target_property(_type ${_target} TYPE)
  if(NOT _target STREQUAL "fusebench_reference" AND _type MATCHES "^(STATIC_LIBRARY|EXECUTABLE)$")
    _fusebench_links_reference(${_target} _links)
    if(_links)
      target_precompile_headers(${_target} REUSE_FROM fusebench_reference)
    endif()
  endif()
endforeach()

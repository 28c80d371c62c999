# simpact_precompile_headers(target [GTEST] [BULLET]): with
# SIMPACT_PRECOMPILE_HEADERS, the headers most of the project's files include
# (the standard library's containers, Eigen's dense and sparse modules, and
# with GTEST GoogleTest, with BULLET btBulletDynamicsCommon.h) are parsed once
# per target instead of once per file. Parsing them costs ~3.5 s a file
# (g++ 12, -O1, measured: Eigen/Core alone 1.4 s, GoogleTest 1.7 s), a large
# share of a file's compile time in a project of ~170 small files.
#
# Only targets of three or more files get one: a precompiled header costs
# about one parse to build, so a one-file target would pay twice.
#
# Off by default: every file of a precompiled target sees those headers,
# which would hide a missing #include. CI's double-precision stage builds
# without them, as users do, and so checks each file's includes; the later
# stages build with them (.ci/test).
function(simpact_precompile_headers target)
  if(NOT SIMPACT_PRECOMPILE_HEADERS)
    return()
  endif()
  cmake_parse_arguments(ARG "GTEST;BULLET" "" "" ${ARGN})
  get_target_property(sources ${target} SOURCES)
  list(FILTER sources INCLUDE REGEX "\\.cpp$")
  list(LENGTH sources count)
  if(count LESS 3)
    return()
  endif()
  set(headers <algorithm> <cmath> <cstdint> <functional> <limits> <memory> <sstream>
              <stdexcept> <string> <utility> <vector> <Eigen/Dense> <Eigen/Sparse>)
  if(ARG_GTEST)
    list(APPEND headers <gtest/gtest.h>)
  endif()
  if(ARG_BULLET)
    list(APPEND headers <btBulletDynamicsCommon.h>)
  endif()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()

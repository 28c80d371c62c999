# simpact_precompile_headers(target [GTEST] [BULLET]): with
# SIMPACT_PRECOMPILE_HEADERS, the headers most of the project's files include
# (the standard library's containers, Eigen's dense and sparse modules; with
# GTEST GoogleTest, with BULLET btBulletDynamicsCommon.h) are parsed once per
# target instead of once per file. Parsing them costs ~3.5 s a file (g++ 12
# -O1), a large share of a file's compile time in a project of ~170 small
# files that CI builds three times. Measured on whole CI builds (2 cores):
# Clang's sanitizer build 867 -> 773 s, GCC's single-precision build 383 ->
# 346 s; with Eigen/Core and GoogleTest alone, 799 s and 388 s (the Bullet
# files gain from Bullet's and Eigen's other headers).
#
# It hides missing includes: every file of a precompiled target sees those
# headers, before its own first include. So it is off by default, and CI's
# double-precision stage builds plain, as users do (.ci/test), and compiles
# each public header alone (simpact_public_header_check, tests/CMakeLists.txt).
#
# Only targets of three or more files get one: a precompiled header costs
# about one parse to build, so a one-file target would pay twice.
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

# simpact_precompile_headers(target [GTEST]): with SIMPACT_PRECOMPILE_HEADERS,
# Eigen/Core (and with GTEST GoogleTest) is parsed once per target instead of
# once per file. Parsing the two costs ~3 s a file (g++ 12 -O1: Eigen/Core
# 1.4 s, GoogleTest 1.7 s alone; a core test file 9.9 -> 6.3 s and 10.0 ->
# 7.7 s with them precompiled, measured), a large share of a file's compile
# time in a project of ~170 small files that CI builds three times.
#
# Only headers that every file of those targets includes anyway, directly or
# through the project's headers: the library, scene and test files use
# Eigen (all but tests/core/layering_test.cpp, which reads source files as
# text), and every test file includes GoogleTest. So a precompiled build sees
# the headers a plain one sees (Eigen's other modules, Bullet's headers and
# the standard library's beyond what those two include are not
# precompiled), and it cannot hide a missing include of theirs; the public
# headers are checked on their own by simpact_public_header_check
# (tests/CMakeLists.txt).
#
# Only targets of three or more files get one: a precompiled header costs
# about one parse to build, so a one-file target would pay twice.
function(simpact_precompile_headers target)
  if(NOT SIMPACT_PRECOMPILE_HEADERS)
    return()
  endif()
  cmake_parse_arguments(ARG "GTEST" "" "" ${ARGN})
  get_target_property(sources ${target} SOURCES)
  list(FILTER sources INCLUDE REGEX "\\.cpp$")
  list(LENGTH sources count)
  if(count LESS 3)
    return()
  endif()
  set(headers <Eigen/Core>)
  if(ARG_GTEST)
    list(APPEND headers <gtest/gtest.h>)
  endif()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()

# simpact_warnings(target [CONVERSION]): the project's warning set on a target
# (PRIVATE), as errors with SIMPACT_WARNINGS_AS_ERRORS. CONVERSION adds
# -Wconversion, used on code that does numerics (core, CLI) but not on code
# that mostly forwards Bullet's btScalar, where float/double conversions are
# the point.
function(simpact_warnings target)
  cmake_parse_arguments(ARG "CONVERSION" "" "" ${ARGN})
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                           $<$<BOOL:${ARG_CONVERSION}>:-Wconversion>
                           $<$<BOOL:${SIMPACT_WARNINGS_AS_ERRORS}>:-Werror>)
  endif()
endfunction()

# Sanitizer and fuzzer builds (issue #10: "Sanitizers and fuzzing in CI").
#
# SIMPACT_SANITIZE=ON instruments everything built here with
# AddressSanitizer and UndefinedBehaviorSanitizer (GCC or Clang). UBSan
# findings are fatal (-fno-sanitize-recover=undefined): a test that triggers
# undefined behaviour fails instead of printing a line nobody reads.
#
# SIMPACT_BUILD_FUZZERS=ON (Clang only) builds the libFuzzer targets of
# tests/fuzz/ and instruments the libraries they call for coverage
# (-fsanitize=fuzzer-no-link) as well as with ASan and UBSan. Build only the
# fuzz targets in such a tree: every other executable is instrumented too.
#
# Both are global (add_compile_options before the project's targets are
# defined), so the core, the adapters and the CLI are instrumented alike.
# Bullet, Eigen's headers aside, and GoogleTest come from Debian packages
# and are not instrumented: ASan still checks every access made by our code.
set(SIMPACT_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer)

if(SIMPACT_SANITIZE OR SIMPACT_BUILD_FUZZERS)
  # Line tables only: readable reports at a fraction of -g's compile time.
  add_compile_options(${SIMPACT_SANITIZER_FLAGS} $<IF:$<CXX_COMPILER_ID:Clang>,-gline-tables-only,-g1>)
  add_link_options(-fsanitize=address,undefined)
endif()

if(SIMPACT_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SIMPACT_BUILD_FUZZERS needs Clang (libFuzzer), e.g. "
                        "-DCMAKE_CXX_COMPILER=clang++; the compiler is ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# Sanitizer and fuzzer builds (issue #10: "Sanitizers and fuzzing in CI").
#
# SIMPACT_SANITIZE=ON instruments everything built here with
# AddressSanitizer and UndefinedBehaviorSanitizer (GCC or Clang). UBSan
# findings are fatal (-fno-sanitize-recover=undefined): a test that triggers
# undefined behaviour fails instead of printing a line nobody reads.
#
# SIMPACT_BUILD_FUZZERS=ON (Clang only) builds the libFuzzer targets of
# tests/fuzz/ and instruments the code they explore, the plugin's libraries
# (plugin/CMakeLists.txt: the core, the adapters, the CLI), for coverage
# (SIMPACT_FUZZ_COVERAGE_FLAGS, -fsanitize=fuzzer-no-link) as well as with
# ASan and UBSan. The tests may share such a tree (CI's sanitizer stage
# builds the fuzz targets and the tests once): the sanitizer runtimes
# define the coverage hooks as no-ops outside a fuzzer, and the tests' own
# files are not coverage-instrumented.
#
# The sanitizers are global (add_compile_options before the project's
# targets are defined), so the core, the adapters, the CLI and the tests are
# instrumented alike; SIMPACT_TEST_COMPILE_OPTIONS comes after them on the
# tests' own files (CI passes -fno-sanitize=undefined there: UBSan then
# checks the libraries and ASan checks everything, .ci/test).
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
  set(SIMPACT_FUZZ_COVERAGE_FLAGS -fsanitize=fuzzer-no-link)
endif()

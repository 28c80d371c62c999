# Extracts the README's C++ snippets for the tests that compile and run
# them (tests/bullet/readme_snippet_test.cpp, tests/core/readme_snippet_test.cpp),
# so a README edit that breaks a snippet fails the build of those tests.
#
#   cmake -DREADME=<README.md,docs/core.md,...> -DOUT=<dir> -DNAMES=<a,b,...> -P ExtractReadmeSnippets.cmake
#
# README may name several Markdown files, separated by commas (the README and
# the docs pages its snippets moved to); a snippet is searched in all.
#
# A snippet is the ```cpp block that follows the line
#   <!-- snippet: NAME -->
# in the README; it is written verbatim to OUT/readme_NAME.inc. A name
# without its block is an error.
if(NOT README OR NOT OUT OR NOT NAMES)
  message(FATAL_ERROR "ExtractReadmeSnippets: README, OUT and NAMES are required")
endif()
string(REPLACE "," ";" readme_files "${README}")
set(text "")
foreach(readme_file IN LISTS readme_files)
  file(READ "${readme_file}" one)
  string(APPEND text "${one}\n")
endforeach()
file(MAKE_DIRECTORY "${OUT}")
string(REPLACE "," ";" names "${NAMES}")
foreach(name IN LISTS names)
  set(marker "<!-- snippet: ${name} -->")
  string(FIND "${text}" "${marker}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${README} has no snippet marked '${marker}'")
  endif()
  string(SUBSTRING "${text}" ${at} -1 rest)
  set(fence "```cpp\n")
  string(FIND "${rest}" "${fence}" open)
  if(open EQUAL -1)
    message(FATAL_ERROR "${README}: no ```cpp block after '${marker}'")
  endif()
  string(LENGTH "${fence}" fence_length)
  math(EXPR body_start "${open} + ${fence_length}")
  string(SUBSTRING "${rest}" ${body_start} -1 rest)
  string(FIND "${rest}" "\n```" close)
  if(close EQUAL -1)
    message(FATAL_ERROR "${README}: the ```cpp block of '${name}' is not closed")
  endif()
  math(EXPR body_length "${close} + 1")
  string(SUBSTRING "${rest}" 0 ${body_length} body)
  # Only rewrite on change, so the tests do not rebuild for other README edits.
  set(file "${OUT}/readme_${name}.inc")
  set(content "// Generated from ${README} (snippet '${name}') by cmake/ExtractReadmeSnippets.cmake.\n${body}")
  if(EXISTS "${file}")
    file(READ "${file}" old)
  else()
    set(old "")
  endif()
  if(NOT old STREQUAL content)
    file(WRITE "${file}" "${content}")
  endif()
endforeach()

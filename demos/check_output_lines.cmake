# Runs PROGRAM with the ;-list ARGS and fails unless it exits 0 and prints at
# most MAX_LINES (and at least MIN_LINES, default 0) lines on stdout: a
# program's summary fits one screen; a verbose listing is longer.
execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE status OUTPUT_VARIABLE out)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${status}:\n${out}")
endif()
string(REGEX MATCHALL "\n" newlines "${out}")
list(LENGTH newlines lines)
if(lines GREATER MAX_LINES)
  message(FATAL_ERROR "${PROGRAM} printed ${lines} lines, more than ${MAX_LINES}:\n${out}")
endif()
if(DEFINED MIN_LINES AND lines LESS MIN_LINES)
  message(FATAL_ERROR "${PROGRAM} printed ${lines} lines, fewer than ${MIN_LINES}:\n${out}")
endif()
message(STATUS "${PROGRAM} printed ${lines} lines (at most ${MAX_LINES})")

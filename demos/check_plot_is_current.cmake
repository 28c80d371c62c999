# Runs PROGRAM PLOT_ARGS --svg ACTUAL (PLOT_ARGS defaults to --plot-only; a
# benchmark passes --plot-from and its checked-in CSV) and fails unless
# ACTUAL equals EXPECTED byte for byte: a checked-in plot must be what its
# demo draws.
if(NOT DEFINED PLOT_ARGS)
  set(PLOT_ARGS --plot-only)
endif()
execute_process(COMMAND ${PROGRAM} ${PLOT_ARGS} --svg ${ACTUAL} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  string(REPLACE ";" " " shown_args "${PLOT_ARGS}")
  message(FATAL_ERROR "${PROGRAM} ${shown_args} failed (${status})")
endif()
string(REPLACE ";" " " shown_args "${PLOT_ARGS}")
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${EXPECTED} ${ACTUAL} RESULT_VARIABLE differs)
if(NOT differs EQUAL 0)
  message(FATAL_ERROR "${EXPECTED} is not what the demo draws now (${ACTUAL}); regenerate it with\n"
                      "  ${PROGRAM} ${shown_args} --svg ${EXPECTED}")
endif()

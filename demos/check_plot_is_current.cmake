# Runs PROGRAM --plot-only --svg ACTUAL and fails unless ACTUAL equals
# EXPECTED byte for byte: a checked-in plot must be what its demo draws.
execute_process(COMMAND ${PROGRAM} --plot-only --svg ${ACTUAL} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} --plot-only failed (${status})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${EXPECTED} ${ACTUAL} RESULT_VARIABLE differs)
if(NOT differs EQUAL 0)
  message(FATAL_ERROR "${EXPECTED} is not what the demo draws now (${ACTUAL}); regenerate it with\n"
                      "  ${PROGRAM} --plot-only --svg ${EXPECTED}")
endif()

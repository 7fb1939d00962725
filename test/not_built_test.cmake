# Runs COMMAND (a list) and passes when it fails (nonzero exit) with output that matches EXPECT:
# a build without CUDA, OpenCL or Redis support answering a command that needs it.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REPLACE ";" " " shown "${COMMAND}")
if(rc EQUAL 0)
  message(FATAL_ERROR "'${shown}' succeeded; expected it to fail\n${out}${err}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "'${shown}' failed (${rc}) without the expected message '${EXPECT}':\n"
                      "${out}${err}")
endif()
message(STATUS "'${shown}' failed (${rc}) as expected:\n${err}")

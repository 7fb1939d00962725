# Installs this build into a scratch prefix, then configures, builds and runs examples/consumer
# against it with find_package(ktune): the check that the package config is usable.
set(prefix ${KTUNE_BINARY_DIR}/consumer-test/prefix)
set(build ${KTUNE_BINARY_DIR}/consumer-test/build)
file(REMOVE_RECURSE ${KTUNE_BINARY_DIR}/consumer-test)
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${KTUNE_BINARY_DIR} --prefix ${prefix})
# The consumer is built with this build's flags (a sanitizer build's objects need its runtime).
run(${CMAKE_COMMAND} -S ${KTUNE_SOURCE_DIR}/examples/consumer -B ${build} -DCMAKE_PREFIX_PATH=${prefix}
    "-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}")
run(${CMAKE_COMMAND} --build ${build} -j 2)
run(${build}/consumer)

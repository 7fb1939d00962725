# Installs this build into a scratch prefix, then configures, builds and runs
# examples/runtime_dispatch against it with find_package(ktune): a program that tunes ahead and
# serves calls through the Dispatcher, failing on a wrong result.
set(root ${KTUNE_BINARY_DIR}/runtime-dispatch-test)
set(prefix ${root}/prefix)
set(build ${root}/build)
file(REMOVE_RECURSE ${root})
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${KTUNE_BINARY_DIR} --prefix ${prefix})
# Built with this build's flags (a sanitizer build's objects need its runtime).
run(${CMAKE_COMMAND} -S ${KTUNE_SOURCE_DIR}/examples/runtime_dispatch -B ${build}
    -DCMAKE_PREFIX_PATH=${prefix}
    "-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}")
run(${CMAKE_COMMAND} --build ${build} -j 2)
# A fresh cache folder: the run tunes ahead, then serves (and tunes one shape in the background).
run(${build}/runtime_dispatch ${root}/cache)

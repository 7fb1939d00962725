# Installs this build into a scratch prefix, then configures, builds and runs examples/${EXAMPLE}
# against it with find_package(ktune): the check that the installed package is usable. The
# example's executable is named like its folder and gets a fresh cache folder as its argument;
# runtime_dispatch, which links only ktune::runtime, gets the dispatch table that the installed
# CLI writes after tuning its spec instead.
set(root ${KTUNE_BINARY_DIR}/example-test/${EXAMPLE})
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
# Built with this build's flags (a sanitizer build's objects need its runtime). The examples set
# no C++ standard: the package's targets require C++23 of their consumers, also of one that asks
# for C++20 (consumer); with BUILD_SHARED_LIBS the consumer links the versioned shared libraries.
set(standard)
if(EXAMPLE STREQUAL "consumer")
  set(standard -DCMAKE_CXX_STANDARD=20)
endif()
run(${CMAKE_COMMAND} -S ${KTUNE_SOURCE_DIR}/examples/${EXAMPLE} -B ${build}
    -DCMAKE_PREFIX_PATH=${prefix} ${standard}
    "-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}")
run(${CMAKE_COMMAND} --build ${build} -j 2)
if(EXAMPLE STREQUAL "runtime_dispatch")
  set(table ${root}/cache/matmul.dispatch.json)
  run(${prefix}/bin/ktune --cache-dir ${root}/cache tune
      ${KTUNE_SOURCE_DIR}/examples/${EXAMPLE}/matmul.yaml --budget-ms 5 --quiet
      --dispatch-table ${table})
  run(${build}/${EXAMPLE} ${table})
else()
  run(${build}/${EXAMPLE} ${root}/cache)
endif()

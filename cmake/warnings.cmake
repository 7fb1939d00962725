# ktune_warnings(target): the project's warning set; -Werror when KTUNE_WERROR is on (CI).
function(ktune_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(KTUNE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # g++ 12 at -O2/-O3 reports std::string members of aggregate temporaries as "may be used
      # uninitialized" (a known false positive); it stays a warning, not an error.
      target_compile_options(${target} PRIVATE -Wno-error=maybe-uninitialized)
    endif()
  endif()
endfunction()

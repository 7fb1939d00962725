# ktune_warnings(target): the project's warning set; -Werror when KTUNE_WERROR is on (CI).
function(ktune_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(KTUNE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

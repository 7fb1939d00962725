# ktune_feature_option(NAME DOC): an optional feature's cache option NAME (AUTO, the default, ON or
# OFF; 1/YES/TRUE/Y and 0/NO/FALSE/N read as ON and OFF, any other value fails the configure),
# and NAME_MODE (AUTO, ON or OFF) in the caller's scope. The one reading of KTUNE_CUDA,
# KTUNE_OPENCL, KTUNE_MPI, KTUNE_REDIS and KTUNE_CHECK_FATBIN.
function(ktune_feature_option name doc)
  set(${name} AUTO CACHE STRING "${doc}")
  set_property(CACHE ${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${name}}" value)
  if(value MATCHES "^(1|YES|TRUE|Y)$")
    set(value ON)
  elseif(value MATCHES "^(0|NO|FALSE|N)$")
    set(value OFF)
  endif()
  if(NOT value MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${name}=${${name}}: expected AUTO, ON or OFF")
  endif()
  set(${name}_MODE ${value} PARENT_SCOPE)
endfunction()

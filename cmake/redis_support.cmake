# KTUNE_REDIS: the shared tuning cache on Redis (src/cache_redis, `ktune --cache redis://...`)
# through hiredis. AUTO (the default) builds it when hiredis is found by pkg-config and otherwise
# leaves it out with one configure line saying how to get it; ON fails the configure without it;
# OFF leaves it out. Without it, a redis:// cache URL is answered "no Redis support".
#
# Sets KTUNE_HAVE_REDIS (1 or 0; a compile definition of the CLI and the integration tests only,
# so that the other objects' command lines, and their ccache entries, do not depend on it) and
# KTUNE_HIREDIS_LIBRARIES (absolute paths, so that the installed package needs no pkg-config).
include(${CMAKE_CURRENT_LIST_DIR}/feature_option.cmake)
ktune_feature_option(KTUNE_REDIS "Redis tuning cache: AUTO (when hiredis is found), ON, OFF")

set(KTUNE_HAVE_REDIS 0)
if(KTUNE_REDIS_MODE STREQUAL "OFF")
  message(STATUS "Redis tuning cache: off (KTUNE_REDIS=OFF)")
else()
  pkg_check_modules(HIREDIS QUIET hiredis)
  if(HIREDIS_FOUND)
    set(KTUNE_HAVE_REDIS 1)
    set(KTUNE_HIREDIS_LIBRARIES ${HIREDIS_LINK_LIBRARIES})
    message(STATUS "Redis tuning cache: on (hiredis ${HIREDIS_VERSION})")
  elseif(KTUNE_REDIS_MODE STREQUAL "ON")
    message(FATAL_ERROR "KTUNE_REDIS=ON, but hiredis was not found: install libhiredis-dev "
                        "(make deps)")
  else()
    message(STATUS "Redis tuning cache: off (no hiredis found; install libhiredis-dev (make "
                   "deps))")
  endif()
endif()

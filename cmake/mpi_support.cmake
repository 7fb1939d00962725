# KTUNE_MPI: AUTO (the default) builds `ktune tune --distributed` when MPI's C library is found
# (Debian: libopenmpi-dev) and otherwise leaves it out with one configure line; ON fails the
# configure without it; OFF leaves it out. MPI is linked into the CLI alone (tools/ktune/mpi_comm.cpp),
# never into the libraries a program links (docs/architecture.md, "Tuning over MPI ranks").
#
# Sets KTUNE_HAVE_MPI (1 or 0).
include(${CMAKE_CURRENT_LIST_DIR}/feature_option.cmake)
ktune_feature_option(KTUNE_MPI "MPI support for ktune tune --distributed: AUTO, ON, OFF")
set(KTUNE_HAVE_MPI 0)
if(KTUNE_MPI_MODE STREQUAL "OFF")
  message(STATUS "MPI support: off (KTUNE_MPI=OFF)")
else()
  # FindMPI's C component needs the C language (the C compiler of the same toolchain).
  enable_language(C)
  if(KTUNE_MPI_MODE STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS C)
  else()
    find_package(MPI QUIET COMPONENTS C)
  endif()
  if(MPI_C_FOUND)
    set(KTUNE_HAVE_MPI 1)
    message(STATUS "MPI support: on (${MPI_C_LIBRARIES}; mpiexec: ${MPIEXEC_EXECUTABLE})")
  else()
    message(STATUS "MPI support: off (no MPI found; install libopenmpi-dev openmpi-bin for "
                   "ktune tune --distributed)")
  endif()
endif()

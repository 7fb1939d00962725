# Installs headers, the library, the CLI, the worker (libexec) and a CMake package config so that
# consumers write find_package(ktune) and link ktune::ktune, or one module's target such as
# ktune::runtime (each module is exported under its name, with its dependencies). Every target
# requires C++23 of its consumers (cxx_std_23, src/CMakeLists.txt): the package works whatever the
# consumer's CMAKE_CXX_STANDARD. Libraries are static, or shared with BUILD_SHARED_LIBS (versioned:
# libktune_<module>.so.<major>). A build without CUDA or OpenCL support leaves out the public
# headers of what it did not build (CUDA, OpenCL, Redis).
include(CMakePackageConfigHelpers)
set(ktune_left_out)
if(NOT KTUNE_HAVE_CUDA)
  list(APPEND ktune_left_out ${KTUNE_CUDA_PUBLIC_HEADERS})
endif()
if(NOT KTUNE_HAVE_OPENCL)
  list(APPEND ktune_left_out ${KTUNE_OPENCL_PUBLIC_HEADERS})
endif()
if(NOT KTUNE_HAVE_REDIS)
  list(APPEND ktune_left_out redis_cache.h)
endif()
set(ktune_exclude)
foreach(header ${ktune_left_out})
  list(APPEND ktune_exclude PATTERN ${header} EXCLUDE)
endforeach()
install(DIRECTORY include/ktune DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} ${ktune_exclude})
get_property(ktune_modules GLOBAL PROPERTY KTUNE_MODULES)
install(TARGETS ktune ${ktune_modules} EXPORT ktuneTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS ktune-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ktune-worker RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR})
install(EXPORT ktuneTargets NAMESPACE ktune:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ktune)
configure_package_config_file(cmake/ktuneConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ktuneConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ktune
  PATH_VARS CMAKE_INSTALL_LIBEXECDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ktuneConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ktuneConfig.cmake ${PROJECT_BINARY_DIR}/ktuneConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ktune)

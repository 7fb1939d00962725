# KTUNE_CUDA and KTUNE_OPENCL: AUTO (the default) builds the support when its headers are found
# and otherwise leaves it out with one configure line saying how to get it; ON fails the configure
# without them; OFF leaves the support out. Only headers are needed at build time: libcuda, NVRTC,
# cuBLAS and libOpenCL are opened with dlopen at run time, so that one build runs on machines with
# and without a GPU.
#
# Sets KTUNE_HAVE_CUDA and KTUNE_HAVE_OPENCL (1 or 0, also compile definitions of every target of
# the project), KTUNE_CUDA_SOURCES_REGEX and KTUNE_OPENCL_SOURCES_REGEX (the sources under src/
# that need each: named after their backend) and KTUNE_OPENCL_INCLUDE_DIRS.
include(${CMAKE_CURRENT_LIST_DIR}/feature_option.cmake)
ktune_feature_option(KTUNE_CUDA "CUDA support: AUTO (when the toolkit's headers are found), ON, OFF")
ktune_feature_option(KTUNE_OPENCL "OpenCL support: AUTO (when <CL/cl.h> is found), ON, OFF")

# CUDA: the toolkit's <cuda.h>, <nvrtc.h> and <cublasLt.h>, for types and constants.
set(KTUNE_HAVE_CUDA 0)
if(KTUNE_CUDA_MODE STREQUAL "OFF")
  message(STATUS "CUDA support: off (KTUNE_CUDA=OFF)")
else()
  if(KTUNE_CUDA_MODE STREQUAL "ON")
    find_package(CUDAToolkit REQUIRED)
  else()
    find_package(CUDAToolkit QUIET)
  endif()
  if(CUDAToolkit_FOUND)
    set(KTUNE_HAVE_CUDA 1)
    message(STATUS "CUDA support: on (headers in ${CUDAToolkit_INCLUDE_DIRS})")
  else()
    message(STATUS "CUDA support: off (no CUDA toolkit headers found; install NVIDIA's CUDA "
                   "toolkit or pass -DCUDAToolkit_ROOT=<dir>)")
  endif()
endif()

# nvcc (optional, build time): the CUDA worker's checking kernels compiled into a fatbin, which
# the worker loads instead of compiling them with NVRTC (KTUNE_CHECK_FATBIN; sets
# KTUNE_HAVE_CHECK_FATBIN and defines ktune_embed_fatbin: cmake/embed_fatbin.cmake).
set(KTUNE_HAVE_CHECK_FATBIN 0)
if(KTUNE_HAVE_CUDA)
  include(${CMAKE_CURRENT_LIST_DIR}/embed_fatbin.cmake)
endif()

# OpenCL: <CL/cl.h> only (Debian: opencl-c-headers, which `make deps` installs).
set(KTUNE_HAVE_OPENCL 0)
if(KTUNE_OPENCL_MODE STREQUAL "OFF")
  message(STATUS "OpenCL support: off (KTUNE_OPENCL=OFF)")
else()
  find_path(KTUNE_OPENCL_INCLUDE_DIR NAMES CL/cl.h HINTS ${CUDAToolkit_INCLUDE_DIRS}
            DOC "The folder that holds CL/cl.h")
  if(KTUNE_OPENCL_INCLUDE_DIR)
    set(KTUNE_HAVE_OPENCL 1)
    set(KTUNE_OPENCL_INCLUDE_DIRS ${KTUNE_OPENCL_INCLUDE_DIR})
    message(STATUS "OpenCL support: on (headers in ${KTUNE_OPENCL_INCLUDE_DIR})")
  elseif(KTUNE_OPENCL_MODE STREQUAL "ON")
    message(FATAL_ERROR "KTUNE_OPENCL=ON, but <CL/cl.h> was not found: install opencl-c-headers "
                        "(make deps) or pass -DKTUNE_OPENCL_INCLUDE_DIR=<dir>")
  else()
    message(STATUS "OpenCL support: off (no <CL/cl.h> found; install opencl-c-headers (make deps) "
                   "or pass -DKTUNE_OPENCL_INCLUDE_DIR=<dir>)")
  endif()
endif()

add_compile_definitions(KTUNE_HAVE_CUDA=${KTUNE_HAVE_CUDA} KTUNE_HAVE_OPENCL=${KTUNE_HAVE_OPENCL})
# The sources left out without the support, by path under src/ (src/CMakeLists.txt filters the
# modules' globs with them). The public headers of what they define are not installed either.
set(KTUNE_CUDA_SOURCES_REGEX
    "/src/(core/cuda_|backend/cuda_|backend/nvrtc_|choice/cublas_|device/cuda/|ops/cuda_|runtime/cuda_|tuning/cuda_|codegen/cuda_gemm_picks)")
set(KTUNE_OPENCL_SOURCES_REGEX "/src/(backend/opencl_|device/opencl/|ops/opencl_)")
set(KTUNE_CUDA_PUBLIC_HEADERS cuda_backend.h cublas_choice.h cuda_gemm.h cuda_multi_kernel.h)
set(KTUNE_OPENCL_PUBLIC_HEADERS opencl_backend.h opencl_ops.h)

// KTUNE_REQUIRE_OPENCL(): skips the calling test, saying why, on a machine without an OpenCL
// device (the OpenCL tests run on PoCL in CI and on NVIDIA's OpenCL on the GPU machine).
#pragma once

#include <gtest/gtest.h>

#include "ktune/backend/opencl_backend.h"

#define KTUNE_REQUIRE_OPENCL()                                          \
  do {                                                                  \
    if (::ktune::Status s = ::ktune::opencl_available(); !s) {          \
      GTEST_SKIP() << "[SKIP] no OpenCL device: " << s.error().message; \
    }                                                                   \
  } while (0)

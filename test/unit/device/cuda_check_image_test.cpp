// The CUDA checking kernels as the build embeds them (src/device/cuda/cuda_check_embedded.h): the
// fatbin nvcc compiled from ktune_check.cu, there whenever the build found nvcc
// (KTUNE_CHECK_FATBIN_EXPECTED, from test/CMakeLists.txt), and that file's text, which NVRTC
// compiles where the fatbin is missing or refused (test/cuda/cuda_handler_test.cpp compiles it for
// sm_80 and sm_90a). No GPU needed.
#include <gtest/gtest.h>

#if KTUNE_HAVE_CUDA

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <span>
#include <string>

#include "device/cuda/cuda_check_embedded.h"

namespace ktune {
namespace {

std::uint64_t little_endian(std::span<const unsigned char> bytes, std::size_t at, int size) {
  std::uint64_t v = 0;
  for (int i = size - 1; i >= 0; --i) v = (v << 8) | bytes[at + static_cast<std::size_t>(i)];
  return v;
}

TEST(CudaCheckImage, IsAFatbinWithSassForHopperAndPtxWhenTheBuildHadNvcc) {
  const std::span<const unsigned char> image = cuda_check_fatbin();
  if (!KTUNE_CHECK_FATBIN_EXPECTED) {
    EXPECT_TRUE(image.empty()) << image.size();
    GTEST_SKIP() << "this build found no nvcc: the worker compiles the checking kernels with NVRTC";
  }
  ASSERT_GE(image.size(), 16u);
  // The fatbin header: magic, version (u16), header size (u16), size of the entries (u64).
  EXPECT_EQ(little_endian(image, 0, 4), 0xBA55ED50u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(image.data()) % 8, 0u);  // the driver reads in place
  const std::size_t header = little_endian(image, 6, 2);
  ASSERT_EQ(header + little_endian(image, 8, 8), image.size());
  // Its entries, as nvcc 13.0 lays them out (undocumented; read off its fatbins): kind (u16 at
  // 0: 1 PTX, 2 ELF), header size (u32 at 4), payload size (u64 at 8), architecture (u32 at 28:
  // 90 for sm_90).
  std::set<std::uint64_t> sass, ptx;
  for (std::size_t at = header; at < image.size();) {
    ASSERT_LE(at + 32, image.size());
    const std::uint64_t kind = little_endian(image, at, 2);
    const std::uint64_t arch = little_endian(image, at + 28, 4);
    if (kind == 2) sass.insert(arch);
    if (kind == 1) ptx.insert(arch);
    const std::uint64_t entry_header = little_endian(image, at + 4, 4);
    ASSERT_GE(entry_header, 32u);
    at += entry_header + little_endian(image, at + 8, 8);
  }
  // The H200's own machine code (no JIT when a worker loads it), and PTX for GPUs newer than
  // every SASS in it.
  EXPECT_TRUE(sass.contains(90)) << "no sm_90 SASS";
  ASSERT_FALSE(ptx.empty()) << "no PTX";
  ASSERT_FALSE(sass.empty()) << "no SASS";
  EXPECT_GE(*ptx.rbegin(), *sass.rbegin());
}

// One source of truth: the text NVRTC compiles is the file nvcc compiled.
TEST(CudaCheckImage, TheSourceIsKtuneCheckCu) {
  const char* moved = std::getenv("KTUNE_TEST_SOURCE_DIR");
  const std::filesystem::path path =
      std::filesystem::path(moved && *moved ? moved : KTUNE_SOURCE_DIR) / "src" / "device" /
      "cuda" / "ktune_check.cu";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(cuda_check_ktune_check_source(), text);
  EXPECT_NE(text.find("extern \"C\" __global__ void ktune_fill("), std::string::npos);
}

}  // namespace
}  // namespace ktune

#endif  // KTUNE_HAVE_CUDA

// Large problems are seeded on the GPU (CudaChecker::fill, poison; CudaProblemBuffers::
// create_on_device): the bytes must be the host's (fill_random, HostBuffer::poison,
// ProblemBuffers) exactly, for every dtype and data set, or a recorded seed would replay other
// data and an expected-outputs file made from ktune's inputs would no longer match.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <tuple>
#include <vector>

#include "device/cuda/cuda_buffers.h"
#include "device/cuda/cuda_check.h"
#include "gpu_stream_fixture.h"
#include "ktune/tensor/problem_buffers.h"
#include "ktune/tensor/tensor_fill.h"

namespace ktune {
namespace {

class CudaDeviceSeed : public test::GpuStreamTest {
 protected:
  void SetUp() override {
    test::GpuStreamTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    Result<CudaDeviceInfo> info = cuda_device_info(0);
    ASSERT_TRUE(info) << info.error().message;
    Result<std::unique_ptr<CudaChecker>> c =
        CudaChecker::create(*cu_, info->arch(), info->sm_count);
    ASSERT_TRUE(c) << c.error().message;
    checker_ = std::move(*c);
  }
  void TearDown() override {
    checker_.reset();
    test::GpuStreamTest::TearDown();
  }

  // The bytes at `p` read back.
  std::vector<std::byte> read(CUdeviceptr p, std::size_t bytes) {
    std::vector<std::byte> out(bytes);
    EXPECT_EQ(cu_->CtxSynchronize(), CUDA_SUCCESS);
    if (bytes > 0) {
      EXPECT_EQ(cu_->MemcpyDtoH(out.data(), p, bytes), CUDA_SUCCESS);
    }
    return out;
  }

  std::unique_ptr<CudaChecker> checker_;
};

// The index of the first element where a and b differ, or -1.
std::int64_t first_difference(const std::byte* a, const std::byte* b, std::size_t bytes,
                              std::size_t size) {
  for (std::size_t i = 0; i < bytes; ++i) {
    if (a[i] != b[i]) return static_cast<std::int64_t>(i / size);
  }
  return -1;
}

TEST_F(CudaDeviceSeed, FillAndPoisonWriteTheHostsBytesForEveryDtypeAndDataSet) {
  // Sizes that leave partial blocks and a partial grid; offsets leave a poisoned prefix.
  struct Shape {
    std::vector<std::int64_t> sizes;
    std::int64_t offset;
  };
  const Shape shapes[] = {{{1}, 0}, {{3, 5}, 3}, {{1000, 777}, 0}, {{2049, 513}, 7}};
  for (DType dtype : kAllDTypes) {
    for (DataSet set : {DataSet::kUniform, DataSet::kStress}) {
      for (const Shape& shape : shapes) {
        TensorSpec spec = TensorSpec::contiguous(dtype, shape.sizes);
        spec.offset = shape.offset;
        const std::size_t bytes = spec.storage_bytes();
        const std::uint64_t seed = argument_seed(12345, 1, set);
        HostBuffer host = HostBuffer::allocate(bytes);
        host.poison(dtype);
        fill_random(host, spec, seed, set);

        CUdeviceptr dev = 0;
        ASSERT_EQ(cu_->MemAlloc(&dev, bytes), CUDA_SUCCESS);
        ASSERT_TRUE(checker_->poison(dev, bytes, dtype, stream_));
        const CUdeviceptr first = dev + static_cast<CUdeviceptr>(spec.offset) * dtype_size(dtype);
        ASSERT_TRUE(checker_->fill(first, dtype, spec.numel(), seed, set, stream_));
        const std::vector<std::byte> got = read(dev, bytes);
        (void)cu_->MemFree(dev);
        EXPECT_EQ(first_difference(got.data(), host.data(), bytes, dtype_size(dtype)), -1)
            << dtype_name(dtype) << " " << data_set_name(set) << " " << spec.key()
            << ": the first element that differs from the host's";
      }
    }
  }
}

TEST_F(CudaDeviceSeed, ProblemBuffersMadeOnTheGpuEqualTheHostsCopiedOver) {
  // Inputs of two dtypes (one with an offset), an in-out, an output and a scalar.
  Problem problem;
  problem.op = "seed_test";
  problem.name = "seed_test";
  auto buffer = [](std::string name, ArgRole role, DType dtype, std::vector<std::int64_t> sizes,
                   std::int64_t offset) {
    ProblemArg a;
    a.param = {std::move(name), role, dtype};
    a.tensor = TensorSpec::contiguous(dtype, std::move(sizes));
    a.tensor.offset = offset;
    return a;
  };
  problem.args.push_back(buffer("A", ArgRole::kIn, DType::kBF16, {1024, 1031}, 0));
  problem.args.push_back(buffer("B", ArgRole::kIn, DType::kF32, {777, 513}, 5));
  problem.args.push_back(buffer("acc", ArgRole::kInOut, DType::kF16, {300, 301}, 0));
  problem.args.push_back(buffer("C", ArgRole::kOut, DType::kF32, {1024, 513}, 0));
  ProblemArg alpha;
  alpha.param = {"alpha", ArgRole::kScalar, DType::kF32};
  alpha.scalar = 0.5;
  problem.args.push_back(alpha);

  for (DataSet set : {DataSet::kUniform, DataSet::kStress}) {
    const std::uint64_t seed = 99;
    Result<ProblemBuffers> host = ProblemBuffers::try_create(problem, seed, set);
    ASSERT_TRUE(host) << host.error().message;
    Result<std::unique_ptr<CudaProblemBuffers>> copied = CudaProblemBuffers::create(*cu_, *host);
    ASSERT_TRUE(copied) << copied.error().message;
    Result<std::unique_ptr<CudaProblemBuffers>> seeded = CudaProblemBuffers::create_on_device(
        *cu_, problem,
        [&](std::size_t arg, CUdeviceptr p, std::size_t bytes) {
          return checker_->poison(p, bytes, problem.args[arg].param.dtype, stream_);
        },
        [&](std::size_t arg, CUdeviceptr p, std::size_t) {
          const TensorSpec& t = problem.args[arg].tensor;
          return checker_->fill(p + static_cast<CUdeviceptr>(t.offset) * dtype_size(t.dtype),
                                t.dtype, t.numel(), argument_seed(seed, arg, set), set, stream_);
        });
    ASSERT_TRUE(seeded) << seeded.error().message;
    for (std::size_t i = 0; i < problem.args.size(); ++i) {
      const std::string what =
          fmt::format("{} ({})", problem.args[i].param.name, data_set_name(set));
      if (problem.args[i].param.role == ArgRole::kScalar) {
        EXPECT_EQ(std::memcmp((*seeded)->params()[i], (*copied)->params()[i], 8), 0) << what;
        continue;
      }
      const std::size_t bytes = (*copied)->storage_bytes(i);
      ASSERT_EQ((*seeded)->storage_bytes(i), bytes) << what;
      EXPECT_EQ((*seeded)->device_args()[i] - (*seeded)->storage(i),
                (*copied)->device_args()[i] - (*copied)->storage(i))
          << what << ": the view's offset";
      for (auto [name, a, b] :
           {std::tuple{"storage", (*seeded)->storage(i), (*copied)->storage(i)},
            std::tuple{"pristine", (*seeded)->pristine(i), (*copied)->pristine(i)}}) {
        const std::vector<std::byte> x = read(a, bytes), y = read(b, bytes);
        EXPECT_EQ(
            first_difference(x.data(), y.data(), bytes, dtype_size(problem.args[i].param.dtype)),
            -1)
            << what << " " << name << ": the first element that differs";
      }
    }
    // No host copy of the inputs: modified_input() says so instead of comparing nothing.
    Result<std::optional<std::string>> modified = (*seeded)->modified_input();
    EXPECT_FALSE(modified);
    ASSERT_TRUE((*seeded)->redzone_violations());
    EXPECT_TRUE((*seeded)->redzone_violations()->empty());
  }
}

}  // namespace
}  // namespace ktune

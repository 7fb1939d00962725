// open_dispatcher over a `kernel.language: cuda` spec, on a GPU: the picks `ktune tune` stored
// are served on the caller's stream with the caller's device pointers, exact and nearest shapes
// alike (a launch's grid follows the sizes called with). Without a GPU: opening says what is
// missing.
#include <cuda.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/cuda_driver.h"
#include "gpu_stream_fixture.h"
#include "ktune/tuning/spec_dispatcher.h"
#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

// scale.cu (y = 2 x) with two block sizes and two items per thread, against scale_ref.cu.
constexpr const char* kSpec = R"yaml(name: scale_dispatch
kernel:
  language: cuda
  source: scale.cu
  entry: scale<{{B}}, {{I}}>
  launch:
    grid: [ceil_div(n, B * I)]
    block: [B]
args:
  - {name: y, role: out, dtype: f32, shape: [n]}
  - {name: x, role: in, dtype: f32, shape: [n]}
  - {name: count, role: scalar, dtype: i32, value: n}
problems:
  - {n: 300000}
params:
  B: [64, 256]
  I: [1, 4]
  FAULT: [0]
reference:
  kernel:
    source: scale_ref.cu
    entry: scale_ref
    launch: {grid: ["ceil_div(n, 256)"], block: [256]}
)yaml";

std::string copy_data(const std::filesystem::path& dir, const std::string& name) {
  std::ifstream in(data_path("cuda_spec/" + name));
  std::stringstream text;
  text << in.rdbuf();
  return write_text(dir, name, text.str());
}

class CudaDispatcherGpu : public GpuStreamTest {
 protected:
  // y = dispatcher(x) for the first n elements of buffers of `capacity`; what y holds after.
  std::vector<float> run(Dispatcher& d, std::int32_t n, const std::vector<float>& x) {
    const std::size_t capacity = x.size() * sizeof(float);
    CUdeviceptr dx = 0, dy = 0;
    EXPECT_EQ(cu_->MemAlloc(&dx, capacity), CUDA_SUCCESS);
    EXPECT_EQ(cu_->MemAlloc(&dy, capacity), CUDA_SUCCESS);
    EXPECT_EQ(cu_->MemcpyHtoD(dx, x.data(), capacity), CUDA_SUCCESS);
    EXPECT_EQ(cu_->MemsetD8(dy, 0, capacity), CUDA_SUCCESS);
    void* args[] = {reinterpret_cast<void*>(dy), reinterpret_cast<void*>(dx), &n};
    Status s = d.call({{"n", n}}, args);
    EXPECT_TRUE(s) << s.error().message;
    EXPECT_EQ(cu_->StreamSynchronize(stream_), CUDA_SUCCESS);
    std::vector<float> y(x.size());
    EXPECT_EQ(cu_->MemcpyDtoH(y.data(), dy, capacity), CUDA_SUCCESS);
    (void)cu_->MemFree(dx);
    (void)cu_->MemFree(dy);
    return y;
  }
};

TEST_F(CudaDispatcherGpu, ServesTheTunedPickOnTheCallersStreamAtExactAndNearestShapes) {
  ScratchDir cache("cuda-dispatch-cache"), dir("cuda-dispatch-spec");
  copy_data(dir.path(), "scale.cu");
  copy_data(dir.path(), "scale_ref.cu");
  const std::string spec = write_text(dir.path(), "scale.yaml", kSpec);
  CliResult tuned = run_cli(cache.path(), {"tune", spec, "--budget-ms", "5", "-q"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;

  DispatcherOptions options;
  options.cache_dir = cache.path();
  options.cuda_stream = stream_;
  auto d = open_dispatcher(spec, options);
  ASSERT_TRUE(d.has_value()) << d.error().message;
  auto exact = (*d)->lookup({{"n", 300000}});
  ASSERT_TRUE(exact.has_value()) << exact.error().message;
  EXPECT_EQ(exact->source, Dispatcher::Source::kExact);
  EXPECT_THAT(*exact->name, HasSubstr("scale_"));

  std::vector<float> x(300000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i % 97) - 3;
  std::vector<float> y = run(**d, 300000, x);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], 2 * x[i]) << "element " << i;

  // An untuned shape is served by the nearest pick with its own grid: every element of the
  // 1000 written, nothing past them.
  auto nearest = (*d)->lookup({{"n", 1000}});
  ASSERT_TRUE(nearest.has_value()) << nearest.error().message;
  EXPECT_EQ(nearest->source, Dispatcher::Source::kNearest);
  y = run(**d, 1000, x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(y[i], i < 1000 ? 2 * x[i] : 0.0f) << "element " << i;
  }
}

TEST(CudaDispatcher, OpeningWithoutAGpuSaysWhatIsMissing) {
  if (cuda_driver()) GTEST_SKIP() << "[SKIP] a GPU is present";
  ScratchDir cache("cuda-dispatch-cache"), dir("cuda-dispatch-spec");
  copy_data(dir.path(), "scale.cu");
  copy_data(dir.path(), "scale_ref.cu");
  const std::string spec = write_text(dir.path(), "scale.yaml", kSpec);
  DispatcherOptions options;
  options.cache_dir = cache.path();
  auto d = open_dispatcher(spec, options);
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().code, ErrorCode::kUnavailable) << d.error().message;
}

}  // namespace
}  // namespace ktune::test

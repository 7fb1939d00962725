// PLACEHOLDER (being written): the CUDA handler.
#include "ktune/device_handler.h"

namespace ktune {
namespace {
class CudaHandler final : public DeviceHandler {
 public:
  BenchmarkResponse handle(const BenchmarkRequest& request) override {
    BenchmarkResponse r;
    r.id = request.id;
    r.outcome = Outcome::kUnsupported;
    r.message = "CUDA handler not written yet";
    return r;
  }
};
}  // namespace
std::unique_ptr<DeviceHandler> make_cuda_handler() { return std::make_unique<CudaHandler>(); }
}  // namespace ktune

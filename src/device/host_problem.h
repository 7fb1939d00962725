// HostProblem: a DeviceProblem whose buffers are host memory (a ProblemBuffers): the checks read
// them where they are and nothing needs waiting for. The CPU device's problems are one; so are
// the fakes that tests drive the request flow with. A subclass says how to enqueue and time.
#pragma once

#include <utility>

#include "device/device.h"
#include "ktune/tensor/problem_buffers.h"

namespace ktune {

class HostProblem : public DeviceProblem {
 public:
  explicit HostProblem(ProblemBuffers buffers) : buffers_(std::move(buffers)), host_(buffers_) {}
  HostProblem(const HostProblem&) = delete;
  HostProblem& operator=(const HostProblem&) = delete;

  const Problem& problem() const override { return buffers_.problem(); }
  Status reset() override { return host_.reset(); }
  Status reset_outputs() override { return host_.reset_outputs(); }
  Status finish() override { return {}; }
  Result<std::vector<std::string>> redzone_violations() override {
    return host_.redzone_violations();
  }
  Result<std::optional<std::string>> modified_input() override { return host_.modified_input(); }
  Status read_outputs() override { return {}; }
  const std::byte* output(std::size_t arg) const override { return host_.output(arg); }

 protected:
  [[nodiscard]] ProblemBuffers& buffers() { return buffers_; }

 private:
  ProblemBuffers buffers_;
  HostCheckedBuffers host_;  // refers to buffers_
};

}  // namespace ktune

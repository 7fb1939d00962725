// ProblemBuffers: the host memory for one Problem: one HostBuffer per buffer argument (inputs
// filled from the seed, outputs poisoned), scalar values stored as their dtype, and the pristine
// copies needed to detect writes into inputs and to restart from the same state. Storage a view
// does not address (the gaps of a strided view, the prefix before its offset) holds the dtype's
// poison pattern in every buffer, inputs included, so that a write there is seen.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ktune/core/problem.h"
#include "ktune/core/status.h"
#include "ktune/tensor/host_buffer.h"
#include "ktune/tensor/tensor_fill.h"

namespace ktune {

// A scalar argument's value stored as its dtype, in the low bytes (what args() points at and a
// kernel parameter reads).
[[nodiscard]] std::uint64_t scalar_bits(const ProblemArg& arg);

class ProblemBuffers {
 public:
  // For problems whose data cannot fail to be made: every init but npy (an npy file that cannot
  // be read aborts here). Devices use try_create.
  [[nodiscard]] static ProblemBuffers create(const Problem& problem, std::uint64_t seed,
                                             DataSet set = DataSet::kUniform);
  // Fails when an npy init's file cannot be read, no longer has the problem's digest, or does
  // not fit its argument.
  [[nodiscard]] static Result<ProblemBuffers> try_create(const Problem& problem, std::uint64_t seed,
                                                         DataSet set = DataSet::kUniform);

  [[nodiscard]] const Problem& problem() const { return problem_; }
  // One pointer per argument, in signature order (Module::launch's layout); a buffer's pointer
  // is its view's first element (storage start + offset).
  [[nodiscard]] void* const* args() const { return args_.data(); }
  [[nodiscard]] const HostBuffer& buffer(std::size_t arg) const { return buffers_[arg]; }
  // Every buffer argument's data as (pointer, bytes): what a benchmark evicts before each run.
  [[nodiscard]] std::vector<std::pair<const void*, std::size_t>> data_ranges() const;

  // Outputs and scratch buffers poisoned, in-outs and inputs back to their seeded contents,
  // redzones refilled.
  void reset();
  // Only the outputs and scratch buffers poisoned and the in-outs back to their seeded contents:
  // what a timed run starts from (inputs are left as the last run left them, so that a write into
  // one stays visible to the next check).
  void reset_outputs();
  // Names of the arguments whose redzones changed, e.g. "C (after the end)".
  [[nodiscard]] std::vector<std::string> redzone_violations() const;
  // The first input argument whose bytes differ from the seeded contents, with where:
  // "A (storage element 17)".
  [[nodiscard]] std::optional<std::string> modified_input() const;

 private:
  explicit ProblemBuffers(Problem problem) : problem_(std::move(problem)) {}
  void point_args();
  Problem problem_;
  std::vector<HostBuffer> buffers_;     // by argument index; empty for scalars
  std::vector<HostBuffer> pristine_;    // seeded contents of in and inout arguments
  std::vector<std::uint64_t> scalars_;  // by argument index; the value's bytes
  std::vector<void*> args_;
};

}  // namespace ktune

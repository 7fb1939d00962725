// ProblemBuffers: allocation, seeding, reset and integrity checks for one problem's arguments.
#include "ktune/tensor/problem_buffers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/parallel_for.h"
#include "ktune/tensor/tensor_fill.h"
#include "tensor/npy.h"

namespace ktune {
std::uint64_t scalar_bits(const ProblemArg& arg) {
  std::uint64_t bits = 0;
  std::byte* p = reinterpret_cast<std::byte*>(&bits);
  const double v = std::holds_alternative<std::int64_t>(arg.scalar)
                       ? static_cast<double>(std::get<std::int64_t>(arg.scalar))
                       : std::get<double>(arg.scalar);
  if (arg.param.dtype == DType::kI64 && std::holds_alternative<std::int64_t>(arg.scalar)) {
    const std::int64_t i = std::get<std::int64_t>(arg.scalar);  // exact beyond 2^53
    std::memcpy(p, &i, sizeof i);
  } else {
    store_element(arg.param.dtype, p, v);
  }
  return bits;
}

namespace {

bool is_input(ArgRole role) { return role == ArgRole::kIn || role == ArgRole::kInOut; }

// Chunks of the memory sweeps below, in bytes: a few hundred microseconds of copying each, so
// that a thread's start costs little beside its share.
constexpr std::int64_t kSweepGrain = std::int64_t{4} << 20;

void copy_bytes(std::byte* to, const std::byte* from, std::size_t bytes) {
  parallel_for(static_cast<std::int64_t>(bytes), kSweepGrain,
               [&](std::int64_t b, std::int64_t e, int) {
                 std::memcpy(to + b, from + b, static_cast<std::size_t>(e - b));
               });
}

bool same_bytes(const std::byte* a, const std::byte* b, std::size_t bytes) {
  int chunks = parallel_chunks(static_cast<std::int64_t>(bytes), kSweepGrain);
  std::vector<char> differ(static_cast<std::size_t>(chunks), 0);
  parallel_for(static_cast<std::int64_t>(bytes), kSweepGrain,
               [&](std::int64_t from, std::int64_t to, int chunk) {
                 differ[static_cast<std::size_t>(chunk)] =
                     std::memcmp(a + from, b + from, static_cast<std::size_t>(to - from)) != 0;
               });
  return std::find(differ.begin(), differ.end(), 1) == differ.end();
}

}  // namespace

ProblemBuffers ProblemBuffers::create(const Problem& problem, std::uint64_t seed, DataSet set) {
  Result<ProblemBuffers> pb = try_create(problem, seed, set);
  KTUNE_CHECK(pb.has_value());
  return std::move(*pb);
}

Result<ProblemBuffers> ProblemBuffers::try_create(const Problem& problem, std::uint64_t seed,
                                                  DataSet set) {
  ProblemBuffers pb(problem);
  const std::size_t n = problem.args.size();
  pb.buffers_.resize(n);
  pb.pristine_.resize(n);
  pb.scalars_.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const ProblemArg& arg = problem.args[i];
    if (arg.param.role == ArgRole::kScalar) {
      pb.scalars_[i] = scalar_bits(arg);
      continue;
    }
    pb.buffers_[i] = HostBuffer::allocate(arg.tensor.storage_bytes());
    if (is_input(arg.param.role)) {
      // The gaps of the view keep the poison pattern (as outputs' do): defined bytes, the same
      // on every device, that a write into them changes.
      pb.buffers_[i].poison(arg.param.dtype);
      if (arg.init.kind == InitKind::kNpy) {
        // The user's data, the same on both data sets (verified twice on it).
        if (Status s = fill_from_npy(pb.buffers_[i], arg.tensor, arg.init); !s) {
          return std::unexpected(with_context(s.error(), fmt::format("input {}", arg.param.name)));
        }
      } else {
        fill_random(pb.buffers_[i], arg.tensor, argument_seed(seed, i, set), set, arg.init);
      }
      pb.pristine_[i] = pb.buffers_[i].clone();
    }
  }
  pb.reset();
  return pb;
}

void ProblemBuffers::point_args() {
  args_.assign(problem_.args.size(), nullptr);
  for (std::size_t i = 0; i < args_.size(); ++i) {
    const ProblemArg& a = problem_.args[i];
    // A buffer argument points at the view's first element, as in Inductor and BLAS.
    args_[i] =
        a.param.role == ArgRole::kScalar
            ? static_cast<void*>(&scalars_[i])
            : static_cast<void*>(buffers_[i].data() + a.tensor.offset * dtype_size(a.param.dtype));
  }
}

void ProblemBuffers::reset() {
  for (std::size_t i = 0; i < problem_.args.size(); ++i) {
    const ArgRole role = problem_.args[i].param.role;
    if (role == ArgRole::kScalar) continue;
    if (is_input(role)) {
      if (buffers_[i].bytes())
        copy_bytes(buffers_[i].data(), pristine_[i].data(), buffers_[i].bytes());
    } else {
      buffers_[i].poison(problem_.args[i].param.dtype);
    }
    buffers_[i].fill_redzones();
  }
  point_args();
}

void ProblemBuffers::reset_outputs() {
  for (std::size_t i = 0; i < problem_.args.size(); ++i) {
    const ArgRole role = problem_.args[i].param.role;
    if (role == ArgRole::kOut || role == ArgRole::kScratch) {
      buffers_[i].poison(problem_.args[i].param.dtype);
    }
    if (role == ArgRole::kInOut && buffers_[i].bytes()) {
      copy_bytes(buffers_[i].data(), pristine_[i].data(), buffers_[i].bytes());
    }
  }
}

std::vector<std::pair<const void*, std::size_t>> ProblemBuffers::data_ranges() const {
  std::vector<std::pair<const void*, std::size_t>> ranges;
  for (std::size_t i = 0; i < problem_.args.size(); ++i) {
    if (problem_.args[i].param.role != ArgRole::kScalar) {
      ranges.emplace_back(buffers_[i].data(), buffers_[i].bytes());
    }
  }
  return ranges;
}

std::vector<std::string> ProblemBuffers::redzone_violations() const {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < problem_.args.size(); ++i) {
    if (problem_.args[i].param.role == ArgRole::kScalar) continue;
    if (!buffers_[i].redzones_intact()) names.push_back(problem_.args[i].param.name);
  }
  return names;
}

std::optional<std::string> ProblemBuffers::modified_input() const {
  for (std::size_t i = 0; i < problem_.args.size(); ++i) {
    if (problem_.args[i].param.role != ArgRole::kIn || buffers_[i].bytes() == 0) continue;
    const std::byte* now = buffers_[i].data();
    const std::byte* seeded = pristine_[i].data();
    if (same_bytes(now, seeded, buffers_[i].bytes())) continue;
    const std::size_t size = dtype_size(problem_.args[i].param.dtype);
    std::size_t at = 0;
    while (now[at] == seeded[at]) ++at;
    return fmt::format("{} (storage element {})", problem_.args[i].param.name, at / size);
  }
  return std::nullopt;
}

}  // namespace ktune

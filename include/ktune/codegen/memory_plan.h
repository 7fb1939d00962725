// MemoryPlan: where each intermediate buffer of a straight-line program lives, and when it is
// allocated, reused and freed. Two planners:
//   kPool  Inductor's reuse pool (MemoryPlanningState in codegen/wrapper.py): a buffer freed
//          after its last use goes into a pool keyed by (device, dtype, storage bytes); a later
//          allocation with the same key takes the most recently freed one (ReuseLine); a freed
//          buffer that nobody reuses is really freed where it died (FreeIfNotReusedLine).
//   kArena lifetimes and offsets in one arena: the outputs first, at the bottom (when the call
//          returns, the arena is shrunk to them and handed to the caller), then the other
//          buffers largest first, each at the best-fitting gap (the smallest that fits) among
//          the placed buffers whose lifetimes overlap its own.
// Both report the peak bytes they hold and the lower bound: the largest total of live bytes at
// any step, which no planner without in-place reuse can beat.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/core/device.h"
#include "ktune/core/dtype.h"
#include "ktune/core/status.h"

namespace ktune::codegen {

enum class Planner { kPool, kArena };
[[nodiscard]] std::string_view planner_name(Planner planner);  // "pool", "arena"
[[nodiscard]] Result<Planner> parse_planner(std::string_view name);

// What a planner needs to know about a program: its buffers and, for each step (one kernel
// call), the buffer it writes and the buffers it reads. Program inputs are not planned (the
// caller owns them) and do not appear here.
struct PlanBuffer {
  std::string name;
  Device device;
  DType dtype = DType::kF32;
  std::size_t bytes = 0;   // storage bytes
  bool is_output = false;  // returned to the caller: live until the end, never freed
  // Storage the caller provides (the CUDA program's outputs): planned for lifetimes only, never
  // placed in the arena nor counted in its bounds. The CPU codegen has none.
  bool external = false;
};
struct PlanStep {
  std::size_t writes = 0;          // index into buffers; each buffer is written by one step
  std::vector<std::size_t> reads;  // indices into buffers
};
struct PlanInput {
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;
};

// One line of the planned program, in order (Inductor's MemoryPlanningLine kinds).
struct PlanLine {
  enum class Kind {
    kAllocate,  // a fresh allocation (pool) or a place in the arena
    kReuse,     // pool: takes over the storage of `from`, freed earlier
    kRun,       // step `step` runs
    kFree,      // pool: `buffer` is dead and nobody reused its storage
  };
  Kind kind = Kind::kRun;
  std::size_t buffer = 0;  // kAllocate, kReuse, kFree
  std::size_t from = 0;    // kReuse
  std::size_t step = 0;    // kRun
};

// Where a buffer's bytes are: allocation `block` (under kArena, block 0: the arena), bytes
// [offset, offset + bytes). Two buffers alive at the same step never share a
// byte.
struct BufferPlacement {
  std::size_t block = 0;
  std::size_t offset = 0;
  std::size_t bytes = 0;
  bool in_arena = false;
  std::size_t first_step = 0;  // the step that writes it
  std::size_t last_step = 0;   // the last step that reads it (the step count for outputs)
};

struct MemoryPlan {
  Planner planner = Planner::kPool;
  std::vector<BufferPlacement> placements;  // one per PlanInput::buffers
  std::vector<PlanLine> lines;
  std::size_t blocks = 0;              // allocations made (the arena counts as one)
  std::size_t arena_bytes = 0;         // kArena: size of the arena
  std::size_t arena_output_bytes = 0;  // kArena: the outputs' part, [0, arena_output_bytes)
  std::size_t peak_bytes = 0;          // most bytes held at once by the plan's allocations
  std::size_t lower_bound_bytes = 0;
};

// Offsets in the arena are multiples of this, for aligned vector loads.
inline constexpr std::size_t kArenaAlignment = 64;
// The CUDA codegen's: what cudaMalloc returns, so that every buffer is as aligned as its own
// allocation would be (cuBLASLt's and the templates' vector accesses).
inline constexpr std::size_t kCudaArenaAlignment = 256;

// kInvalidArgument when the input is inconsistent (a buffer written twice or never, a read of a
// buffer before the step that writes it, an index out of range). `alignment` (a power of two):
// the kArena offsets' multiple.
[[nodiscard]] Result<MemoryPlan> plan_memory(const PlanInput& input, Planner planner,
                                             std::size_t alignment = kArenaAlignment);

}  // namespace ktune::codegen

// The two memory planners (see memory_plan.h) and the lifetime analysis they share.
#include "ktune/codegen/memory_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

namespace ktune::codegen {
namespace {

std::size_t round_up(std::size_t bytes, std::size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

// First and last step of every buffer. A buffer nobody reads dies at the step that writes it;
// an output lives past the last step.
Result<std::vector<BufferPlacement>> lifetimes(const PlanInput& in) {
  const std::size_t n = in.buffers.size();
  std::vector<std::optional<std::size_t>> writer(n);
  std::vector<BufferPlacement> out(n);
  for (std::size_t s = 0; s < in.steps.size(); ++s) {
    const PlanStep& step = in.steps[s];
    if (step.writes >= n) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("memory plan: steps[{}] writes buffer {}; there are {}", s, step.writes, n));
    }
    if (writer[step.writes]) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("memory plan: buffer '{}' is written by steps {} and {}",
                                    in.buffers[step.writes].name, *writer[step.writes], s));
    }
    for (std::size_t r : step.reads) {
      if (r >= n || !writer[r]) {
        return make_error(
            ErrorCode::kInvalidArgument,
            fmt::format("memory plan: steps[{}] reads {} before any step writes it", s,
                        r < n ? "'" + in.buffers[r].name + "'" : fmt::format("buffer {}", r)));
      }
      out[r].last_step = std::max(out[r].last_step, s);
    }
    writer[step.writes] = s;
    out[step.writes].first_step = s;
    out[step.writes].last_step = s;
  }
  for (std::size_t b = 0; b < n; ++b) {
    if (!writer[b]) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("memory plan: no step writes buffer '{}'", in.buffers[b].name));
    }
    out[b].bytes = in.buffers[b].bytes;
    if (in.buffers[b].is_output) out[b].last_step = in.steps.size();
  }
  return out;
}

std::size_t lower_bound(const PlanInput& in, const std::vector<BufferPlacement>& p,
                        std::size_t steps) {
  std::size_t best = 0;
  for (std::size_t s = 0; s < steps; ++s) {
    std::size_t live = 0;
    for (std::size_t b = 0; b < p.size(); ++b) {
      if (!in.buffers[b].external && p[b].first_step <= s && s <= p[b].last_step) {
        live += p[b].bytes;
      }
    }
    best = std::max(best, live);
  }
  return best;
}

// Buffers dying after step s (outputs never die), in buffer order.
std::vector<std::vector<std::size_t>> deaths(const std::vector<BufferPlacement>& p,
                                             std::size_t steps) {
  std::vector<std::vector<std::size_t>> d(steps);
  for (std::size_t b = 0; b < p.size(); ++b) {
    if (p[b].last_step < steps) d[p[b].last_step].push_back(b);
  }
  return d;
}

// Inductor's reuse pool: AllocateLine.plan pops a freed buffer with the same key, and a
// FreeIfNotReusedLine that is popped emits nothing.
void plan_pool(const PlanInput& in, MemoryPlan& plan) {
  using Key = std::tuple<int, int, int, std::size_t>;  // device kind, index, dtype, bytes
  auto key = [&](std::size_t b) {
    const PlanBuffer& x = in.buffers[b];
    return Key{static_cast<int>(x.device.kind), x.device.index, static_cast<int>(x.dtype), x.bytes};
  };
  std::map<Key, std::vector<std::size_t>> pool;  // freed buffers, most recent last
  std::vector<std::size_t> free_line(in.buffers.size(), SIZE_MAX);  // index into plan.lines
  const auto dying = deaths(plan.placements, in.steps.size());
  for (std::size_t s = 0; s < in.steps.size(); ++s) {
    const std::size_t b = in.steps[s].writes;
    auto it = pool.find(key(b));
    if (it != pool.end() && !it->second.empty()) {
      const std::size_t old = it->second.back();
      it->second.pop_back();
      plan.lines[free_line[old]].kind = PlanLine::Kind::kRun;  // marked; removed below
      plan.lines[free_line[old]].step = SIZE_MAX;
      plan.placements[b].block = plan.placements[old].block;
      plan.lines.push_back({PlanLine::Kind::kReuse, b, old, 0});
    } else {
      plan.placements[b].block = plan.blocks++;
      plan.lines.push_back({PlanLine::Kind::kAllocate, b, 0, 0});
    }
    plan.lines.push_back({PlanLine::Kind::kRun, 0, 0, s});
    for (std::size_t d : dying[s]) {
      free_line[d] = plan.lines.size();
      plan.lines.push_back({PlanLine::Kind::kFree, d, 0, 0});
      pool[key(d)].push_back(d);
    }
  }
  std::erase_if(plan.lines, [](const PlanLine& l) {
    return l.kind == PlanLine::Kind::kRun && l.step == SIZE_MAX;
  });
  std::size_t held = 0;
  for (const PlanLine& l : plan.lines) {
    if (l.kind == PlanLine::Kind::kAllocate) held += plan.placements[l.buffer].bytes;
    if (l.kind == PlanLine::Kind::kFree) held -= plan.placements[l.buffer].bytes;
    plan.peak_bytes = std::max(plan.peak_bytes, held);
  }
}

// Outputs first, at the bottom of the arena in output order (so that the arena can be shrunk to
// them when the call returns), then greedy by size with best fit: each other buffer, largest
// first, goes into the smallest gap between the already placed buffers whose lifetimes overlap
// its own, or above all of them. An output's bytes serve other buffers before it is written.
void plan_arena(const PlanInput& in, MemoryPlan& plan, std::size_t alignment) {
  const auto aligned = [alignment](std::size_t bytes) { return round_up(bytes, alignment); };
  std::vector<BufferPlacement>& p = plan.placements;
  std::vector<std::size_t> placed;
  for (std::size_t b = 0; b < p.size(); ++b) {
    if (!in.buffers[b].is_output || in.buffers[b].external) continue;
    p[b].offset = plan.arena_output_bytes;
    p[b].in_arena = true;
    plan.arena_output_bytes += aligned(p[b].bytes);
    placed.push_back(b);
  }
  plan.arena_bytes = plan.arena_output_bytes;
  std::vector<std::size_t> order;
  for (std::size_t b = 0; b < p.size(); ++b) {
    if (!in.buffers[b].is_output && !in.buffers[b].external) order.push_back(b);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return aligned(p[a].bytes) > aligned(p[b].bytes);
  });
  for (std::size_t b : order) {
    const std::size_t size = aligned(p[b].bytes);
    std::vector<std::size_t> conflicts;
    for (std::size_t q : placed) {
      if (p[q].first_step <= p[b].last_step && p[b].first_step <= p[q].last_step) {
        conflicts.push_back(q);
      }
    }
    std::sort(conflicts.begin(), conflicts.end(),
              [&](std::size_t x, std::size_t y) { return p[x].offset < p[y].offset; });
    std::size_t end = 0, best = SIZE_MAX, best_gap = SIZE_MAX;
    for (std::size_t q : conflicts) {
      if (p[q].offset >= end) {
        const std::size_t gap = p[q].offset - end;
        if (gap >= size && gap < best_gap) {
          best = end;
          best_gap = gap;
        }
      }
      end = std::max(end, p[q].offset + aligned(p[q].bytes));
    }
    p[b].offset = best == SIZE_MAX ? end : best;
    p[b].in_arena = true;
    plan.arena_bytes = std::max(plan.arena_bytes, p[b].offset + size);
    placed.push_back(b);
  }
  plan.blocks = plan.arena_bytes > 0 ? 1 : 0;
  for (std::size_t s = 0; s < in.steps.size(); ++s) {
    plan.lines.push_back({PlanLine::Kind::kAllocate, in.steps[s].writes, 0, 0});
    plan.lines.push_back({PlanLine::Kind::kRun, 0, 0, s});
  }
  plan.peak_bytes = plan.arena_bytes;
}

}  // namespace

std::string_view planner_name(Planner planner) {
  return planner == Planner::kPool ? "pool" : "arena";
}

Result<Planner> parse_planner(std::string_view name) {
  if (name == "pool") return Planner::kPool;
  if (name == "arena") return Planner::kArena;
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("planner: unknown planner '{}'; expected pool or arena", name));
}

Result<MemoryPlan> plan_memory(const PlanInput& input, Planner planner, std::size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("memory plan: alignment {} is not a power of two", alignment));
  }
  auto placements = lifetimes(input);
  if (!placements) return std::unexpected(placements.error());
  MemoryPlan plan;
  plan.planner = planner;
  plan.placements = std::move(*placements);
  plan.lower_bound_bytes = lower_bound(input, plan.placements, input.steps.size());
  if (planner == Planner::kPool) {
    plan_pool(input, plan);
  } else {
    plan_arena(input, plan, alignment);
  }
  return plan;
}

}  // namespace ktune::codegen

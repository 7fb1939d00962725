// Memory planners: hand-checked plans, and a property test over seeded random graphs checking
// each plan against lifetimes computed here, independently of the planner: no two buffers live
// at the same step share a byte, every read follows the write and precedes any free or reuse,
// and the peak is at least the lower bound.
#include "ktune/codegen/memory_plan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "ktune/codegen/graph.h"
#include "ktune/codegen/wrapper_codegen.h"

namespace ktune::codegen {
namespace {

TensorSpec f32(std::vector<std::int64_t> sizes) {
  return TensorSpec::contiguous(DType::kF32, std::move(sizes));
}

// x -> relu -> relu -> relu -> relu (output), all 16 KiB: the pool reuses the first two.
Graph chain() {
  auto g = GraphBuilder("chain")
               .input("x", f32({64, 64}))
               .node("a", OpKind::kRelu, {"x"})
               .node("b", OpKind::kRelu, {"a"})
               .node("c", OpKind::kRelu, {"b"})
               .node("d", OpKind::kRelu, {"c"})
               .output("d")
               .build();
  KTUNE_CHECK(g.has_value());
  return *g;
}

TEST(MemoryPlan, PoolReusesFreedBuffersOfTheSameSize) {
  auto plan = plan_memory(plan_input(chain()), Planner::kPool);
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  using K = PlanLine::Kind;
  std::vector<K> kinds;
  for (const PlanLine& l : plan->lines) kinds.push_back(l.kind);
  // a, b fresh; a dies after step 1 and c takes it; b dies after step 2 and d takes it; c dies.
  EXPECT_EQ(kinds, (std::vector<K>{K::kAllocate, K::kRun, K::kAllocate, K::kRun, K::kReuse, K::kRun,
                                   K::kReuse, K::kRun, K::kFree}));
  EXPECT_EQ(plan->blocks, 2u);
  EXPECT_EQ(plan->peak_bytes, 2u * 16384);
  EXPECT_EQ(plan->lower_bound_bytes, 2u * 16384);
}

TEST(MemoryPlan, ArenaPacksBuffersOfDifferentSizes) {
  // a (32 KiB) dies before c (16 KiB) and d (16 KiB) are written: the arena puts both where a
  // was; the pool cannot reuse a for them (its key includes the size) and frees it instead.
  auto g = GraphBuilder("sizes")
               .input("x", f32({64, 64}))
               .input("w", f32({64, 128}))
               .input("v", f32({128, 64}))
               .node("a", OpKind::kGemm, {"x", "w"})
               .node("b", OpKind::kRelu, {"a"})
               .node("c", OpKind::kGemm, {"b", "v"})
               .node("d", OpKind::kRelu, {"c"})
               .node("e", OpKind::kRelu, {"d"})
               .output("e")
               .build();
  ASSERT_TRUE(g.has_value()) << g.error().message;
  auto pool = plan_memory(plan_input(*g), Planner::kPool);
  auto arena = plan_memory(plan_input(*g), Planner::kArena);
  ASSERT_TRUE(pool.has_value() && arena.has_value());
  EXPECT_EQ(arena->lower_bound_bytes, 65536u);
  EXPECT_EQ(pool->peak_bytes, 65536u);
  EXPECT_EQ(arena->peak_bytes, 65536u);
  EXPECT_EQ(arena->arena_output_bytes, 16384u);
  EXPECT_EQ(arena->placements[4].offset, 0u);  // the output, at the bottom
  // c (16 KiB) and d (16 KiB) where a (32 KiB) was: c under the output, which is written later.
  EXPECT_EQ(arena->placements[2].offset, 0u);
  EXPECT_EQ(arena->placements[3].offset, 16384u);
}

TEST(MemoryPlan, RejectsInconsistentInput) {
  PlanInput in;
  in.buffers = {{"a", {}, DType::kF32, 4, false}, {"b", {}, DType::kF32, 4, true}};
  in.steps = {{1, {0}}, {0, {}}};
  auto plan = plan_memory(in, Planner::kPool);
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().message, "memory plan: steps[0] reads 'a' before any step writes it");
  EXPECT_EQ(parse_planner("best").error().message,
            "planner: unknown planner 'best'; expected pool or arena");
}

// A random graph: a few inputs, then nodes that read earlier values (so that lifetimes
// overlap in varied ways), sizes drawn from a small set (so that the pool finds reuse).
Graph random_graph(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::int64_t dims[] = {8, 16, 32};
  GraphBuilder b("random");
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> values;
  b.input("x", f32({16, 16}));
  values.push_back({"x", {16, 16}});
  const std::size_t n = 4 + pick(20);
  int weights = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string name = fmt::format("n{}", i);
    // Recent values more often, so that chains and long-lived values both occur.
    const std::size_t from = values.size() - 1 - pick(std::min<std::size_t>(values.size(), 4));
    const auto [x, shape] = values[from];
    std::vector<std::int64_t> out = shape;
    switch (pick(5)) {
      case 0: {
        const std::string w = fmt::format("w{}", weights++);
        const std::int64_t cols = dims[pick(3)];
        b.input(w, f32({shape[1], cols}));
        b.node(name, OpKind::kGemm, {x, w});
        out = {shape[0], cols};
        break;
      }
      case 1: {
        std::string other = x;
        for (const auto& [v, s] : values) {
          if (s == shape && pick(2) == 0) other = v;
        }
        b.node(name, OpKind::kAdd, {x, other});
        break;
      }
      case 2:
        b.node(name, OpKind::kTranspose, {x});
        out = {shape[1], shape[0]};
        break;
      case 3:
        b.node(name, OpKind::kRowSoftmax, {x});
        break;
      default:
        b.node(name, OpKind::kRelu, {x});
    }
    values.push_back({name, out});
  }
  b.output(values.back().first);
  if (n > 6) b.output(fmt::format("n{}", pick(n - 1)));
  auto g = b.build();
  KTUNE_CHECK(g.has_value());
  return *g;
}

void check_plan(const Graph& g, const MemoryPlan& plan) {
  const std::size_t n = g.nodes.size();
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index[g.nodes[i].name] = i;
  std::vector<std::size_t> first(n), last(n);
  std::vector<bool> output(n);
  for (std::size_t i = 0; i < n; ++i) {
    first[i] = last[i] = i;
    for (const std::string& in : g.nodes[i].inputs) {
      if (index.contains(in)) last[index[in]] = std::max(last[index[in]], i);
    }
  }
  for (const std::string& o : g.outputs) output[index[o]] = true;
  std::size_t lower = 0;
  for (std::size_t s = 0; s < n; ++s) {
    std::size_t live = 0;
    for (std::size_t b = 0; b < n; ++b) {
      if (first[b] <= s && (s <= last[b] || output[b])) live += g.nodes[b].out.storage_bytes();
    }
    lower = std::max(lower, live);
  }
  EXPECT_EQ(plan.lower_bound_bytes, lower);
  EXPECT_GE(plan.peak_bytes, plan.lower_bound_bytes);

  // No two buffers alive at one step share a byte.
  ASSERT_EQ(plan.placements.size(), n);
  for (std::size_t a = 0; a < n; ++a) {
    const BufferPlacement& pa = plan.placements[a];
    EXPECT_GE(pa.bytes, g.nodes[a].out.storage_bytes());
    if (pa.in_arena) {
      EXPECT_EQ(pa.offset % kArenaAlignment, 0u);
      EXPECT_LE(pa.offset + pa.bytes, plan.arena_bytes);
    }
    for (std::size_t b = a + 1; b < n; ++b) {
      const BufferPlacement& pb = plan.placements[b];
      const std::size_t end_a = output[a] ? n : last[a], end_b = output[b] ? n : last[b];
      const bool live_together = first[a] <= end_b && first[b] <= end_a;
      const bool share = pa.block == pb.block && pa.in_arena == pb.in_arena &&
                         pa.offset < pb.offset + pb.bytes && pb.offset < pa.offset + pa.bytes;
      EXPECT_FALSE(live_together && share) << g.nodes[a].name << " and " << g.nodes[b].name
                                           << " overlap under " << planner_name(plan.planner);
    }
  }

  // Program order: each buffer gets storage once, before its step; reads follow writes; the
  // storage of a read buffer still belongs to it; frees and reuses come after the last read.
  std::vector<int> state(n, 0);  // 0 none, 1 allocated, 2 written, 3 dead (freed or reused)
  std::map<std::pair<bool, std::size_t>, std::size_t> owner;  // pool blocks only
  std::size_t next_step = 0;
  for (const PlanLine& l : plan.lines) {
    switch (l.kind) {
      case PlanLine::Kind::kAllocate:
        ASSERT_EQ(state[l.buffer], 0);
        state[l.buffer] = 1;
        if (!plan.placements[l.buffer].in_arena)
          owner[{false, plan.placements[l.buffer].block}] = l.buffer;
        break;
      case PlanLine::Kind::kReuse:
        ASSERT_EQ(state[l.buffer], 0);
        ASSERT_EQ(state[l.from], 3) << g.nodes[l.from].name << " reused while alive";
        ASSERT_EQ((owner[{false, plan.placements[l.from].block}]), l.from);
        owner[{false, plan.placements[l.buffer].block}] = l.buffer;
        state[l.buffer] = 1;
        break;
      case PlanLine::Kind::kRun: {
        ASSERT_EQ(l.step, next_step++);
        for (const std::string& in : g.nodes[l.step].inputs) {
          if (!index.contains(in)) continue;
          const std::size_t r = index[in];
          ASSERT_EQ(state[r], 2) << "step " << l.step << " reads " << in << " in state "
                                 << state[r];
          if (!plan.placements[r].in_arena) {
            ASSERT_EQ((owner[{false, plan.placements[r].block}]), r);
          }
        }
        ASSERT_EQ(state[l.step], 1);
        state[l.step] = 2;
        // Whatever dies at this step is dead from here on for the pool (free or reuse later).
        for (std::size_t b = 0; b < n; ++b) {
          if (!output[b] && last[b] == l.step && state[b] == 2 && plan.planner == Planner::kPool) {
            state[b] = 3;
          }
        }
        break;
      }
      case PlanLine::Kind::kFree:
        ASSERT_FALSE(output[l.buffer]);
        ASSERT_EQ(state[l.buffer], 3);
        break;
    }
  }
  EXPECT_EQ(next_step, n);
}

TEST(MemoryPlanProperty, RandomGraphsBothPlanners) {
  std::size_t pool_total = 0, arena_total = 0, lower_total = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const Graph g = random_graph(seed);
    for (Planner p : {Planner::kPool, Planner::kArena}) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << ", " << planner_name(p));
      auto plan = plan_memory(plan_input(g), p);
      ASSERT_TRUE(plan.has_value()) << plan.error().message;
      check_plan(g, *plan);
      (p == Planner::kPool ? pool_total : arena_total) += plan->peak_bytes;
      if (p == Planner::kPool) lower_total += plan->lower_bound_bytes;
    }
  }
  // Not a property of every graph, but of the set: best fit over lifetimes beats the pool.
  EXPECT_LT(arena_total, pool_total);
  EXPECT_GE(arena_total, lower_total);
}

}  // namespace
}  // namespace ktune::codegen

// Peak bytes of the two memory planners against the lower bound (the most bytes live at any
// step), on graph files given as arguments and on seeded random graphs. Prints markdown tables.
// Usage: memory_plan [--random N] [--seed S] GRAPH...
#include "ktune/codegen/memory_plan.h"

#include <fmt/format.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "ktune/codegen/graph.h"
#include "ktune/codegen/wrapper_codegen.h"

namespace {

using namespace ktune;
using namespace ktune::codegen;

TensorSpec f32(std::vector<std::int64_t> sizes) {
  return TensorSpec::contiguous(DType::kF32, std::move(sizes));
}

// A random straight-line graph of 8 to 40 nodes: gemms with fresh weights (changing widths),
// element-wise ops, residual adds of earlier values of the same shape, transposes and softmaxes;
// each node reads one of the last four values; one to three outputs.
Graph random_graph(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::int64_t dims[] = {32, 64, 128, 256};
  GraphBuilder b(fmt::format("random{}", seed));
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> values = {{"x", {64, 64}}};
  b.input("x", f32({64, 64}));
  const std::size_t n = 8 + pick(33);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string name = fmt::format("n{}", i);
    const auto [x, shape] =
        values[values.size() - 1 - pick(std::min<std::size_t>(values.size(), 4))];
    std::vector<std::int64_t> out = shape;
    switch (pick(6)) {
      case 0:
      case 1: {
        const std::string w = fmt::format("w{}", i);
        const std::int64_t cols = dims[pick(4)];
        b.input(w, f32({shape[1], cols}));
        b.node(name, OpKind::kGemm, {x, w});
        out = {shape[0], cols};
        break;
      }
      case 2: {
        std::string other = x;
        for (const auto& [v, s] : values) {
          if (s == shape && pick(3) == 0) other = v;
        }
        b.node(name, OpKind::kAdd, {x, other});
        break;
      }
      case 3:
        b.node(name, OpKind::kTranspose, {x});
        out = {shape[1], shape[0]};
        break;
      case 4:
        b.node(name, OpKind::kRowSoftmax, {x});
        break;
      default:
        b.node(name, OpKind::kGelu, {x});
    }
    values.push_back({name, out});
  }
  b.output(values.back().first);
  for (std::size_t extra = pick(3); extra > 0; --extra) {
    const std::string o = fmt::format("n{}", pick(n - 1));
    b.output(o);  // a duplicate is caught by build(); retried below
  }
  auto g = b.build();
  if (!g) return random_graph(seed + 1'000'003);  // duplicate output drawn: another graph
  return *g;
}

struct Row {
  std::size_t lower = 0, pool = 0, arena = 0;
};

Row measure(const Graph& g) {
  Row r;
  auto pool = plan_memory(plan_input(g), Planner::kPool);
  auto arena = plan_memory(plan_input(g), Planner::kArena);
  if (!pool || !arena) {
    fmt::print(stderr, "error: {}\n", (!pool ? pool : arena).error().message);
    std::exit(1);
  }
  r.lower = pool->lower_bound_bytes;
  r.pool = pool->peak_bytes;
  r.arena = arena->peak_bytes;
  return r;
}

std::string kib(std::size_t bytes) { return fmt::format("{:.1f}", bytes / 1024.0); }
std::string ratio(std::size_t a, std::size_t b) { return fmt::format("{:.3f}", double(a) / b); }

}  // namespace

int main(int argc, char** argv) {
  int random = 100;
  std::uint64_t seed = 1;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--random" && i + 1 < argc) {
      random = std::atoi(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      files.push_back(a);
    }
  }
  fmt::print(
      "| graph | steps | lower bound KiB | pool KiB | arena KiB | pool / bound | arena / bound "
      "|\n");
  fmt::print("|---|---|---|---|---|---|---|\n");
  for (const std::string& f : files) {
    auto g = load_graph(f);
    if (!g) {
      fmt::print(stderr, "error: {}\n", g.error().message);
      return 1;
    }
    const Row r = measure(*g);
    fmt::print("| {} | {} | {} | {} | {} | {} | {} |\n", g->name, g->nodes.size(), kib(r.lower),
               kib(r.pool), kib(r.arena), ratio(r.pool, r.lower), ratio(r.arena, r.lower));
  }
  if (random <= 0) return 0;
  Row total;
  double pool_worst = 1, arena_worst = 1;
  int arena_wins = 0, ties = 0, pool_wins = 0, pool_at_bound = 0, arena_at_bound = 0;
  for (int i = 0; i < random; ++i) {
    const Row r = measure(random_graph(seed + i));
    total.lower += r.lower;
    total.pool += r.pool;
    total.arena += r.arena;
    pool_worst = std::max(pool_worst, double(r.pool) / r.lower);
    arena_worst = std::max(arena_worst, double(r.arena) / r.lower);
    arena_wins += r.arena < r.pool;
    ties += r.arena == r.pool;
    pool_wins += r.pool < r.arena;
    pool_at_bound += r.pool == r.lower;
    arena_at_bound += r.arena == r.lower;
  }
  fmt::print("| {} random graphs (seeds {}..{}), sum | | {} | {} | {} | {} | {} |\n", random, seed,
             seed + random - 1, kib(total.lower), kib(total.pool), kib(total.arena),
             ratio(total.pool, total.lower), ratio(total.arena, total.lower));
  fmt::print(
      "\nRandom graphs: worst peak / bound {:.3f} (pool), {:.3f} (arena); at the bound: "
      "{} (pool), {} (arena); arena smaller on {}, equal on {}, larger on {}.\n",
      pool_worst, arena_worst, pool_at_bound, arena_at_bound, arena_wins, ties, pool_wins);
  return 0;
}

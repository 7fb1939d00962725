// Run-time dispatch in a program that links only ktune::runtime: no spec parser, tuning cache,
// compiler or worker. The shapes were tuned ahead by
//   ktune tune matmul.yaml --dispatch-table matmul.dispatch.json
// which leaves the picks and their shared objects (in ktune's code cache) in a dispatch table;
// this program serves calls from it: tuned shapes by their pick, other shapes by the nearest
// tuned one (the default when nothing is tuned). Usage: runtime_dispatch TABLE. Exits 1 when a
// result is wrong or anything fails.
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "ktune/runtime/dispatcher.h"

namespace {

using namespace ktune;

int fail(const Error& e) {
  std::fprintf(stderr, "error: %s\n", e.message.c_str());
  return 1;
}

// One call through the dispatcher on random data, checked against a naive loop.
Status serve(Dispatcher& d, int m, int n, int k) {
  std::vector<float> a(m * k), b(k * n), c(m * n);
  std::mt19937 rng(m * 31 + n * 7 + k);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  const Sizes sizes = {{"M", m}, {"N", n}, {"K", k}};
  auto served = d.lookup(sizes);
  if (!served) return std::unexpected(served.error());
  std::printf("M=%-3d N=%-3d K=%-3d -> %-14s (%s)\n", m, n, k, served->name->c_str(),
              dispatch_source_name(served->source));
  void* args[] = {c.data(), a.data(), b.data(), &m, &n, &k};
  if (Status s = d.call(sizes, args); !s) return s;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int p = 0; p < k; ++p) want += double(a[i * k + p]) * b[p * n + j];
      if (std::fabs(c[i * n + j] - want) > 1e-4 * (1 + std::fabs(want))) {
        char what[160];
        std::snprintf(what, sizeof what, "C[%d,%d] = %g; expected %g", i, j, c[i * n + j], want);
        return make_error(ErrorCode::kInternal, what);
      }
    }
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: runtime_dispatch TABLE (from ktune tune --dispatch-table)\n");
    return 2;
  }
  auto dispatcher = Dispatcher::open_table(argv[1]);
  if (!dispatcher) return fail(dispatcher.error());
  Dispatcher& d = **dispatcher;
  // The spec's two problems (exact, unless a library call won: the table holds generated code
  // only), then two shapes never tuned, served by the nearest tuned shape.
  for (auto [m, n, k] : {std::array{64, 64, 64}, {4, 256, 128}, {48, 80, 64}, {8, 200, 100}}) {
    if (Status s = serve(d, m, n, k); !s) return fail(s.error());
  }
  auto served = d.lookup(Sizes{{"M", 48}, {"N", 80}, {"K", 64}});
  if (!served || served->source == Dispatcher::Source::kExact) {
    std::fprintf(stderr, "error: M=48 N=80 K=64 was never tuned, yet is served as exact\n");
    return 1;
  }
  std::printf("runtime_dispatch: all results correct\n");
  return 0;
}

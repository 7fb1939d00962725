// pick_cuda_gemms: each gemm of a graph (with its fusible chain as the epilogue) tuned as one
// CUDA GEMM problem; the winner kept as its LaunchSpec for the CUDA emitter.
#include "ktune/codegen/cuda_gemm_picks.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "core/trace.h"
#include "ktune/codegen/graph_fusion.h"
#include "ktune/tuning/cuda_gemm_tuning.h"

namespace ktune::codegen {
namespace {

// K of a gemm node: the columns of its A.
std::int64_t inner_size(const Graph& g, const GraphNode& n) {
  for (const GraphInput& in : g.inputs) {
    if (in.name == n.inputs[0]) return in.spec.sizes[1];
  }
  for (const GraphNode& m : g.nodes) {
    if (m.name == n.inputs[0]) return m.out.sizes[1];
  }
  return 0;
}

// The candidate that --force-pick names in `t` (see CudaPickOptions::force).
Result<std::size_t> forced_index(const CudaGemmTuning& t, const CudaGemmTuning& plain,
                                 const std::string& name) {
  auto by_name = [](const std::vector<ChoicePtr>& cs,
                    const std::string& n) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < cs.size(); ++i) {
      if (cs[i]->name() == n) return i;
    }
    return std::nullopt;
  };
  if (auto i = by_name(t.candidates, name)) return *i;
  if (auto i = by_name(t.candidates, name + "+epilogue")) return *i;
  // A template config: its twin with the epilogue is the one with the same parameters in the
  // template of the same family.
  if (auto i = by_name(plain.candidates, name);
      i && plain.candidates[*i]->kind() == Choice::Kind::kTemplate) {
    const auto params = plain.candidates[*i]->params();
    const std::string family = name.substr(0, name.find('_', std::string("cuda_gemm_").size()));
    for (std::size_t j = 0; j < t.candidates.size(); ++j) {
      const Choice& c = *t.candidates[j];
      if (c.kind() == Choice::Kind::kTemplate && c.name().starts_with(family) &&
          c.params() == params) {
        return j;
      }
    }
  }
  std::vector<std::string> some;
  for (std::size_t i = 0; i < plain.candidates.size() && some.size() < 6; ++i) {
    some.push_back(plain.candidates[i]->name());
  }
  return make_error(ErrorCode::kNotFound,
                    fmt::format("--force-pick: no candidate '{}' for {}; candidates include {}",
                                name, t.problem.name, fmt::join(some, ", ")));
}

// Why the winner: against the fastest library GEMM followed by the separate epilogue kernel.
std::string why_of(const TuningRecord& record, const std::string& winner) {
  const CandidateRecord* pair = nullptr;
  const CandidateRecord* won = nullptr;
  for (const CandidateRecord& c : record.candidates) {
    if (c.outcome != Outcome::kOk || !c.stats || c.stats->median_ns <= 0) continue;
    if (c.name == winner) won = &c;
    if (c.name.ends_with("+epilogue") && (!pair || c.stats->median_ns < pair->stats->median_ns)) {
      pair = &c;
    }
  }
  if (!won || !pair) return winner + " won";
  if (pair == won) return winner + " won (a library GEMM, then the separate epilogue kernel)";
  return fmt::format("{} won, {:.2f}x the best library+epilogue pair ({})", winner,
                     pair->stats->median_ns / won->stats->median_ns, pair->name);
}

// The candidates of a graph's later problems compiled in the background while the first ones are
// measured, into the code cache (where the selector's own compiles then find them, or wait for
// them: CudaBackend's compiles are one per key at a time). Its threads run at a lower priority, so
// that the problem being tuned compiles first. Stops between compiles when destroyed.
class Prefetch {
 public:
  Prefetch(const CudaBackend& backend, std::vector<CudaGemmTuning> later, unsigned threads)
      : later_(std::move(later)) {
    for (CudaGemmTuning& t : later_) {
      for (ChoicePtr& c : t.candidates) queue_.push_back(c.get());
    }
    threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(queue_.size())));
    for (unsigned i = 0; i < threads && !queue_.empty(); ++i) {
      threads_.emplace_back([this, &backend] {
        // This thread only (Linux: a thread's own nice value), below the selector's compiles.
        (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
        for (;;) {
          Choice* c = nullptr;
          {
            std::lock_guard<std::mutex> lock(mu_);
            if (stop_ || next_ >= queue_.size()) return;
            c = queue_[next_++];
          }
          trace::Span span("prefetch", "compile", c->name());
          (void)c->compile(backend);  // a failure is the selector's to report, when it compiles
        }
      });
    }
  }
  ~Prefetch() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    for (std::thread& t : threads_) t.join();
  }
  Prefetch(const Prefetch&) = delete;
  Prefetch& operator=(const Prefetch&) = delete;

 private:
  std::vector<CudaGemmTuning> later_;  // owns the candidates in queue_
  std::vector<Choice*> queue_;
  std::mutex mu_;
  std::size_t next_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

void report(std::FILE* f, const std::string& line) {
  if (f == nullptr) return;
  std::fputs(("ktune: " + line + "\n").c_str(), f);
  std::fflush(f);
}

}  // namespace

Result<std::map<std::string, GemmPick>> pick_cuda_gemms(const Graph& graph,
                                                        const CudaBackend& backend,
                                                        TuningCache& cache,
                                                        const SelectorOptions& base,
                                                        const CudaPickOptions& options) {
  std::vector<FusionChain> chains;
  if (options.fuse) chains = find_fusions(graph);
  std::map<std::size_t, const FusionChain*> chain_of;  // by the gemm's node index
  for (const FusionChain& c : chains) chain_of.emplace(c.gemm, &c);

  // Each gemm node's request: its problem with its fusible chain as the epilogue.
  const auto request_of = [&](std::size_t i) {
    const GraphNode& n = graph.nodes[i];
    CudaGemmRequest request;
    request.m = n.out.sizes[0];
    request.n = n.out.sizes[1];
    request.k = inner_size(graph, n);
    request.dtype = n.out.dtype;
    if (auto c = chain_of.find(i); c != chain_of.end()) request.epilogue = c->second->epilogue;
    request.device = options.device;
    request.cublaslt_algos = options.cublaslt_algos;
    return request;
  };
  // One selector for every problem, so that they share its worker: the GPU context, cuBLAS and
  // the checking kernels are set up once, not once per problem. Its worker starts on the first
  // tuning.
  std::optional<Selector> selector;
  // The distinct problems after the first that the tuning cache cannot answer, compiled in the
  // background while the first ones are tuned (their own copies of the candidates: the
  // selector's are compiled by the selector).
  std::optional<Prefetch> prefetch;
  if (!options.force) {
    std::vector<CudaGemmTuning> later;
    std::set<std::string> keys;
    for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
      if (graph.nodes[i].op != OpKind::kGemm) continue;
      CudaGemmTuning t = cuda_gemm_tuning(backend, request_of(i), base);
      if (!selector) selector.emplace(backend, cache, t.options);
      if (!keys.insert(t.problem.key()).second || keys.size() == 1) continue;
      auto hit =
          cache.lookup(selector->key_for(t.problem, t.candidates, t.reference.get(), t.options));
      if (hit && hit->has_value()) continue;
      std::erase_if(t.candidates, [&](const ChoicePtr& c) { return !c->supports(t.problem); });
      later.push_back(std::move(t));
    }
    if (!later.empty()) {
      const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
      prefetch.emplace(backend, std::move(later), std::max(1u, cores / 2));
    }
  }

  std::map<std::string, GemmPick> picks;
  std::map<std::string, GemmPick> by_problem;  // each distinct problem is tuned once
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const GraphNode& n = graph.nodes[i];
    if (n.op != OpKind::kGemm) continue;
    const FusionChain* chain = nullptr;
    if (auto c = chain_of.find(i); c != chain_of.end()) chain = c->second;
    const CudaGemmRequest request = request_of(i);
    CudaGemmTuning t = cuda_gemm_tuning(backend, request, base);
    const std::string where = fmt::format("{}: gemm '{}'", graph.file.string(), n.name);
    if (t.candidates.empty()) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: no CUDA GEMM candidates for {}", where, t.problem.name));
    }
    const std::string key = t.problem.key();
    auto it = by_problem.find(key);
    if (it == by_problem.end()) {
      std::size_t index = 0;
      bool from_cache = false;
      std::string why = "forced";
      if (options.force) {
        CudaGemmRequest unfused = request;
        unfused.epilogue = Epilogue();
        const CudaGemmTuning plain = cuda_gemm_tuning(backend, unfused, base);
        auto forced = forced_index(t, plain, *options.force);
        if (!forced) return make_error(forced.error().code, where + ": " + forced.error().message);
        index = *forced;
      } else {
        if (!selector) selector.emplace(backend, cache, t.options);
        auto sel = selector->select(t.problem, t.candidates, t.reference.get(), t.options);
        if (!sel) return make_error(sel.error().code, where + ": " + sel.error().message);
        index = sel->winner_index;
        from_cache = sel->from_cache;
        why = why_of(sel->record, t.candidates[index]->name());
      }
      Choice& winner = *t.candidates[index];
      // A code-cache hit after tuning; the first compile when forced or answered by the cache.
      if (Status s = winner.compile(backend); !s) {
        return make_error(s.error().code, fmt::format("{}: compiling the pick {}: {}", where,
                                                      winner.name(), s.error().message));
      }
      auto launch = winner.launch_spec(t.problem);
      if (!launch) {
        return make_error(launch.error().code, fmt::format("{}: the launch of {}: {}", where,
                                                           winner.name(), launch.error().message));
      }
      GemmPick pick;
      pick.choice = winner.name();
      pick.info = winner.info();
      pick.is_extern = winner.kind() == Choice::Kind::kExtern;
      pick.from_cache = from_cache;
      pick.launch = std::move(*launch);
      pick.epilogue = request.epilogue;
      pick.fusion = why;
      it = by_problem.emplace(key, std::move(pick)).first;
    }
    GemmPick pick = it->second;
    if (chain != nullptr) {
      pick.epilogue = chain->epilogue;
      for (std::size_t k : chain->nodes) pick.fused.push_back(graph.nodes[k].name);
      pick.epilogue_args = chain->operands;
      pick.chain = chain->label(graph);
    }
    report(options.progress, fmt::format("{}: {} ({})", pick.chain.empty() ? n.name : pick.chain,
                                         pick.choice, pick.fusion));
    picks.emplace(n.name, std::move(pick));
  }
  return picks;
}

}  // namespace ktune::codegen

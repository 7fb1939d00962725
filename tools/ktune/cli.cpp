// What the subcommands share (cli.h).
#include "cli.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <mutex>

#include "core/thread_pool.h"
#include "ktune/cache/cache_url.h"
#include "ktune/tuning/open_cache.h"
#include "ktune/tuning/tune_spec.h"

namespace ktune::cli {

bool prepare_cache_dir(const CliContext& ctx) {
  Status s = ktune::prepare_cache_dir(ctx.cache_dir, ctx.allow_shared_cache_dir,
                                      [](const std::string& why) {
                                        fmt::print(stderr,
                                                   "ktune: warning: code cache: {} (allowed by "
                                                   "--allow-shared-cache-dir)\n",
                                                   why);
                                      });
  if (!s) {
    fmt::print(stderr,
               "error: code cache: {}: others could replace the kernels ktune runs; make it "
               "yours alone (chown, chmod go-w), choose another --cache-dir, or pass "
               "--allow-shared-cache-dir\n",
               s.error().message);
    return false;
  }
  return true;
}

std::unique_ptr<TuningCache> open_sqlite_in(const CliContext& ctx) {
  if (!prepare_cache_dir(ctx)) return nullptr;
  auto opened = open_sqlite_cache(ctx.cache_dir, ctx.allow_shared_cache_dir);
  if (!opened) {
    fmt::print(stderr, "error: {}\n", opened.error().message);
    return nullptr;
  }
  return std::move(*opened);
}

std::unique_ptr<TuningCache> open_cache_in(const CliContext& ctx) {
  if (ctx.cache_url.empty()) return open_sqlite_in(ctx);
  if (!prepare_cache_dir(ctx)) return nullptr;
  auto opened = open_cache_at({ctx.cache_dir, ctx.cache_url, ctx.allow_shared_cache_dir});
  if (!opened) {
    fmt::print(stderr, "error: {}\n", opened.error().message);
    return nullptr;
  }
  ctx.cache_in_use = opened->location;
  return std::move(opened->cache);
}

std::string cache_location(const CliContext& ctx) {
  if (!ctx.cache_in_use.empty()) return ctx.cache_in_use;
  if (ctx.cache_url.empty()) return ctx.cache_dir.string();
  auto url = parse_cache_url(ctx.cache_url);
  return url ? url->display() : ctx.cache_url;
}

std::string check_cache_url(const std::string& url) {
  auto parsed = parse_cache_url(url);
  return parsed ? std::string() : parsed.error().message;
}

std::unique_ptr<TuningCache> open_tuning_cache(bool no_cache, const CliContext& ctx) {
  if (!no_cache) return open_cache_in(ctx);
  // The code cache is used all the same.
  if (!prepare_cache_dir(ctx)) return nullptr;
  return make_memory_cache();
}

CompileCounts compile_choices(const Backend& backend, std::vector<ChoicePtr>& choices,
                              unsigned jobs, const std::function<bool(const Choice&)>& wanted) {
  std::atomic<int> compiled = 0, failed = 0;
  std::mutex print;
  ThreadPool pool(jobs);
  for (ChoicePtr& c : choices) {
    if (wanted && !wanted(*c)) continue;
    pool.submit([&c, &backend, &compiled, &failed, &print] {
      if (Status s = c->compile(backend); !s) {
        std::lock_guard lock(print);
        fmt::print(stderr, "error: {}: {}\n", c->name(), s.error().message);
        ++failed;
      } else {
        ++compiled;
      }
    });
  }
  pool.wait_idle();
  return {compiled.load(), failed.load()};
}

}  // namespace ktune::cli

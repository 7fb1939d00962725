// The batch runners of search_batch.h.
#include "select/search_batch.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "core/thread_pool.h"

namespace ktune::search_batch {
namespace {

std::size_t alive_count(const std::vector<CandidateRecord>& records,
                        const std::vector<std::size_t>& batch) {
  return static_cast<std::size_t>(std::count_if(batch.begin(), batch.end(), [&](std::size_t i) {
    return records[i].outcome == Outcome::kOk;
  }));
}

// The candidates `next` hands out, run on every device of the runner at once (until the search
// is out of time); then counted as evaluated and told to the strategy in `proposed` order (a
// resumed candidate there replayed), so that the strategy learns the same sequence whatever the
// number of devices.
void run_spread(Search& s, RunOne& one, const std::vector<std::size_t>& proposed,
                const std::function<std::optional<std::size_t>()>& next) {
  const std::vector<std::size_t> taken =
      spread_over_devices(one, s.runner.devices(), next, [&] { return s.out_of_time(); });
  std::vector<char> ran(s.records.size(), 0);
  for (std::size_t i : taken) ran[i] = 1;
  for (std::size_t i : proposed) {
    if (s.is_resumed(i)) {
      s.replay(i);
    } else if (ran[i]) {
      s.evaluated[i] = 1;
      s.measured.push_back(i);
      ++s.run.evaluated;
      s.tell(i, s.records[i].outcome == Outcome::kOk);
    }
  }
}

}  // namespace

// Without overlap: the batch compiled, then run in the order proposed.
Status run_batch(Search& s, const Backend& backend, Choice* reference,
                 const std::vector<std::size_t>& batch) {
  // todo: supported or resumed, in the order proposed (the unsupported cost nothing and do not
  // count); fresh: the batch less the resumed, to compile.
  std::vector<std::size_t> todo, fresh;
  for (std::size_t i : batch) {
    if (s.is_resumed(i)) {
      todo.push_back(i);
      continue;
    }
    fresh.push_back(i);
    if (s.records[i].outcome == Outcome::kOk) {
      todo.push_back(i);
    } else {
      s.strategy.observe(i, std::nullopt);
    }
  }
  const auto t0 = Clock::now();
  if (Status c = compile_subset(s.ctx, backend, s.prepared ? nullptr : reference, s.records, fresh);
      !c) {
    return c;
  }
  s.run.compile_s += seconds_since(t0);
  const auto t1 = Clock::now();
  if (Status p = s.prepare(reference); !p) return p;
  // A batch of resumed candidates only has nothing to verify or measure, and no line saying so.
  std::optional<RunOne> one;
  if (std::any_of(todo.begin(), todo.end(), [&](std::size_t i) { return !s.is_resumed(i); })) {
    one.emplace(s.ctx, s.runner, /*measure=*/true, s.records, s.stand_in,
                alive_count(s.records, fresh));
  }
  if (one && s.runner.devices() > 1) {
    // Several devices: the candidates to run handed out in the order proposed.
    std::vector<std::size_t> spread;
    for (std::size_t i : todo) {
      if (!s.is_resumed(i)) spread.push_back(i);
    }
    std::size_t k = 0;
    run_spread(s, *one, todo, [&]() -> std::optional<std::size_t> {
      if (k == spread.size()) return std::nullopt;
      return spread[k++];
    });
    s.run.measure_s += seconds_since(t1);
    return {};
  }
  for (std::size_t i : todo) {
    if (s.is_resumed(i)) {
      s.replay(i);
    } else {
      if (s.out_of_time()) break;
      s.finish(*one, i);
    }
  }
  s.run.measure_s += seconds_since(t1);
  return {};
}

// With overlap: compile tasks hand finished candidates to this thread, which measures them as
// they come; library choices (nothing to compile) first.
Status run_batch_overlapped(Search& s, const Backend& backend, Choice* reference,
                            const std::vector<std::size_t>& batch) {
  const auto t0 = Clock::now();
  const SelectContext& ctx = s.ctx;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::size_t> ready;  // compiled, in completion order
  std::vector<char> compiled(s.records.size(), 0);
  std::optional<Status> ref_status;
  std::atomic<bool> stop{false};
  // Library choices (cuBLAS, cuBLASLt) first: they compile in no time (or one small pass), so
  // they are measured while the templates compile. Without a reference the first candidate to
  // pass stands in for it, and is taken in the order proposed, so that it is the same one as
  // without overlap.
  const bool in_order = s.stand_in != nullptr;
  std::vector<std::size_t> order, templates;
  for (std::size_t i : batch) {
    if (s.is_resumed(i)) {
      s.replay(i);  // nothing to compile or measure
    } else if (s.records[i].outcome != Outcome::kOk) {
      s.strategy.observe(i, std::nullopt);  // unsupported: nothing evaluated, nothing counted
    } else {
      const bool library = !in_order && ctx.candidates[i]->kind() == Choice::Kind::kExtern;
      (library ? order : templates).push_back(i);
    }
  }
  order.insert(order.end(), templates.begin(), templates.end());
  Status result;
  {
    ThreadPool pool(ctx.options.jobs);
    // A terminal has one live line, and the measuring line below would end this one at once
    // ("compiled 0/N"): there, measuring's line is the one shown. Plain lines interleave.
    std::FILE* progress_to = ctx.options.progress;
    if (progress_to && ProgressDisplay::detect(progress_to).tty) progress_to = nullptr;
    ProgressLine progress(
        progress_to, {.title = ctx.title,
                      .header = fmt::format("{}: compiling {} candidates on {} threads", ctx.title,
                                            order.size(), pool.size()),
                      .doing = fmt::format("compiling on {} threads", pool.size()),
                      .done_word = "compiled",
                      .total = order.size()});
    const bool with_reference = reference && !s.prepared;
    if (with_reference) {
      pool.submit([&] {
        Status st = reference->compile(backend);
        const std::lock_guard lock(mu);
        ref_status = std::move(st);
        cv.notify_all();
      });
    }
    for (std::size_t i : order) {
      pool.submit([&, i] {
        // Past the time limit, what is still queued is left uncompiled (not evaluated).
        if (!stop) progress.step(!compile_candidate(ctx, backend, i, s.records[i]));
        const std::lock_guard lock(mu);
        ready.push_back(i);
        compiled[i] = 1;
        cv.notify_all();
      });
    }
    if (with_reference) {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return ref_status.has_value(); });
      result = reference_compile_status(ctx, *reference, *ref_status);
    }
    const auto t1 = Clock::now();
    if (result) result = s.prepare(reference);
    if (result && !order.empty()) {  // empty: resumed candidates only, nothing to measure
      RunOne one(ctx, s.runner, /*measure=*/true, s.records, s.stand_in, order.size());
      // Idle while no compiled candidate waits: decide rounds among the finalists so far
      // (speculative_decide.h), one device only.
      SpeculativeDecide* ahead = s.runner.devices() == 1 ? s.ahead : nullptr;
      std::size_t k = 0;  // candidates handed out
      // The next compiled candidate: in candidate order without a reference, else the first
      // to finish compiling; nullopt once all are handed out.
      const auto next = [&]() -> std::optional<std::size_t> {
        if (k == order.size()) return std::nullopt;
        std::size_t i = 0;
        std::unique_lock lock(mu);
        if (in_order) {
          i = order[k];
          cv.wait(lock, [&] { return compiled[i] != 0; });
        } else {
          while (ahead && ready.empty() && !s.out_of_time()) {
            lock.unlock();
            const bool measured = ahead->step(s.measured);
            lock.lock();
            if (!measured) break;
          }
          cv.wait(lock, [&] { return !ready.empty(); });
          i = ready.front();
          ready.pop_front();
        }
        ++k;
        return i;
      };
      if (s.runner.devices() > 1) {
        run_spread(s, one, order, next);
      } else {
        while (!s.out_of_time()) {
          const std::optional<std::size_t> i = next();
          if (!i) break;
          s.finish(one, *i);
        }
      }
    }
    s.run.measure_s += seconds_since(t1);
    stop = true;
    pool.wait_idle();
  }
  s.run.compile_s += seconds_since(t0);  // the batch's wall time: its compiles end within it
  return result;
}

// "T: evaluated k of N (best so far NAME, TIME)" each time the search passes another tenth of
// its budget (of the candidates without one).
}  // namespace ktune::search_batch

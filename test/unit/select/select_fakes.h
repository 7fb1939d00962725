// Fakes for the selection stages: Choices that compile or fail as told, a Backend that is never
// asked to compile, and a StageRunner with fixed outcomes and times that records what it was asked.
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/choice/choice.h"
#include "select/stage_runner.h"

namespace ktune::test {

struct FakeChoiceSpec {
  std::string name;
  bool supported = true;
  bool compiles = true;
  std::string info{};  // empty: "info of <name>"
  int compile_ms = 0;  // how long compile() takes (overlap tests)
};

class FakeChoice final : public Choice {
 public:
  explicit FakeChoice(FakeChoiceSpec spec) : spec_(std::move(spec)) {}
  [[nodiscard]] Kind kind() const override { return Kind::kTemplate; }
  [[nodiscard]] const std::string& name() const override { return spec_.name; }
  [[nodiscard]] std::string hash_key() const override { return "fake:" + spec_.name; }
  [[nodiscard]] std::string info() const override {
    return spec_.info.empty() ? "info of " + spec_.name : spec_.info;
  }
  // The parameters of an info written as a config ("BM=32 BN=x"); none otherwise.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> params() const override {
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t at = 0;
    while (at < spec_.info.size()) {
      std::size_t end = spec_.info.find(' ', at);
      if (end == std::string::npos) end = spec_.info.size();
      const std::string token = spec_.info.substr(at, end - at);
      const std::size_t eq = token.find('=');
      if (eq == 0 || eq == std::string::npos) return {};
      out.emplace_back(token.substr(0, eq), token.substr(eq + 1));
      at = end + 1;
    }
    return out;
  }
  [[nodiscard]] Status supports(const Problem&) const override {
    if (spec_.supported) return {};
    return make_error(ErrorCode::kInvalidArgument, spec_.name + " takes no such problem");
  }
  [[nodiscard]] Status compile(const Backend&) override {
    ++compiles_;
    if (spec_.compile_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(spec_.compile_ms));
    }
    if (spec_.compiles) return {};
    return make_error(ErrorCode::kCompile, spec_.name + ": syntax error");
  }
  [[nodiscard]] double compile_s() const override { return spec_.compiles ? 0.25 : 0; }
  [[nodiscard]] Result<KernelFn> load(const Backend&, const Problem&) override {
    return make_error(ErrorCode::kUnavailable, "fake choices are run by the fake runner only");
  }
  // Written by the compile task of this choice only, read after the stage.
  [[nodiscard]] int compiles() const { return compiles_; }

 private:
  FakeChoiceSpec spec_;
  int compiles_ = 0;
};

// A library choice (Kind::kExtern): nothing to compile.
class FakeLibrary final : public Choice {
 public:
  explicit FakeLibrary(std::string name, std::string info = "a library call")
      : name_(std::move(name)), info_(std::move(info)) {}
  [[nodiscard]] Kind kind() const override { return Kind::kExtern; }
  [[nodiscard]] const std::string& name() const override { return name_; }
  [[nodiscard]] std::string hash_key() const override { return "lib:" + name_; }
  [[nodiscard]] std::string info() const override { return info_; }
  [[nodiscard]] Status supports(const Problem&) const override { return {}; }
  [[nodiscard]] Status compile(const Backend&) override { return {}; }
  [[nodiscard]] double compile_s() const override { return 0; }
  [[nodiscard]] Result<KernelFn> load(const Backend&, const Problem&) override {
    return make_error(ErrorCode::kUnavailable, "fake choices are run by the fake runner only");
  }

 private:
  std::string name_;
  std::string info_;
};

// A Backend for the compile stage's signature: fake choices never call it.
class FakeBackend final : public Backend {
 public:
  // kCpu by default; a device kind makes select_with overlap measuring with compiling.
  DeviceKind device_kind = DeviceKind::kCpu;
  [[nodiscard]] DeviceKind kind() const override { return device_kind; }
  [[nodiscard]] std::string device_fingerprint() const override { return "fake device"; }
  [[nodiscard]] std::string toolchain_fingerprint() const override { return "fake toolchain"; }
  [[nodiscard]] Result<Artifact> compile(const KernelSource&) const override {
    return make_error(ErrorCode::kInternal, "the fake backend compiles nothing");
  }
  [[nodiscard]] Result<std::unique_ptr<Module>> load(const Artifact&) const override {
    return make_error(ErrorCode::kInternal, "the fake backend loads nothing");
  }
};

// Outcome and first median of each candidate by name (unlisted: ok, 1000 ns), round medians of
// the re-measurement by name (unlisted: the first median), verifications that fail, and the
// load of other processes.
class FakeRunner final : public StageRunner {
 public:
  struct Fixed {
    Outcome outcome = Outcome::kOk;
    double median_ns = 1000;
    double min_ns = 0;  // the fastest run; 0: the median
  };
  std::map<std::string, Fixed> fixed;
  std::map<std::string, double> remeasured_ns;
  // Round medians by name, used in turn (round r of the candidate: rounds_ns[r % size]); over
  // remeasured_ns.
  std::map<std::string, std::vector<double>> rounds_ns;
  Status prepare_status;
  // What each candidate computes, by name (unlisted: 0). Once a stand-in is adopted, a
  // candidate whose output differs from the stand-in's is a wrong_result, as the worker would
  // answer; a candidate listed in `no_stand_in` fails to serve as one.
  std::map<std::string, int> output;
  std::set<std::string> no_stand_in;
  std::vector<std::string> stand_ins;  // adopt_stand_in calls, in order
  bool remeasure_fails = false;
  // The verify-only call (run with measure false, counted from 1 per name) that answers
  // wrong_result; unlisted: none does.
  std::map<std::string, int> failing_verification;
  // Cores' worth of CPU other processes use; unset: unknown (cpu_clock answers nullopt).
  std::optional<double> others_load;
  int core_count = 2;

  // What was asked, in order.
  int prepared = 0;
  std::vector<std::string> ran;
  std::vector<bool> measured;
  std::vector<std::vector<std::string>> remeasure_calls;
  std::vector<int> remeasure_rounds;
  std::vector<std::optional<BenchOptions>> remeasure_bench;  // each call's round settings
  std::vector<std::size_t> remeasure_after;                  // each call's ran.size()
  std::map<std::string, int> verifications;                  // verify-only calls by name

  [[nodiscard]] Status prepare(Choice*) override {
    ++prepared;
    return prepare_status;
  }
  [[nodiscard]] Status adopt_stand_in(Choice& choice) override {
    stand_ins.push_back(choice.name());
    if (no_stand_in.contains(choice.name())) {
      return make_error(ErrorCode::kInvalidArgument, choice.name() + " overflows the stress set");
    }
    against_ = output_of(choice.name());
    return {};
  }
  [[nodiscard]] CandidateRun run(Choice& choice, bool measure) override {
    ran.push_back(choice.name());
    measured.push_back(measure);
    const Fixed f = fixed.contains(choice.name()) ? fixed.at(choice.name()) : Fixed{};
    // Abandoned keeps the statistics of its first runs, as the worker answers it.
    if (f.outcome == Outcome::kAbandoned && measure) {
      return {f.outcome, choice.name() + " is clearly slower", stats(f.median_ns)};
    }
    if (f.outcome != Outcome::kOk) return {f.outcome, choice.name() + " went wrong", std::nullopt};
    if (against_ && *against_ != output_of(choice.name())) {
      return {Outcome::kWrongResult, choice.name() + " differs from the stand-in", std::nullopt};
    }
    if (!measure) {
      const int k = ++verifications[choice.name()];
      if (failing_verification.contains(choice.name()) &&
          failing_verification.at(choice.name()) == k)
        return {Outcome::kWrongResult, choice.name() + " differs this time", std::nullopt};
      return {};
    }
    BenchStats s = stats(f.median_ns);
    if (f.min_ns > 0) s.min_ns = f.min_ns;
    return {Outcome::kOk, "", s};
  }
  // Several devices (devices()): run_on(d) answers as run() does, with its times scaled by
  // device_scale[d] (unlisted: 1), after holding the device for run_on_ms; it records which
  // device ran what, and how many devices were busy at once.
  std::size_t device_count = 1;
  std::map<std::size_t, double> device_scale;
  int run_on_ms = 0;
  std::map<std::string, std::vector<std::size_t>> devices_of;  // by name, in order
  int most_busy = 0;                                           // devices running at once

  [[nodiscard]] std::size_t devices() const override { return device_count; }
  [[nodiscard]] CandidateRun run_on(std::size_t device, Choice& choice, bool measure) override {
    {
      const std::lock_guard lock(mu_);
      most_busy = std::max(most_busy, ++busy_);
    }
    if (run_on_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(run_on_ms));
    const std::lock_guard lock(mu_);
    --busy_;
    devices_of[choice.name()].push_back(device);
    CandidateRun r = run(choice, measure);
    const double scale = device_scale.contains(device) ? device_scale.at(device) : 1.0;
    if (r.stats) {
      r.stats->median_ns *= scale;
      r.stats->min_ns *= scale;
      r.stats->max_ns *= scale;
    }
    return r;
  }

  [[nodiscard]] Result<std::vector<std::vector<double>>> remeasure(
      const std::vector<Choice*>& choices, int rounds,
      const std::optional<BenchOptions>& bench) override {
    std::vector<std::string> names;
    for (const Choice* c : choices) names.push_back(c->name());
    remeasure_calls.push_back(names);
    remeasure_rounds.push_back(rounds);
    remeasure_bench.push_back(bench);
    remeasure_after.push_back(ran.size());
    if (remeasure_fails) return make_error(ErrorCode::kInternal, "the worker went away");
    std::vector<std::vector<double>> out;
    for (const std::string& n : names) {
      const double first = fixed.contains(n) ? fixed.at(n).median_ns : Fixed{}.median_ns;
      const double again = remeasured_ns.contains(n) ? remeasured_ns.at(n) : first;
      std::vector<double>& mine = out.emplace_back();
      for (int r = 0; r < rounds; ++r) {
        const int at = rounds_done[n]++;
        const auto seq = rounds_ns.find(n);
        mine.push_back(seq == rounds_ns.end()
                           ? again
                           : seq->second[static_cast<std::size_t>(at) % seq->second.size()]);
      }
    }
    return out;
  }
  [[nodiscard]] std::optional<CpuClock> cpu_clock() override {
    if (!others_load) return std::nullopt;
    clock_s_ += 1;  // one second between readings; others use *others_load cores of it
    return CpuClock{clock_s_, clock_s_ * *others_load, 0};
  }
  [[nodiscard]] int cores() override { return core_count; }
  // Rounds measured so far by name.
  std::map<std::string, int> rounds_done;

  static BenchStats stats(double median_ns) {
    return BenchStats{median_ns, median_ns, median_ns, 0, 3};
  }

 private:
  [[nodiscard]] int output_of(const std::string& name) const {
    return output.contains(name) ? output.at(name) : 0;
  }
  double clock_s_ = 0;
  std::optional<int> against_;  // the stand-in's output, once adopted
  std::mutex mu_;               // run_on from several threads
  int busy_ = 0;
};

inline std::vector<ChoicePtr> fake_candidates(const std::vector<FakeChoiceSpec>& specs) {
  std::vector<ChoicePtr> out;
  for (const FakeChoiceSpec& s : specs) out.push_back(std::make_unique<FakeChoice>(s));
  return out;
}

}  // namespace ktune::test

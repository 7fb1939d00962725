// CpuSamples: the CPU's samples for measure_samples(): the host's steady clock around each run,
// the benchmarker's flush (targeted at its ranges, else the whole cache) before each, outside the
// timed span. What CpuBenchmarker::measure and the CPU device (src/device/cpu) both time with.
#pragma once

#include <functional>
#include <vector>

#include "bench/measure_loop.h"
#include "ktune/bench/cpu_benchmarker.h"

namespace ktune {

class CpuSamples final : public SampleSource {
 public:
  // `bench` flushes (its options and ranges) and must outlive this.
  CpuSamples(CpuBenchmarker& bench, std::function<Status()> run);
  Status warm_up(int count) override;
  Status sample(int count, std::vector<double>* ns) override;

 private:
  CpuBenchmarker& bench_;
  std::function<Status()> run_;
};

}  // namespace ktune

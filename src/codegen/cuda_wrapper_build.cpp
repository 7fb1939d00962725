// write_cuda_wrapper: the generated CUDA program on disk, built by nvcc into a shared library
// and a benchmark executable, each run under a deadline (detail::run_compiler, as the CPU
// wrapper's).
#include <fmt/format.h>

#include <cstdlib>
#include <future>
#include <system_error>

#include "codegen/wrapper_snippets.h"
#include "core/file_util.h"
#include "ktune/codegen/cuda_wrapper.h"

namespace ktune::codegen {

std::string CudaBuildOptions::default_nvcc() {
  if (const char* env = std::getenv("KTUNE_NVCC"); env != nullptr && *env != '\0') return env;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* root = std::getenv(var); root != nullptr && *root != '\0') {
      std::error_code ec;
      const std::filesystem::path nvcc = std::filesystem::path(root) / "bin" / "nvcc";
      if (std::filesystem::exists(nvcc, ec)) return nvcc.string();
    }
  }
  std::error_code ec;
  if (std::filesystem::exists("/usr/local/cuda/bin/nvcc", ec)) return "/usr/local/cuda/bin/nvcc";
  return "nvcc";
}

WrapperFiles cuda_wrapper_files(const Graph& graph, const std::filesystem::path& dir,
                                const CudaBuildOptions& options) {
  WrapperFiles f;
  f.source = dir / (graph.name + ".cu");
  f.library = dir / ("lib" + graph.name + ".so");
  f.executable = dir / graph.name;
  // sm_90a -> compute_90a and sm_90a: the arch-specific features (wgmma) need the exact pair.
  std::string compute = options.arch;
  if (compute.starts_with("sm_")) compute = "compute_" + compute.substr(3);
  const std::vector<std::string> common = {options.nvcc, "-O3", "-std=c++17", "-gencode",
                                           fmt::format("arch={},code={}", compute, options.arch)};
  const std::vector<std::string> libs = {"-lcublasLt", "-lcublas", "-lcuda"};
  f.library_command = common;
  f.library_command.insert(f.library_command.end(),
                           {"-shared", "-Xcompiler", "-fPIC", f.source.string()});
  f.library_command.insert(f.library_command.end(), libs.begin(), libs.end());
  f.library_command.insert(f.library_command.end(), {"-o", f.library.string()});
  f.executable_command = common;
  f.executable_command.insert(f.executable_command.end(),
                              {"-DKTUNE_BENCHMARK_MAIN", f.source.string()});
  f.executable_command.insert(f.executable_command.end(), libs.begin(), libs.end());
  f.executable_command.insert(f.executable_command.end(), {"-o", f.executable.string()});
  return f;
}

Result<WrapperFiles> write_cuda_wrapper(const Graph& graph, const Wrapper& wrapper,
                                        const std::filesystem::path& dir,
                                        const CudaBuildOptions& options, bool build) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return make_error(ErrorCode::kIo, fmt::format("{}: cannot create the output folder: {}",
                                                  dir.string(), ec.message()));
  }
  WrapperFiles f = cuda_wrapper_files(graph, dir, options);
  if (Status s = write_file_atomic(f.source, wrapper.source); !s) return std::unexpected(s.error());
  if (!build) return f;
  // The library and the benchmark are two nvcc runs of the same source, each mostly one core's
  // work for seconds: side by side (the wall time of `ktune compile` is what users wait for).
  auto executable = std::async(std::launch::async, [&] {
    return detail::run_compiler(f.executable_command, options.timeout);
  });
  Status library = detail::run_compiler(f.library_command, options.timeout);
  Status bench = executable.get();
  if (!library) return std::unexpected(library.error());
  if (!bench) return std::unexpected(bench.error());
  return f;
}

}  // namespace ktune::codegen

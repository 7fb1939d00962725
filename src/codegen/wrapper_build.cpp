// write_wrapper: the generated program on disk, built into a shared library and a benchmark
// executable by the system compiler, each run under a deadline (run_process).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <system_error>

#include "codegen/wrapper_snippets.h"
#include "core/file_util.h"
#include "core/subprocess.h"
#include "ktune/codegen/wrapper_codegen.h"

namespace ktune::codegen {
namespace detail {

Status run_compiler(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  ProcessOptions popts;
  popts.timeout = timeout;
  popts.max_output_bytes = 64 << 10;
  auto r = run_process(argv, popts);
  if (!r) return std::unexpected(r.error());
  if (r->timed_out) {
    return make_error(ErrorCode::kTimeout, fmt::format("{}: compiler passed its deadline of {} ms",
                                                       argv.back(), timeout.count()));
  }
  if (!r->ok()) {
    return make_error(ErrorCode::kCompile,
                      fmt::format("{}: `{}` failed (exit {}, signal {}):\n{}", argv.back(),
                                  fmt::join(argv, " "), r->exit_code, r->term_signal, r->output));
  }
  return {};
}

}  // namespace detail

std::string WrapperBuildOptions::default_cxx() {
  if (const char* env = std::getenv("CXX"); env != nullptr && *env != '\0') return env;
  return "c++";
}

WrapperFiles wrapper_files(const Graph& graph, const Wrapper& wrapper,
                           const std::filesystem::path& dir, const WrapperBuildOptions& options) {
  WrapperFiles f;
  f.source = dir / (graph.name + ".cpp");
  f.library = dir / ("lib" + graph.name + ".so");
  f.executable = dir / graph.name;
  std::vector<std::string> common = {options.compiler};
  common.insert(common.end(), options.flags.begin(), options.flags.end());
  common.insert(common.end(), wrapper.flags.begin(), wrapper.flags.end());
  f.library_command = common;
  for (const char* a : {"-fPIC", "-shared"}) f.library_command.emplace_back(a);
  f.library_command.insert(f.library_command.end(), {f.source.string(), "-o", f.library.string()});
  f.executable_command = common;
  f.executable_command.insert(
      f.executable_command.end(),
      {"-DKTUNE_BENCHMARK_MAIN", f.source.string(), "-ldl", "-o", f.executable.string()});
  return f;
}

Result<WrapperFiles> write_wrapper(const Graph& graph, const Wrapper& wrapper,
                                   const std::filesystem::path& dir,
                                   const WrapperBuildOptions& options, bool build) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return make_error(ErrorCode::kIo, fmt::format("{}: cannot create the output folder: {}",
                                                  dir.string(), ec.message()));
  }
  WrapperFiles f = wrapper_files(graph, wrapper, dir, options);
  if (Status s = write_file_atomic(f.source, wrapper.source); !s) return std::unexpected(s.error());
  if (!build) return f;
  if (Status s = detail::run_compiler(f.library_command, options.timeout); !s) {
    return std::unexpected(s.error());
  }
  if (Status s = detail::run_compiler(f.executable_command, options.timeout); !s) {
    return std::unexpected(s.error());
  }
  return f;
}

}  // namespace ktune::codegen

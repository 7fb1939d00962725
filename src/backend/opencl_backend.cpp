// OpenCLBackend: builds OpenCL C for one device and keeps source, options and binary in the code
// cache. compile() keeps no mutable state (OpenCL 1.2 API calls are thread-safe), so concurrent
// compiles are safe.
#include "ktune/backend/opencl_backend.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <utility>

#include "backend/include_deps.h"
#include "backend/opencl_api.h"
#include "core/hash.h"

namespace ktune {

struct OpenCLBackendState {
  OpenCLContext ctx;
};

namespace {

void remove_quietly(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::remove(p, ec);
}

// Writes `text` under a temporary name and renames it onto the cache path.
Status store(const CodeCache& cache, const std::string& key, std::string_view ext,
             const std::string& text) {
  Result<std::filesystem::path> tmp = cache.temp_path_for(key, ext);
  if (!tmp) return std::unexpected(tmp.error());
  {
    std::ofstream out(*tmp, std::ios::binary);
    out << text;
    out.close();
    if (!out) {
      remove_quietly(*tmp);
      return make_error(ErrorCode::kIo, fmt::format("cannot write '{}'", tmp->string()));
    }
  }
  Result<std::filesystem::path> done = cache.commit(*tmp, key, ext);
  if (!done) {
    remove_quietly(*tmp);
    return std::unexpected(done.error());
  }
  return {};
}

}  // namespace

Status opencl_available(std::string_view device) {
  Result<OpenCLDeviceInfo> info = opencl_select_device(device);
  if (!info) return std::unexpected(info.error());
  return {};
}

OpenCLBackend::OpenCLBackend(OpenCLOptions options, std::filesystem::path cache_dir,
                             std::shared_ptr<OpenCLBackendState> state)
    : options_(std::move(options)), code_cache_(std::move(cache_dir)), state_(std::move(state)) {}

Result<OpenCLBackend> OpenCLBackend::create(OpenCLOptions options,
                                            std::filesystem::path cache_dir) {
  Result<OpenCLDeviceInfo> info = opencl_select_device(options.device);
  if (!info) return std::unexpected(info.error());
  Result<OpenCLContext> ctx = OpenCLContext::create(*info);
  if (!ctx) return std::unexpected(ctx.error());
  auto state = std::make_shared<OpenCLBackendState>(OpenCLBackendState{std::move(*ctx)});
  return OpenCLBackend(std::move(options), std::move(cache_dir), std::move(state));
}

std::string OpenCLBackend::device_fingerprint() const { return state_->ctx.info().fingerprint(); }

std::string OpenCLBackend::toolchain_fingerprint() const {
  const OpenCLDeviceInfo& info = state_->ctx.info();
  std::string fp = fmt::format("opencl {} | {}", info.device_version, info.opencl_c_version);
  for (const std::string& f : options_.flags) fp += " " + f;
  return fp;
}

std::string OpenCLBackend::device_name() const { return state_->ctx.info().name; }

DeviceLimits OpenCLBackend::device_limits() const {
  const OpenCLDeviceInfo& info = state_->ctx.info();
  const auto group = static_cast<double>(info.max_work_group_size);
  const auto local = static_cast<double>(info.local_mem_bytes);
  return {{"max_work_group_size", group},
          {"local_mem_bytes", local},
          {"max_threads_per_block", group},
          {"max_shared_bytes_per_block", local}};
}

std::string OpenCLBackend::device_selector() const {
  return fmt::format("{}:{}", state_->ctx.info().platform_index, state_->ctx.info().device_index);
}

std::string OpenCLBackend::build_options(const KernelSource& source) const {
  std::string opts;
  auto add = [&](const std::string& s) { opts += (opts.empty() ? "" : " ") + s; };
  for (const std::string& f : options_.flags) add(f);
  for (const auto& [name, value] : source.defines) add(fmt::format("-D{}={}", name, value));
  for (const std::string& f : source_include_flags(source.source_path)) add(f);
  for (const std::string& f : source.extra_flags) add(f);
  return opts;
}

Result<Artifact> OpenCLBackend::compile(const KernelSource& source) const {
  const std::string options = build_options(source);
  // The user's file names the build log's lines; ktune's own sources carry their #line already.
  const std::string code =
      source.source_path.empty()
          ? source.code
          : fmt::format("#line 1 \"{}\"\n{}", source.source_path.string(), source.code);
  Hasher h;
  h.add("ktune.opencl.v1").add(code).add(options).add(device_fingerprint());
  std::vector<std::string> flags = options_.flags;
  for (const std::string& f : source_include_flags(source.source_path)) flags.push_back(f);
  flags.insert(flags.end(), source.extra_flags.begin(), source.extra_flags.end());
  if (std::string deps = include_deps_digest(code, flags); !deps.empty()) h.add(deps);
  const std::string key = h.hex();
  if (auto hit = code_cache_.find(key, "clbin")) return Artifact{*hit, key, true, 0, {}};
  if (auto hit = code_cache_.find(key, "cl"); hit && code_cache_.find(key, "clopt")) {
    return Artifact{*hit, key, true, 0, {}};
  }
  if (options_.on_command) {
    options_.on_command(source.name, fmt::format("clBuildProgram {}", options));
  }
  const auto t0 = std::chrono::steady_clock::now();
  Result<OpenCLProgram> program = build_opencl_source(state_->ctx, code, options);
  const double compile_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!program) {
    return make_error(program.error().code,
                      fmt::format("{}: {}", source.name, program.error().message));
  }
  std::optional<std::string> binary;
  if (options_.use_binaries) {
    std::string b = opencl_program_binary(state_->ctx, *program);
    if (!b.empty()) binary = std::move(b);
  }
  // Options and source go in first, so that a committed binary always has them beside it.
  if (Status s = store(code_cache_, key, "clopt", options); !s) return std::unexpected(s.error());
  if (Status s = store(code_cache_, key, "cl", code); !s) return std::unexpected(s.error());
  if (binary) {
    if (Status s = store(code_cache_, key, "clbin", *binary); !s) {
      return std::unexpected(s.error());
    }
    return Artifact{code_cache_.path_for(key, "clbin"), key, false, compile_s, {}};
  }
  return Artifact{code_cache_.path_for(key, "cl"), key, false, compile_s, {}};
}

Result<std::unique_ptr<Module>> OpenCLBackend::load(const Artifact& artifact) const {
  return make_error(ErrorCode::kUnavailable,
                    fmt::format("{}: OpenCL programs run in a worker (LaunchKind opencl), not "
                                "in-process",
                                artifact.path.string()));
}

}  // namespace ktune

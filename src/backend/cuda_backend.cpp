// CudaBackend: NVRTC compiles the translation unit to a cubin for one real architecture, which
// goes into the code cache beside its source (content-addressed, written under a temporary name
// and renamed). compile() keeps no mutable state and NVRTC allows concurrent programs, so
// concurrent compiles are safe.
#include "ktune/backend/cuda_backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <fstream>
#include <future>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "backend/include_deps.h"
#include "backend/nvrtc_library.h"
#include "backend/translation_unit_head.h"
#include "core/cuda_driver.h"
#include "core/hash.h"
#include "core/single_flight.h"
#include "core/trace.h"
#include "core/utf8.h"

namespace ktune {
namespace {

// NVRTC's log of a failed compile: its first errors say what is wrong, its last line counts them.
constexpr std::size_t kLogHeadLines = 16;
constexpr std::size_t kLogTailLines = 6;
constexpr std::size_t kLogMaxBytes = std::size_t{8} * 1024;

std::string c_string_literal(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') c = ' ';
    out += c;
  }
  out += '"';
  return out;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  while (!lines.empty() && lines.back().find_first_not_of(" \t\r") == std::string_view::npos) {
    lines.pop_back();
  }
  return lines;
}

// The log's head and tail with the middle elided, at most kLogMaxBytes.
std::string trim_log(std::string_view log) {
  std::vector<std::string_view> lines = split_lines(log);
  std::string out;
  auto append = [&](std::string_view line) {
    if (!out.empty()) out += '\n';
    out += line;
  };
  if (lines.size() <= kLogHeadLines + kLogTailLines) {
    for (std::string_view l : lines) append(l);
  } else {
    for (std::size_t i = 0; i < kLogHeadLines; ++i) append(lines[i]);
    append(fmt::format("... ({} lines omitted) ...", lines.size() - kLogHeadLines - kLogTailLines));
    for (std::size_t i = lines.size() - kLogTailLines; i < lines.size(); ++i) append(lines[i]);
  }
  if (out.size() > kLogMaxBytes) {
    out = std::string(utf8_prefix(out, kLogMaxBytes)) + "\n... (log truncated)";
  }
  return out;
}

// "sm_90a" -> 90; nullopt for anything that is not a real architecture ("compute_90", "90").
std::optional<int> real_arch_number(std::string_view arch) {
  if (!arch.starts_with("sm_")) return std::nullopt;
  std::string_view digits = arch.substr(3);
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) digits.remove_suffix(1);
  int n = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size()) {
    return std::nullopt;
  }
  return n;
}

Status check_arch(const NvrtcLibrary& nv, const std::string& arch) {
  std::optional<int> n = real_arch_number(arch);
  if (!n) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("cuda backend: arch '{}' is not a real GPU architecture; expected "
                    "sm_<cc>[a], e.g. sm_90a or sm_80 (a cubin needs one)",
                    arch));
  }
  const std::vector<int>& ok = nv.supported_archs;
  if (!ok.empty() && std::find(ok.begin(), ok.end(), *n) == ok.end()) {
    std::string list;
    for (int a : ok) list += fmt::format("{}sm_{}", list.empty() ? "" : " ", a);
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("cuda backend: NVRTC {}.{} cannot target {}; it supports {}",
                                  nv.major, nv.minor, arch, list));
  }
  return {};
}

void remove_quietly(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::remove(p, ec);
}

Status write_file(const std::filesystem::path& path, std::string_view bytes,
                  const std::string& who) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    remove_quietly(path);
    return make_error(ErrorCode::kIo, fmt::format("{}: cannot write '{}'", who, path.string()));
  }
  return {};
}

// The lowered names stored beside a cubin: exactly `count` lines, each a mangled C++ name
// (letters, digits, '_', '$'), else nullopt (recompiled).
std::optional<std::vector<std::string>> read_names(const CodeCache& cache, const std::string& key,
                                                   std::size_t count) {
  std::optional<std::filesystem::path> path = cache.find(key, "names");
  if (!path) return std::nullopt;
  std::ifstream in(*path);
  std::vector<std::string> names;
  for (std::string line; names.size() <= count && std::getline(in, line);) {
    if (line.empty() || line.size() > 4096) return std::nullopt;
    for (char c : line) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '$') return std::nullopt;
    }
    names.push_back(std::move(line));
  }
  if (names.size() != count) return std::nullopt;
  return names;
}

// Every current CUDA GPU runs 1024 threads per block in warps of 32.
DeviceLimits cuda_limits(int cc_major, int cc_minor, int sm_count, int shared_optin) {
  return {{"max_threads_per_block", 1024},
          {"max_shared_bytes_per_block", shared_optin},
          {"warp_size", 32},
          {"sm_count", sm_count},
          {"cc_major", cc_major},
          {"cc_minor", cc_minor}};
}

// Compiling only: the limits of the arch's largest GPU (CUDA C++ Programming Guide, "Technical
// Specifications per Compute Capability"; SM counts of V100, T4, A100, A10/RTX 3090, L40, H100,
// B200, RTX 5090).
DeviceLimits arch_limits(int arch) {
  struct Row {
    int arch, sm_count, shared_optin;
  };
  static constexpr Row kRows[] = {{70, 80, 98304},   {75, 40, 65536},    {80, 108, 166912},
                                  {86, 84, 101376},  {87, 16, 166912},   {89, 142, 101376},
                                  {90, 132, 232448}, {100, 148, 232448}, {103, 148, 232448},
                                  {120, 170, 101376}};
  Row row = kRows[0];
  for (const Row& r : kRows) {
    if (r.arch <= arch) row = r;
  }
  return cuda_limits(arch / 10, arch % 10, row.sm_count, row.shared_optin);
}

}  // namespace

// Compiles under way in this process, by code-cache folder and key: every backend's, so that
// one that starts compiling for a predicted device (for_device) and the one opened on the device
// share each NVRTC run instead of doubling it.
namespace {
std::shared_ptr<SingleFlight<Result<Artifact>>> process_in_flight() {
  static const auto in_flight = std::make_shared<SingleFlight<Result<Artifact>>>();
  return in_flight;
}
}  // namespace

CudaBackend::CudaBackend(CudaCompileOptions options, std::filesystem::path cache_dir,
                         std::string arch, std::string device_fingerprint,
                         std::string nvrtc_version, DeviceLimits limits)
    : options_(std::move(options)),
      code_cache_(std::move(cache_dir)),
      arch_(std::move(arch)),
      device_fingerprint_(std::move(device_fingerprint)),
      nvrtc_version_(std::move(nvrtc_version)),
      limits_(std::move(limits)),
      in_flight_(process_in_flight()) {}

Result<CudaBackend> CudaBackend::for_device(CudaCompileOptions options,
                                            std::filesystem::path cache_dir,
                                            const CudaDeviceInfo& device) {
  Result<const NvrtcLibrary*> nv = nvrtc_library();
  if (!nv) return std::unexpected(nv.error());
  std::string arch = device.arch();
  if (Status s = check_arch(**nv, arch); !s) return std::unexpected(s.error());
  DeviceLimits limits = arch_limits(*real_arch_number(arch));
  for (auto& [name, value] : limits) {
    if (name == "sm_count") value = device.sm_count;
  }
  std::string version = fmt::format("{}.{}", (*nv)->major, (*nv)->minor);
  options.arch = arch;
  return CudaBackend(std::move(options), std::move(cache_dir), std::move(arch),
                     device.fingerprint(), std::move(version), std::move(limits));
}

Result<CudaBackend> CudaBackend::create(CudaCompileOptions options,
                                        std::filesystem::path cache_dir) {
  // NVRTC's library loads while the driver initialises (cuInit took 0.1 s on an H200 host):
  // both are on the way to the first compile of a cold tuning.
  std::future<Result<const NvrtcLibrary*>> nv_loading = std::async(std::launch::async, [] {
    const trace::Span span("open", "backend", "NVRTC");
    return nvrtc_library();
  });
  std::optional<Result<CudaDeviceInfo>> device;
  if (options.arch.empty() || cuda_driver()) {
    const trace::Span span("open", "backend", "CUDA driver");
    device = cuda_device_info(options.device);
  }
  Result<const NvrtcLibrary*> nv = nv_loading.get();
  if (!nv) return std::unexpected(nv.error());
  std::string arch = options.arch;
  std::string device_fp;
  DeviceLimits limits;
  if (arch.empty()) {
    Result<CudaDeviceInfo>& info = *device;
    if (!info) {
      return make_error(ErrorCode::kUnavailable,
                        fmt::format("cuda backend: no GPU visible; pass an arch such as sm_90a to "
                                    "compile only ({})",
                                    info.error().message));
    }
    arch = info->arch();
    device_fp = info->fingerprint();
    limits = cuda_limits(info->cc_major, info->cc_minor, info->sm_count,
                         info->max_shared_per_block_optin);
  } else if (!cuda_driver()) {
    // Compiling only, e.g. in CI: no driver, and none is needed.
    device_fp = "no device; arch " + arch;
  } else {
    Result<CudaDeviceInfo>& info = *device;
    if (!info) {
      return make_error(info.error().code, fmt::format("cuda backend: device {}: {}",
                                                       options.device, info.error().message));
    }
    device_fp = info->fingerprint();
    limits = cuda_limits(info->cc_major, info->cc_minor, info->sm_count,
                         info->max_shared_per_block_optin);
  }
  if (Status s = check_arch(**nv, arch); !s) return std::unexpected(s.error());
  if (limits.empty()) limits = arch_limits(*real_arch_number(arch));
  std::string version = fmt::format("{}.{}", (*nv)->major, (*nv)->minor);
  return CudaBackend(std::move(options), std::move(cache_dir), std::move(arch),
                     std::move(device_fp), std::move(version), std::move(limits));
}

std::string CudaBackend::device_fingerprint() const { return device_fingerprint_; }

std::string CudaBackend::toolchain_fingerprint() const {
  std::string fp = fmt::format("nvrtc {} {}", nvrtc_version_, arch_);
  for (const std::string& f : options_.flags) fp += " " + f;
  return fp;
}

std::string CudaBackend::translation_unit(const KernelSource& source) {
  std::string tu = translation_unit_head(source);
  // NVRTC's messages then name the source (the user's file when it has one) and count its lines
  // from 1, past the defines.
  const std::string origin = source.source_path.empty() ? source.name : source.source_path.string();
  tu += fmt::format("#line 1 {}\n", c_string_literal(origin));
  tu += source.code;
  if (!source.code.empty() && source.code.back() != '\n') tu += '\n';
  return tu;
}

Result<Artifact> CudaBackend::compile(const KernelSource& source) const {
  Result<const NvrtcLibrary*> lib = nvrtc_library();  // opened by create(): a lookup
  if (!lib) return std::unexpected(lib.error());
  const NvrtcLibrary& nv = **lib;

  std::vector<std::string> options = {"--gpu-architecture=" + arch_};
  options.insert(options.end(), options_.flags.begin(), options_.flags.end());
  // The source's folder is an include path, as on the CPU (NVRTC reads no file otherwise).
  const std::vector<std::string> include = source_include_flags(source.source_path);
  options.insert(options.end(), include.begin(), include.end());
  options.insert(options.end(), source.extra_flags.begin(), source.extra_flags.end());
  // The user's headers, read now: an edited one is another cubin (include_deps.h). The toolkit's
  // header folders, searched last, are not scanned: their headers change with NVRTC's version,
  // which the key holds.
  const std::string deps = include_deps_digest(source.code, options);
  for (const std::string& dir : nv.include_dirs) options.push_back("--include-path=" + dir);

  const std::string tu = translation_unit(source);
  Hasher h;
  h.add("ktune.cuda.v1").add(tu).add(nvrtc_version_);
  h.add(static_cast<std::int64_t>(options.size()));
  for (const std::string& o : options) h.add(o);  // the arch is the first
  // Only with names, so that the keys of extern "C" kernels stay what they were.
  if (!source.name_expressions.empty()) {
    h.add("names").add(static_cast<std::int64_t>(source.name_expressions.size()));
    for (const std::string& n : source.name_expressions) h.add(n);
  }
  if (!deps.empty()) h.add(deps);
  const std::string key = h.hex();
  if (std::optional<std::filesystem::path> hit = code_cache_.find(key, "cubin")) {
    // With names, a hit needs its lowered names too (written before the cubin).
    if (source.name_expressions.empty()) return Artifact{*hit, key, true, 0, {}};
    if (std::optional<std::vector<std::string>> names =
            read_names(code_cache_, key, source.name_expressions.size())) {
      return Artifact{*hit, key, true, 0, std::move(*names)};
    }
  }

  // The same key compiling in another thread (the library candidates of one problem share their
  // epilogue kernel; a graph's problems compile side by side): its result, not a second NVRTC run.
  bool shared = false;
  Result<Artifact> compiled = in_flight_->run(
      code_cache_.dir().string() + '\n' + key,
      [&]() -> Result<Artifact> {
        if (options_.on_command) {
          options_.on_command(source.name, fmt::format("nvrtc {}", fmt::join(options, " ")));
        }
        const auto start = std::chrono::steady_clock::now();
        Result<NvrtcCompiled> out =
            nvrtc_compile(nv, tu, source.name + ".cu", options, source.name_expressions);
        if (!out) return make_error(out.error().code, source.name + ": " + out.error().message);
        if (out->result != NVRTC_SUCCESS) {
          std::string log = trim_log(out->log);
          std::string opts;
          for (const std::string& o : options) opts += (opts.empty() ? "" : " ") + o;
          return make_error(
              ErrorCode::kCompile,
              fmt::format(
                  "{}: NVRTC {} failed ({}):{}", source.name, nvrtc_version_, opts,
                  log.empty() ? std::string(" ") + nv.GetErrorString(out->result) : "\n" + log));
        }
        if (out->cubin.empty()) {
          return make_error(ErrorCode::kCompile,
                            fmt::format("{}: NVRTC produced no cubin for {}", source.name, arch_));
        }
        const std::string& cubin = out->cubin;
        const double compile_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

        Result<std::filesystem::path> tmp_cu = code_cache_.temp_path_for(key, "cu");
        if (!tmp_cu) return std::unexpected(tmp_cu.error());
        Result<std::filesystem::path> tmp_cubin = code_cache_.temp_path_for(key, "cubin");
        if (!tmp_cubin) return std::unexpected(tmp_cubin.error());
        auto fail = [&](const Error& e) -> Result<Artifact> {
          remove_quietly(*tmp_cu);
          remove_quietly(*tmp_cubin);
          return std::unexpected(e);
        };
        if (Status s = write_file(*tmp_cu, tu, source.name); !s) return fail(s.error());
        if (Status s = write_file(*tmp_cubin, cubin, source.name); !s) return fail(s.error());
        // The source goes in first, so that a committed cubin always has its .cu beside it (and its
        // lowered names).
        Result<std::filesystem::path> cu_path = code_cache_.commit(*tmp_cu, key, "cu");
        if (!cu_path) return fail(cu_path.error());
        if (!out->lowered.empty()) {
          Result<std::filesystem::path> tmp_names = code_cache_.temp_path_for(key, "names");
          if (!tmp_names) return fail(tmp_names.error());
          std::string text;
          for (const std::string& n : out->lowered) text += n + "\n";
          if (Status s = write_file(*tmp_names, text, source.name); !s) return fail(s.error());
          Result<std::filesystem::path> names = code_cache_.commit(*tmp_names, key, "names");
          if (!names) {
            remove_quietly(*tmp_names);
            return fail(names.error());
          }
        }
        Result<std::filesystem::path> cubin_path = code_cache_.commit(*tmp_cubin, key, "cubin");
        if (!cubin_path) return fail(cubin_path.error());
        return Artifact{*cubin_path, key, false, compile_s, std::move(out->lowered)};
      },
      &shared);
  if (shared && compiled) {
    compiled->from_cache = true;
    compiled->compile_s = 0;
  }
  return compiled;
}

Result<std::unique_ptr<Module>> CudaBackend::load(const Artifact& artifact) const {
  return make_error(ErrorCode::kUnavailable,
                    fmt::format("cuda backend: load '{}': CUDA kernels are loaded and launched by "
                                "a ktune-worker's CUDA handler (LaunchKind::kCudaCubin), not in "
                                "the compiling process",
                                artifact.path.string()));
}

}  // namespace ktune

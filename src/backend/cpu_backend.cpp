// CpuBackend: compiles a translation unit with the system compiler into a shared object in the
// code cache (content-addressed, written under a temporary name and renamed) and loads it with
// dlopen. compile() keeps no mutable state, so concurrent compiles are safe.
#include "ktune/backend/cpu_backend.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "backend/artifact_digest.h"
#include "backend/include_deps.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/subprocess.h"

namespace ktune {
namespace {

constexpr std::size_t kErrorTailLines = 20;
constexpr std::chrono::milliseconds kVersionTimeout{30'000};

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::istringstream in{std::string(text)};
  for (std::string w; in >> w;) words.push_back(std::move(w));
  return words;
}

std::string first_line(std::string_view text) {
  std::size_t end = text.find('\n');
  return std::string(text.substr(0, end));
}

std::string last_lines(std::string_view text, std::size_t lines) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::size_t pos = text.size();
  for (std::size_t n = 0; n < lines && pos != std::string_view::npos && pos > 0; ++n) {
    pos = text.rfind('\n', pos - 1);
  }
  return std::string(pos == std::string_view::npos ? text : text.substr(pos + 1));
}

// The compiler's first "file:line:col: error:" line and a newline, or nothing: a one-line
// summary (the tuning table shows a message's start) that names where the user's code is wrong;
// the context follows it in the message.
std::string first_error(std::string_view output) {
  for (std::string_view marker : {": error:", ": fatal error:"}) {
    std::size_t at = output.find(marker);
    if (at == std::string_view::npos) continue;
    std::size_t begin = output.rfind('\n', at);
    begin = begin == std::string_view::npos ? 0 : begin + 1;
    std::size_t end = output.find('\n', at);
    return std::string(output.substr(begin, end == std::string_view::npos ? end : end - begin)) +
           "\n";
  }
  return {};
}

bool mentions_native(const std::vector<std::string>& flags) {
  for (const std::string& f : flags) {
    if (f.find("=native") != std::string::npos) return true;
  }
  return false;
}

void remove_quietly(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::remove(p, ec);
}

// Owns one dlopen handle; the entry pointer stays valid as long as the module lives.
class CpuModule final : public Module {
 public:
  using EntryFn = void (*)(void* const*);
  CpuModule(void* handle, EntryFn entry) : handle_(handle), entry_(entry) {}
  ~CpuModule() override { ::dlclose(handle_); }
  CpuModule(const CpuModule&) = delete;
  CpuModule& operator=(const CpuModule&) = delete;

  Status launch(void* const* args) override {
    entry_(args);
    return {};
  }

 private:
  void* handle_;
  EntryFn entry_;
};

std::string dl_error_text() {
  const char* e = ::dlerror();
  return e != nullptr ? e : "unknown dlerror";
}

// dlopen of an artifact whose bytes were just checked. dlopen reads the file again by name: in a
// folder that only this user can change, under a parent only this user can change, nobody else
// can put another file at that name in between, so it is opened in place. Elsewhere (a shared
// folder allowed by --allow-shared-cache-dir, an artifact outside a cache) the checked bytes are
// loaded from a copy under a fresh name that only this process writes; a fresh name also keeps
// dlopen from answering with an earlier object of the same name.
Result<void*> dlopen_checked(const std::filesystem::path& path, std::string_view bytes) {
  const std::filesystem::path folder = path.parent_path();
  if (check_not_shared(folder) && check_not_shared(folder.parent_path())) {
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return make_error(ErrorCode::kIo, "dlopen failed: " + dl_error_text());
    return handle;
  }
  const std::filesystem::path copy = folder / temp_file_name(path.filename().string());
  {
    auto fd = create_exclusive(copy, 0700);
    if (!fd) return std::unexpected(fd.error());
    if (Status s = write_all(fd->get(), bytes, copy); !s) {
      remove_quietly(copy);
      return std::unexpected(s.error());
    }
  }
  void* handle = ::dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  remove_quietly(copy);  // mapped now; the name is not needed
  if (handle == nullptr) return make_error(ErrorCode::kIo, "dlopen failed: " + dl_error_text());
  return handle;
}

}  // namespace

CpuBackend::CpuBackend(CpuCompileOptions options, std::filesystem::path cache_dir,
                       std::string compiler_id)
    : options_(std::move(options)),
      code_cache_(std::move(cache_dir)),
      compiler_id_(std::move(compiler_id)) {}

Result<CpuBackend> CpuBackend::create(CpuCompileOptions options, std::filesystem::path cache_dir) {
  if (options.compiler == "c++") {
    const char* cxx = std::getenv("CXX");
    if (cxx != nullptr && *cxx != '\0') options.compiler = cxx;
  }
  std::vector<std::string> argv = split_words(options.compiler);
  if (argv.empty()) return make_error(ErrorCode::kInvalidArgument, "cpu backend: empty compiler");
  argv.emplace_back("--version");
  ProcessOptions popts;
  popts.timeout = kVersionTimeout;  // not a compile: the per-compile deadline does not apply
  popts.max_output_bytes = std::size_t{64} * 1024;
  Result<ProcessResult> run = run_process(argv, popts);
  if (!run) {
    return make_error(ErrorCode::kUnavailable,
                      fmt::format("cpu backend: cannot run compiler '{}': {}", options.compiler,
                                  run.error().message));
  }
  if (!run->ok()) {
    return make_error(
        ErrorCode::kUnavailable,
        fmt::format("cpu backend: '{} --version' failed (exit {}, signal {}): {}", options.compiler,
                    run->exit_code, run->term_signal, last_lines(run->output, 5)));
  }
  return CpuBackend(std::move(options), std::move(cache_dir), first_line(run->output));
}

std::string CpuBackend::device_fingerprint() const { return cpu_fingerprint(); }

std::string CpuBackend::toolchain_fingerprint() const {
  std::string fp = compiler_id_;
  for (const std::string& f : options_.flags) fp += " " + f;
  return fp;
}

Result<Artifact> CpuBackend::compile(const KernelSource& source) const {
  const std::string tu = translation_unit(source);
  // The source's folder is an include path (a header beside the kernel is found, as users expect);
  // first, as a quoted #include searches the including file's folder first.
  std::vector<std::string> source_flags = source_include_flags(source.source_path);
  source_flags.insert(source_flags.end(), source.extra_flags.begin(), source.extra_flags.end());
  Hasher h;
  h.add("ktune.cpu.v1").add(tu).add(options_.compiler).add(compiler_id_);
  h.add(static_cast<std::int64_t>(options_.flags.size()));
  for (const std::string& f : options_.flags) h.add(f);
  h.add(static_cast<std::int64_t>(source_flags.size()));
  for (const std::string& f : source_flags) h.add(f);
  // The headers the kernel includes from the user's folders, read now: an edited header is
  // another object, never the stale one.
  std::vector<std::string> all_flags = options_.flags;
  all_flags.insert(all_flags.end(), source_flags.begin(), source_flags.end());
  if (std::string deps = include_deps_digest(source.code, all_flags); !deps.empty()) {
    h.add(deps);
  }
  // -march=native code is only valid on this CPU; a shared cache folder must not mix machines.
  if (mentions_native(options_.flags) || mentions_native(source.extra_flags)) {
    h.add(cpu_fingerprint());
  }
  const std::string key = h.hex();

  if (std::optional<std::filesystem::path> hit = code_cache_.find(key, "so")) {
    return Artifact{*hit, key, true, 0, {}};
  }
  Result<std::filesystem::path> tmp_cpp = code_cache_.temp_path_for(key, "cpp");
  if (!tmp_cpp) return std::unexpected(tmp_cpp.error());
  Result<std::filesystem::path> tmp_so = code_cache_.temp_path_for(key, "so");
  if (!tmp_so) {
    remove_quietly(*tmp_cpp);
    return std::unexpected(tmp_so.error());
  }
  {
    std::ofstream out(*tmp_cpp, std::ios::binary);
    out << tu;
    out.close();
    if (!out) {
      remove_quietly(*tmp_cpp);
      return make_error(ErrorCode::kIo,
                        fmt::format("{}: cannot write '{}'", source.name, tmp_cpp->string()));
    }
  }

  std::vector<std::string> argv = split_words(options_.compiler);
  argv.insert(argv.end(), options_.flags.begin(), options_.flags.end());
  argv.insert(argv.end(), source_flags.begin(), source_flags.end());
  argv.insert(argv.end(), {"-o", tmp_so->string(), tmp_cpp->string()});
  if (options_.on_command) {
    options_.on_command(source.name, fmt::format("{}", fmt::join(argv, " ")));
  }
  ProcessOptions popts;
  popts.timeout = options_.timeout;
  popts.max_output_bytes = std::size_t{256} * 1024;
  Result<ProcessResult> run = run_process(argv, popts);

  auto fail = [&](ErrorCode code, std::string message) -> Result<Artifact> {
    remove_quietly(*tmp_cpp);
    remove_quietly(*tmp_so);
    return make_error(code, std::move(message));
  };
  if (!run) return fail(run.error().code, source.name + ": " + run.error().message);
  if (run->timed_out) {
    return fail(ErrorCode::kTimeout,
                fmt::format("{}: compile exceeded {} ms", source.name, options_.timeout.count()));
  }
  if (!run->ok()) {
    std::string how = run->term_signal != 0 ? fmt::format("killed by signal {}", run->term_signal)
                                            : fmt::format("exited with {}", run->exit_code);
    return fail(ErrorCode::kCompile,
                fmt::format("{}: compiler {}: {}{}", source.name, how, first_error(run->output),
                            last_lines(run->output, kErrorTailLines)));
  }
  // The source goes in first, so that a committed .so always has its .cpp beside it.
  Result<std::filesystem::path> cpp_path = code_cache_.commit(*tmp_cpp, key, "cpp");
  if (!cpp_path) return fail(cpp_path.error().code, cpp_path.error().message);
  Result<std::filesystem::path> so_path = code_cache_.commit(*tmp_so, key, "so");
  if (!so_path) return fail(so_path.error().code, so_path.error().message);
  return Artifact{*so_path, key, false, run->wall_s, {}};
}

Result<std::unique_ptr<Module>> CpuBackend::load(const Artifact& artifact) const {
  return load_cpu_module(artifact.path);
}

Result<std::unique_ptr<Module>> load_cpu_module(const std::filesystem::path& path) {
  // A relative name without a slash would make dlopen search the library path instead.
  std::error_code ec;
  const std::filesystem::path full = std::filesystem::absolute(path, ec);
  const std::filesystem::path& open_path = ec ? path : full;
  // Checked against the digest recorded when it was compiled, never loaded otherwise.
  Result<std::string> bytes = read_verified_artifact(open_path);
  if (!bytes) {
    return make_error(bytes.error().code,
                      fmt::format("load '{}': {}", path.string(), bytes.error().message));
  }
  Result<void*> handle = dlopen_checked(open_path, *bytes);
  if (!handle) {
    return make_error(ErrorCode::kIo,
                      fmt::format("load '{}': {}", path.string(), handle.error().message));
  }
  ::dlerror();  // clear, so a null symbol is told apart from an error
  void* sym = ::dlsym(*handle, "ktune_entry");
  if (sym == nullptr) {
    std::string why = dl_error_text();
    ::dlclose(*handle);
    return make_error(ErrorCode::kIo,
                      fmt::format("load '{}': no ktune_entry: {}", path.string(), why));
  }
  auto entry = reinterpret_cast<CpuModule::EntryFn>(sym);
  return std::unique_ptr<Module>(std::make_unique<CpuModule>(*handle, entry));
}

}  // namespace ktune

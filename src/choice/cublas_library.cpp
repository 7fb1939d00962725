// Loading cuBLAS and cuBLASLt at run time: where to look, the function tables, status text.
#include "choice/cublas_library.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <type_traits>
#include <vector>

namespace ktune {
namespace {

#define KTUNE_STR(x) #x
#define KTUNE_XSTR(x) KTUNE_STR(x)  // expands the header's versioning macro first

// The exported cublasGemmEx has exactly this type (the cast fails to compile otherwise).
static_assert(
    std::is_same_v<decltype(static_cast<CublasGemmExFn>(&::cublasGemmEx)), CublasGemmExFn>);

// Newest first: a 13 toolkit's headers describe 12's ABI for every function used here.
constexpr int kMajors[] = {13, 12};

// Folders to try after the loader's own search (""): the GPU machine's toolkit is often not on
// the loader's path.
std::vector<std::string> search_dirs() {
  std::vector<std::string> dirs{""};
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) {
    dirs.push_back(std::string(home) + "/lib64");
  }
  dirs.emplace_back("/usr/local/cuda/lib64");
  dirs.emplace_back("/usr/local/cuda/targets/x86_64-linux/lib");
  return dirs;
}

std::string loaded_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) {
    return map->l_name;
  }
  return fallback;
}

struct Opened {
  void* handle = nullptr;
  std::string path;
  std::string dir;  // the folder it was found through ("" for the loader's search)
  int major = 0;
};

// The first `<stem>.so.<major>` that opens, trying `dirs` in order for each of `majors`.
Result<Opened> open_first(const char* stem, const std::vector<int>& majors,
                          const std::vector<std::string>& dirs) {
  std::string tried;
  for (int major : majors) {
    for (const std::string& dir : dirs) {
      std::string file = fmt::format("{}.so.{}", stem, major);
      std::string path = dir.empty() ? file : fmt::format("{}/{}", dir, file);
      // RTLD_NODELETE: the tables' pointers stay valid for the life of the process.
      if (void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)) {
        return Opened{h, loaded_path(h, path), dir, major};
      }
      const char* e = ::dlerror();
      tried += fmt::format("{}{} ({})", tried.empty() ? "" : "; ", path, e ? e : "?");
    }
  }
  return make_error(ErrorCode::kUnavailable,
                    fmt::format("{}: cannot open the library; tried {}; install the CUDA "
                                "toolkit's cuBLAS or set CUDA_HOME",
                                stem, tried));
}

std::string version_of(std::size_t v) {  // CUBLAS_VERSION's encoding: major*10000+minor*100+patch
  return fmt::format("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
}

Result<CublasLtApi> load_cublaslt() {
  auto lib = open_first("libcublasLt", {std::begin(kMajors), std::end(kMajors)}, search_dirs());
  if (!lib) return std::unexpected(lib.error());
  CublasLtApi api;
#define KTUNE_CUBLASLT_LOAD(name)                                                              \
  api.name =                                                                                   \
      reinterpret_cast<decltype(api.name)>(::dlsym(lib->handle, KTUNE_XSTR(cublasLt##name)));  \
  if (!api.name) {                                                                             \
    return make_error(ErrorCode::kUnavailable, fmt::format("cublasLt: {} lacks {}", lib->path, \
                                                           KTUNE_XSTR(cublasLt##name)));       \
  }
  KTUNE_CUBLASLT_FUNCTIONS(KTUNE_CUBLASLT_LOAD)
#undef KTUNE_CUBLASLT_LOAD
  api.path = lib->path;
  api.dir = lib->dir;
  api.major = lib->major;
  api.version = version_of(api.GetVersion());
  return api;
}

Result<CublasLtApi>& cublaslt_slot() {
  static std::once_flag once;
  static Result<CublasLtApi> api = make_error(ErrorCode::kInternal, "unset");
  std::call_once(once, [] { api = load_cublaslt(); });
  return api;
}

Result<CublasApi> load_cublas() {
  const Result<CublasLtApi>& lt = cublaslt_slot();
  if (!lt) {
    return make_error(ErrorCode::kUnavailable,
                      "cublas: needs cuBLASLt, which is unavailable: " + lt.error().message);
  }
  // libcublas.so.N links libcublasLt.so.N, already loaded above: the loader reuses it by soname.
  std::vector<std::string> dirs = search_dirs();
  if (!lt->dir.empty()) dirs.insert(dirs.begin(), lt->dir);
  auto lib = open_first("libcublas", {lt->major}, dirs);
  if (!lib) return std::unexpected(lib.error());
  CublasApi api;
#define KTUNE_CUBLAS_LOAD(name)                                                                    \
  api.name = reinterpret_cast<decltype(api.name)>(::dlsym(lib->handle, KTUNE_XSTR(cublas##name))); \
  if (!api.name) {                                                                                 \
    return make_error(ErrorCode::kUnavailable,                                                     \
                      fmt::format("cublas: {} lacks {}", lib->path, KTUNE_XSTR(cublas##name)));    \
  }
  KTUNE_CUBLAS_FUNCTIONS(KTUNE_CUBLAS_LOAD)
#undef KTUNE_CUBLAS_LOAD
  api.GemmEx = reinterpret_cast<CublasGemmExFn>(::dlsym(lib->handle, "cublasGemmEx"));
  if (!api.GemmEx) {
    return make_error(ErrorCode::kUnavailable,
                      fmt::format("cublas: {} lacks cublasGemmEx", lib->path));
  }
  api.path = lib->path;
  int major = 0, minor = 0, patch = 0;
  if (api.GetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      api.GetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      api.GetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS) {
    return make_error(ErrorCode::kUnavailable,
                      fmt::format("cublas: cublasGetProperty failed in {}", lib->path));
  }
  api.version = fmt::format("{}.{}.{}", major, minor, patch);
  return api;
}

ErrorCode code_of(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_INVALID_VALUE:
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return ErrorCode::kInvalidArgument;
    case CUBLAS_STATUS_NOT_INITIALIZED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return ErrorCode::kUnavailable;
    default:
      return ErrorCode::kIo;
  }
}

// The call's text up to its argument list: "GemmEx(handle, ...)" -> "GemmEx".
std::string call_name(const char* what) {
  std::string call(what);
  if (auto p = call.find('('); p != std::string::npos) call.resize(p);
  return call;
}

}  // namespace

Result<const CublasLtApi*> cublaslt_api() {
  const Result<CublasLtApi>& api = cublaslt_slot();
  if (!api) return std::unexpected(api.error());
  return &*api;
}

Result<const CublasApi*> cublas_api() {
  static std::once_flag once;
  static Result<CublasApi> api = make_error(ErrorCode::kInternal, "unset");
  std::call_once(once, [] { api = load_cublas(); });
  if (!api) return std::unexpected(api.error());
  return &*api;
}

namespace {

// The folders the loader searches after $LD_LIBRARY_PATH: those of /etc/ld.so.conf.d (one per
// line; comments and include lines skipped), then the system ones.
std::vector<std::string> loader_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("LD_LIBRARY_PATH"); env && *env) {
    std::stringstream in(env);
    for (std::string d; std::getline(in, d, ':');) {
      if (!d.empty()) dirs.push_back(d);
    }
  }
  std::error_code ec;
  std::vector<std::filesystem::path> confs;
  for (const auto& e : std::filesystem::directory_iterator("/etc/ld.so.conf.d", ec)) {
    if (e.path().extension() == ".conf") confs.push_back(e.path());
  }
  std::sort(confs.begin(), confs.end());
  for (const std::filesystem::path& conf : confs) {
    std::ifstream in(conf);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] != '/') continue;
      dirs.push_back(line.substr(0, line.find_first_of(" \t#")));
    }
  }
  for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                        "/usr/lib64", "/lib", "/usr/lib"}) {
    dirs.emplace_back(d);
  }
  return dirs;
}

// "libcublasLt.so.13.0.2.14 541595600": the real file behind the first `<stem>.so.<major>`
// found, as open_first() would try them; "" when none is found.
std::string file_identity(const char* stem, const std::vector<int>& majors) {
  std::vector<std::string> dirs = loader_dirs();
  for (const std::string& d : search_dirs()) {
    if (!d.empty()) dirs.push_back(d);
  }
  for (int major : majors) {
    for (const std::string& dir : dirs) {
      std::error_code ec;
      const std::filesystem::path path =
          std::filesystem::path(dir) / fmt::format("{}.so.{}", stem, major);
      const std::filesystem::path real = std::filesystem::canonical(path, ec);
      if (ec) continue;
      const std::uintmax_t size = std::filesystem::file_size(real, ec);
      if (ec) continue;
      return fmt::format("{} {}", real.filename().string(), size);
    }
  }
  return "";
}

}  // namespace

std::string cublas_version_text() {
  static const std::string text = [] {
    std::string file = file_identity("libcublas", {std::begin(kMajors), std::end(kMajors)});
    if (!file.empty()) return "cuBLAS " + file;
    auto api = cublas_api();
    return api ? "cuBLAS " + (*api)->version : std::string("cuBLAS unknown version");
  }();
  return text;
}

std::string cublaslt_version_text() {
  static const std::string text = [] {
    std::string file = file_identity("libcublasLt", {std::begin(kMajors), std::end(kMajors)});
    if (!file.empty()) return "cuBLASLt " + file;
    auto api = cublaslt_api();
    return api ? "cuBLASLt " + (*api)->version : std::string("cuBLASLt unknown version");
  }();
  return text;
}

Status cublas_status(const CublasApi& api, cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return {};
  const char* name = api.GetStatusName ? api.GetStatusName(s) : nullptr;
  const char* text = api.GetStatusString ? api.GetStatusString(s) : nullptr;
  return make_error(code_of(s), fmt::format("cublas{}: {} ({})", call_name(what), name ? name : "?",
                                            text ? text : "unknown error"));
}

Status cublaslt_status(const CublasLtApi& api, cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return {};
  const char* name = api.GetStatusName ? api.GetStatusName(s) : nullptr;
  const char* text = api.GetStatusString ? api.GetStatusString(s) : nullptr;
  return make_error(code_of(s), fmt::format("cublasLt{}: {} ({})", call_name(what),
                                            name ? name : "?", text ? text : "unknown error"));
}

}  // namespace ktune

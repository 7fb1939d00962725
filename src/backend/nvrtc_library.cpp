// NvrtcLibrary: dlopen of libnvrtc from the loader's path or the usual toolkit folders, the
// function table, the version and supported architectures, error text.
#include "backend/nvrtc_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace ktune {
namespace {

#define KTUNE_STR(x) #x

// Newest first: a toolkit newer than the headers ktune was built with still has every function
// of the table (NVRTC keeps its C API stable within and across these majors).
constexpr const char* kNames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};

std::vector<std::string> candidate_paths() {
  std::vector<std::string> paths(std::begin(kNames), std::end(kNames));
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') dirs.push_back(std::string(v) + "/lib64");
  }
  dirs.emplace_back("/usr/local/cuda/lib64");
  dirs.emplace_back("/usr/local/cuda/targets/x86_64-linux/lib");
  for (const std::string& d : dirs) {
    for (const char* n : kNames) paths.push_back(d + "/" + n);
  }
  return paths;
}

// The toolkit's header folder for the NVRTC at `library` (its file): where cuda_fp16.h is, next to
// the library (lib/../include in a toolkit, targets/<arch>/lib/../include, the wheels'
// nvidia/cuda_nvrtc/lib/../../cuda_runtime/include), else under $CUDA_HOME, $CUDA_PATH,
// /usr/local/cuda, /usr (Debian's nvidia-cuda-toolkit); then a cccl/ folder (CUB, Thrust,
// libcu++ in CUDA 13): the one beside those headers, else the first of the other folders'. Empty
// when no folder has cuda_fp16.h.
std::vector<std::string> toolkit_include_dirs(const std::string& library) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> dirs;
  if (!library.empty()) {
    const fs::path lib = fs::canonical(library, ec);
    if (!ec) {
      dirs.push_back(lib.parent_path().parent_path() / "include");
      dirs.push_back(lib.parent_path().parent_path().parent_path() / "cuda_runtime" / "include");
    }
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') dirs.push_back(fs::path(v) / "include");
  }
  dirs.emplace_back("/usr/local/cuda/include");
  dirs.emplace_back("/usr/include");
  std::vector<std::string> out;
  std::size_t found = dirs.size();
  for (std::size_t i = 0; i < dirs.size() && found == dirs.size(); ++i) {
    if (fs::is_regular_file(dirs[i] / "cuda_fp16.h", ec)) found = i;
  }
  if (found == dirs.size()) return out;
  out.push_back(dirs[found].lexically_normal().string());
  // CCCL beside those headers, else the first folder's that has it (the Python wheels' NVRTC
  // comes without it, a toolkit installed beside them has it).
  const auto has_cccl = [&](const fs::path& d) {
    return fs::is_regular_file(d / "cccl" / "cub" / "cub.cuh", ec);
  };
  const auto cccl = has_cccl(dirs[found]) ? dirs.begin() + static_cast<std::ptrdiff_t>(found)
                                          : std::find_if(dirs.begin(), dirs.end(), has_cccl);
  if (cccl != dirs.end()) out.push_back((*cccl / "cccl").lexically_normal().string());
  return out;
}

Result<NvrtcLibrary> open_nvrtc() {
  void* lib = nullptr;
  std::string opened;
  std::string last_error;
  for (const std::string& p : candidate_paths()) {
    // RTLD_NODELETE: the table's pointers stay valid for the life of the process.
    lib = ::dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (lib != nullptr) {
      opened = p;
      break;
    }
    const char* e = ::dlerror();
    if (last_error.empty() && e != nullptr) last_error = e;  // the first, plain-name one
  }
  if (lib == nullptr) {
    return make_error(ErrorCode::kUnavailable,
                      fmt::format("cuda: NVRTC not found (libnvrtc.so.13/.12 on the loader's path, "
                                  "$CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda); install "
                                  "the CUDA toolkit or set CUDA_HOME ({})",
                                  last_error));
  }
  NvrtcLibrary nv;
  nv.path = opened;
#define KTUNE_NVRTC_LOAD(name)                                                              \
  nv.name = reinterpret_cast<decltype(nv.name)>(::dlsym(lib, KTUNE_STR(nvrtc##name)));      \
  if (!nv.name) {                                                                           \
    return make_error(ErrorCode::kUnavailable,                                              \
                      fmt::format("cuda: {} lacks {}; is it older than CUDA 11.2?", opened, \
                                  KTUNE_STR(nvrtc##name)));                                 \
  }
  KTUNE_NVRTC_FUNCTIONS(KTUNE_NVRTC_LOAD)
#undef KTUNE_NVRTC_LOAD
  if (nvrtcResult r = nv.Version(&nv.major, &nv.minor); r != NVRTC_SUCCESS) {
    return make_error(ErrorCode::kUnavailable, fmt::format("cuda: nvrtcVersion failed in {}: {}",
                                                           opened, nv.GetErrorString(r)));
  }
  // The file the loader took (a plain name is found through the loader's path).
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(nv.Version), &info) != 0 && info.dli_fname != nullptr) {
    nv.include_dirs = toolkit_include_dirs(info.dli_fname);
  } else {
    nv.include_dirs = toolkit_include_dirs({});
  }
  int count = 0;
  if (nv.GetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
    nv.supported_archs.resize(static_cast<std::size_t>(count));
    if (nv.GetSupportedArchs(nv.supported_archs.data()) != NVRTC_SUCCESS) {
      nv.supported_archs.clear();  // unknown: compile() reports a bad arch instead
    }
  }
  return nv;
}

}  // namespace

Result<const NvrtcLibrary*> nvrtc_library() {
  static std::once_flag once;
  static Result<NvrtcLibrary> library = make_error(ErrorCode::kInternal, "unset");
  std::call_once(once, [] { library = open_nvrtc(); });
  if (!library) return std::unexpected(library.error());
  return &*library;
}

Status nvrtc_status(const NvrtcLibrary& nvrtc, nvrtcResult r, const char* what, ErrorCode code) {
  if (r == NVRTC_SUCCESS) return {};
  const char* text = nvrtc.GetErrorString != nullptr ? nvrtc.GetErrorString(r) : nullptr;
  return make_error(code, fmt::format("{}: {}", what, text != nullptr ? text : "unknown error"));
}

namespace {

// One NVRTC program, destroyed on every path.
class Program {
 public:
  explicit Program(const NvrtcLibrary& nv) : nv_(nv) {}
  ~Program() {
    if (prog_ != nullptr) nv_.DestroyProgram(&prog_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram* out() { return &prog_; }
  nvrtcProgram get() const { return prog_; }

  std::string log() const {
    std::size_t size = 0;
    if (nv_.GetProgramLogSize(prog_, &size) != NVRTC_SUCCESS || size <= 1) return "";
    std::string text(size, '\0');
    if (nv_.GetProgramLog(prog_, text.data()) != NVRTC_SUCCESS) return "";
    while (!text.empty() && text.back() == '\0') text.pop_back();
    return text;
  }

 private:
  const NvrtcLibrary& nv_;
  nvrtcProgram prog_ = nullptr;
};

}  // namespace

Result<NvrtcCompiled> nvrtc_compile(const NvrtcLibrary& nv, const std::string& source,
                                    const std::string& program_name,
                                    const std::vector<std::string>& options,
                                    const std::vector<std::string>& name_expressions) {
  Program prog(nv);
  if (Status s = nvrtc_status(
          nv,
          nv.CreateProgram(prog.out(), source.c_str(), program_name.c_str(), 0, nullptr, nullptr),
          "nvrtcCreateProgram");
      !s) {
    return std::unexpected(s.error());
  }
  for (const std::string& name : name_expressions) {
    if (Status s = nvrtc_status(nv, nv.AddNameExpression(prog.get(), name.c_str()),
                                "nvrtcAddNameExpression");
        !s) {
      return make_error(ErrorCode::kCompile,
                        fmt::format("entry '{}': {}", name, s.error().message));
    }
  }
  std::vector<const char*> argv;
  argv.reserve(options.size());
  for (const std::string& o : options) argv.push_back(o.c_str());
  NvrtcCompiled out;
  out.result = nv.CompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
  out.log = prog.log();
  if (out.result != NVRTC_SUCCESS) return out;
  std::size_t size = 0;
  if (Status s = nvrtc_status(nv, nv.GetCUBINSize(prog.get(), &size), "nvrtcGetCUBINSize"); !s) {
    return std::unexpected(s.error());
  }
  out.cubin.assign(size, '\0');
  if (size > 0) {
    if (Status s = nvrtc_status(nv, nv.GetCUBIN(prog.get(), out.cubin.data()), "nvrtcGetCUBIN");
        !s) {
      return std::unexpected(s.error());
    }
  }
  for (const std::string& name : name_expressions) {
    const char* lowered = nullptr;
    if (Status s = nvrtc_status(nv, nv.GetLoweredName(prog.get(), name.c_str(), &lowered),
                                "nvrtcGetLoweredName");
        !s || lowered == nullptr) {
      return make_error(ErrorCode::kCompile,
                        fmt::format("entry '{}' names no __global__ function of the source{}", name,
                                    s ? "" : ": " + s.error().message));
    }
    out.lowered.emplace_back(lowered);
  }
  return out;
}

}  // namespace ktune

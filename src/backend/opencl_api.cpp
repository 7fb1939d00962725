// OpenCLApi: dlopen of the ICD loader, the function table, error names, device selection,
// contexts and program builds.
#include "backend/opencl_api.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include "backend/artifact_digest.h"
#include "core/utf8.h"

namespace ktune {
namespace {

Result<OpenCLApi> open_api() {
  // RTLD_NODELETE: the table's pointers stay valid for the life of the process.
  void* lib = ::dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!lib) {
    return make_error(ErrorCode::kUnavailable,
                      fmt::format("opencl: no OpenCL ICD loader on this machine (dlopen "
                                  "libOpenCL.so.1: {})",
                                  ::dlerror()));
  }
  OpenCLApi cl;
#define KTUNE_OPENCL_LOAD(name)                                                                  \
  cl.name = reinterpret_cast<decltype(cl.name)>(::dlsym(lib, "cl" #name));                       \
  if (!cl.name) {                                                                                \
    return make_error(ErrorCode::kUnavailable,                                                   \
                      "opencl: the ICD loader lacks cl" #name "; expected OpenCL 1.2 or later"); \
  }
  KTUNE_OPENCL_FUNCTIONS(KTUNE_OPENCL_LOAD)
#undef KTUNE_OPENCL_LOAD
  return cl;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// An index ("1") or a case-insensitive substring of `name`.
bool matches(std::string_view part, int index, const std::string& name) {
  if (part.empty()) return true;
  int n = 0;
  auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), n);
  if (ec == std::errc() && p == part.data() + part.size()) return n == index;
  return lower(name).find(lower(part)) != std::string::npos;
}

std::string platform_string(const OpenCLApi& cl, cl_platform_id p, cl_platform_info what) {
  std::size_t size = 0;
  if (cl.GetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  cl.GetPlatformInfo(p, what, size, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string device_string(const OpenCLApi& cl, cl_device_id d, cl_device_info what) {
  std::size_t size = 0;
  if (cl.GetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  cl.GetDeviceInfo(d, what, size, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

template <typename T>
T device_value(const OpenCLApi& cl, cl_device_id d, cl_device_info what) {
  T v{};
  cl.GetDeviceInfo(d, what, sizeof(T), &v, nullptr);
  return v;
}

std::string build_log(const OpenCLContext& ctx, cl_program program) {
  const OpenCLApi& cl = ctx.api();
  std::size_t size = 0;
  cl_device_id dev = ctx.info().device;
  if (cl.GetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS ||
      size == 0) {
    return {};
  }
  std::string log(size, '\0');
  cl.GetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  constexpr std::size_t kMaxLog = 4000;
  if (log.size() > kMaxLog) log = std::string(utf8_prefix(log, kMaxLog)) + "\n...";
  return log;
}

Result<OpenCLProgram> finish_build(const OpenCLContext& ctx, cl_program program,
                                   const std::string& options) {
  OpenCLProgram owned(&ctx.api(), program);
  cl_device_id dev = ctx.info().device;
  cl_int r = ctx.api().BuildProgram(program, 1, &dev, options.c_str(), nullptr, nullptr);
  if (r != CL_SUCCESS) {
    return make_error(ErrorCode::kCompile, fmt::format("clBuildProgram: {}: {}", cl_error_name(r),
                                                       build_log(ctx, program)));
  }
  return owned;
}

}  // namespace

Result<const OpenCLApi*> opencl_api() {
  static std::once_flag once;
  static Result<OpenCLApi> api = make_error(ErrorCode::kInternal, "unset");
  std::call_once(once, [] { api = open_api(); });
  if (!api) return std::unexpected(api.error());
  return &*api;
}

std::string cl_error_name(cl_int code) {
  switch (code) {
#define KTUNE_CL_CASE(c) \
  case c:                \
    return fmt::format("{} ({})", #c, code);
    KTUNE_CL_CASE(CL_DEVICE_NOT_FOUND)
    KTUNE_CL_CASE(CL_DEVICE_NOT_AVAILABLE)
    KTUNE_CL_CASE(CL_COMPILER_NOT_AVAILABLE)
    KTUNE_CL_CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    KTUNE_CL_CASE(CL_OUT_OF_RESOURCES)
    KTUNE_CL_CASE(CL_OUT_OF_HOST_MEMORY)
    KTUNE_CL_CASE(CL_PROFILING_INFO_NOT_AVAILABLE)
    KTUNE_CL_CASE(CL_BUILD_PROGRAM_FAILURE)
    KTUNE_CL_CASE(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    KTUNE_CL_CASE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    KTUNE_CL_CASE(CL_INVALID_VALUE)
    KTUNE_CL_CASE(CL_INVALID_DEVICE)
    KTUNE_CL_CASE(CL_INVALID_BINARY)
    KTUNE_CL_CASE(CL_INVALID_BUILD_OPTIONS)
    KTUNE_CL_CASE(CL_INVALID_PROGRAM_EXECUTABLE)
    KTUNE_CL_CASE(CL_INVALID_KERNEL_NAME)
    KTUNE_CL_CASE(CL_INVALID_KERNEL_ARGS)
    KTUNE_CL_CASE(CL_INVALID_ARG_INDEX)
    KTUNE_CL_CASE(CL_INVALID_ARG_VALUE)
    KTUNE_CL_CASE(CL_INVALID_ARG_SIZE)
    KTUNE_CL_CASE(CL_INVALID_WORK_DIMENSION)
    KTUNE_CL_CASE(CL_INVALID_WORK_GROUP_SIZE)
    KTUNE_CL_CASE(CL_INVALID_WORK_ITEM_SIZE)
    KTUNE_CL_CASE(CL_INVALID_GLOBAL_WORK_SIZE)
    KTUNE_CL_CASE(CL_INVALID_BUFFER_SIZE)
    KTUNE_CL_CASE(CL_INVALID_MEM_OBJECT)
#undef KTUNE_CL_CASE
    default:
      return fmt::format("OpenCL error {}", code);
  }
}

Status cl_status(cl_int code, const char* what) {
  if (code == CL_SUCCESS) return {};
  return make_error(ErrorCode::kIo, fmt::format("{}: {}", what, cl_error_name(code)));
}

std::string OpenCLDeviceInfo::fingerprint() const {
  return fmt::format("opencl {} | {} | {} | driver {} | {}", platform_name, name, vendor,
                     driver_version, opencl_c_version);
}

Result<OpenCLDeviceInfo> opencl_select_device(std::string_view selector) {
  Result<const OpenCLApi*> api = opencl_api();
  if (!api) return std::unexpected(api.error());
  const OpenCLApi& cl = **api;
  std::string sel(selector);
  if (sel.empty()) {
    const char* env = std::getenv(kOpenCLDeviceEnv);
    if (env != nullptr) sel = env;
  }
  std::string_view platform_part, device_part = sel;
  if (auto colon = sel.find(':'); colon != std::string::npos) {
    platform_part = std::string_view(sel).substr(0, colon);
    device_part = std::string_view(sel).substr(colon + 1);
  }
  cl_uint np = 0;
  if (cl.GetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0) {
    return make_error(ErrorCode::kUnavailable,
                      "opencl: no OpenCL platform (is an ICD such as pocl-opencl-icd installed?)");
  }
  std::vector<cl_platform_id> platforms(np);
  cl.GetPlatformIDs(np, platforms.data(), nullptr);
  std::vector<std::string> seen;
  for (cl_uint pi = 0; pi < np; ++pi) {
    const std::string pname = platform_string(cl, platforms[pi], CL_PLATFORM_NAME);
    cl_uint nd = 0;
    if (cl.GetDeviceIDs(platforms[pi], CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS) nd = 0;
    std::vector<cl_device_id> devices(nd);
    if (nd > 0) cl.GetDeviceIDs(platforms[pi], CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr);
    for (cl_uint di = 0; di < nd; ++di) {
      const std::string dname = device_string(cl, devices[di], CL_DEVICE_NAME);
      seen.push_back(fmt::format("{}:{} '{}' on '{}'", pi, di, dname, pname));
      // A lone part that is not an index may name the platform or the device.
      bool ok = platform_part.empty() && !device_part.empty() && !std::isdigit(device_part[0])
                    ? matches(device_part, static_cast<int>(di), dname) ||
                          matches(device_part, static_cast<int>(pi), pname)
                    : matches(platform_part, static_cast<int>(pi), pname) &&
                          matches(device_part, static_cast<int>(di), dname);
      if (!ok) continue;
      OpenCLDeviceInfo info;
      info.platform = platforms[pi];
      info.device = devices[di];
      info.platform_index = static_cast<int>(pi);
      info.device_index = static_cast<int>(di);
      info.platform_name = pname;
      info.name = dname;
      info.vendor = device_string(cl, devices[di], CL_DEVICE_VENDOR);
      info.driver_version = device_string(cl, devices[di], CL_DRIVER_VERSION);
      info.device_version = device_string(cl, devices[di], CL_DEVICE_VERSION);
      info.opencl_c_version = device_string(cl, devices[di], CL_DEVICE_OPENCL_C_VERSION);
      info.base_addr_align_bytes = std::max<std::size_t>(
          device_value<cl_uint>(cl, devices[di], CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8, 1);
      info.max_work_group_size =
          device_value<std::size_t>(cl, devices[di], CL_DEVICE_MAX_WORK_GROUP_SIZE);
      info.local_mem_bytes = device_value<cl_ulong>(cl, devices[di], CL_DEVICE_LOCAL_MEM_SIZE);
      info.cache_bytes = device_value<cl_ulong>(cl, devices[di], CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
      return info;
    }
  }
  if (seen.empty()) return make_error(ErrorCode::kUnavailable, "opencl: no OpenCL device");
  std::string list;
  for (const std::string& s : seen) list += (list.empty() ? "" : ", ") + s;
  return make_error(ErrorCode::kNotFound,
                    fmt::format("opencl: no device matches '{}'; devices: {}", sel, list));
}

Result<OpenCLContext> OpenCLContext::create(const OpenCLDeviceInfo& device) {
  Result<const OpenCLApi*> api = opencl_api();
  if (!api) return std::unexpected(api.error());
  OpenCLContext ctx;
  ctx.api_ = *api;
  ctx.info_ = device;
  cl_int r = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   reinterpret_cast<cl_context_properties>(device.platform), 0};
  ctx.context_ = ctx.api_->CreateContext(props, 1, &device.device, nullptr, nullptr, &r);
  if (Status s = cl_status(r, "clCreateContext"); !s) return std::unexpected(s.error());
  ctx.queue_ =
      ctx.api_->CreateCommandQueue(ctx.context_, device.device, CL_QUEUE_PROFILING_ENABLE, &r);
  if (Status s = cl_status(r, "clCreateCommandQueue"); !s) return std::unexpected(s.error());
  return ctx;
}

OpenCLContext& OpenCLContext::operator=(OpenCLContext&& o) noexcept {
  if (this != &o) {
    this->~OpenCLContext();
    api_ = o.api_;
    info_ = o.info_;
    context_ = std::exchange(o.context_, nullptr);
    queue_ = std::exchange(o.queue_, nullptr);
  }
  return *this;
}

OpenCLContext::~OpenCLContext() {
  if (queue_) api_->ReleaseCommandQueue(queue_);
  if (context_) api_->ReleaseContext(context_);
  queue_ = nullptr;
  context_ = nullptr;
}

OpenCLProgram& OpenCLProgram::operator=(OpenCLProgram&& o) noexcept {
  if (this != &o) {
    this->~OpenCLProgram();
    api_ = o.api_;
    program_ = std::exchange(o.program_, nullptr);
  }
  return *this;
}

OpenCLProgram::~OpenCLProgram() {
  if (program_) api_->ReleaseProgram(program_);
  program_ = nullptr;
}

Result<OpenCLProgram> build_opencl_source(const OpenCLContext& ctx, const std::string& source,
                                          const std::string& options) {
  const char* text = source.c_str();
  const std::size_t length = source.size();
  cl_int r = CL_SUCCESS;
  cl_program p = ctx.api().CreateProgramWithSource(ctx.context(), 1, &text, &length, &r);
  if (Status s = cl_status(r, "clCreateProgramWithSource"); !s) return std::unexpected(s.error());
  return finish_build(ctx, p, options);
}

Result<OpenCLProgram> build_opencl_binary(const OpenCLContext& ctx, const std::string& binary,
                                          const std::string& options) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
  const std::size_t length = binary.size();
  cl_int status = CL_SUCCESS, r = CL_SUCCESS;
  cl_device_id dev = ctx.info().device;
  cl_program p =
      ctx.api().CreateProgramWithBinary(ctx.context(), 1, &dev, &length, &bytes, &status, &r);
  if (r == CL_SUCCESS && status != CL_SUCCESS) r = status;
  if (r != CL_SUCCESS) {
    if (p) ctx.api().ReleaseProgram(p);
    return std::unexpected(cl_status(r, "clCreateProgramWithBinary").error());
  }
  return finish_build(ctx, p, options);
}

std::string opencl_program_binary(const OpenCLContext& ctx, const OpenCLProgram& p) {
  std::size_t size = 0;
  if (ctx.api().GetProgramInfo(p.get(), CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr) !=
          CL_SUCCESS ||
      size == 0) {
    return {};
  }
  std::string binary(size, '\0');
  unsigned char* ptr = reinterpret_cast<unsigned char*>(binary.data());
  if (ctx.api().GetProgramInfo(p.get(), CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr) !=
      CL_SUCCESS) {
    return {};
  }
  return binary;
}

Result<OpenCLProgram> load_opencl_artifact(const OpenCLContext& ctx,
                                           const std::string& artifact_path) {
  std::filesystem::path path(artifact_path);
  std::filesystem::path stem = path;
  stem.replace_extension();
  // Each file is checked against the digest recorded when it was compiled: the build options
  // and the source are as much the kernel as the binary.
  Result<std::string> options = read_verified_artifact(stem.string() + ".clopt");
  if (!options) return std::unexpected(options.error());
  if (path.extension() == ".clbin") {
    // A binary that is not as compiled is never built: the checked source beside it is.
    if (Result<std::string> binary = read_verified_artifact(path); binary && !binary->empty()) {
      Result<OpenCLProgram> p = build_opencl_binary(ctx, *binary, *options);
      if (p) return p;
    }
    // A binary of another device or driver, or one refused: the source beside it still builds.
  }
  Result<std::string> source = read_verified_artifact(stem.string() + ".cl");
  if (!source) return std::unexpected(source.error());
  return build_opencl_source(ctx, *source, *options);
}

}  // namespace ktune

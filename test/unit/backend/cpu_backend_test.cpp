// CpuBackend: a real compile, load and launch with mixed arguments; the code cache (no second
// compiler run, keys that follow the flags); compiler errors and deadlines; the translation unit.
#include "ktune/backend/cpu_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "core/thread_pool.h"
#include "support/temp_dir.h"

namespace ktune {
namespace {

using namespace std::chrono_literals;

constexpr const char* kScaleCode = R"(
void scale(float* out, const float* in, int n, double s) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<float>(in[i] * s) + OFFSET;
}
)";

KernelSource scale_source(std::string offset = "0") {
  KernelSource src;
  src.name = "scale_OFFSET" + offset;
  src.code = kScaleCode;
  src.entry = "scale";
  src.signature = {{"out", ArgRole::kOut, DType::kF32},
                   {"in", ArgRole::kIn, DType::kF32},
                   {"n", ArgRole::kScalar, DType::kI64},
                   {"s", ArgRole::kScalar, DType::kF64}};
  src.defines = {{"OFFSET", offset}};
  return src;
}

CpuCompileOptions test_options() {
  CpuCompileOptions o;
  o.compiler = "c++";
  o.flags = {"-O1", "-shared", "-fPIC", "-std=c++17"};
  o.timeout = 60s;
  return o;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int count_lines(const std::filesystem::path& p) {
  std::string text = slurp(p);
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

class CpuBackendTest : public ::testing::Test {
 protected:
  CpuBackend make(CpuCompileOptions options) {
    auto b = CpuBackend::create(std::move(options), dir_.path() / "cache");
    if (!b) {
      std::fprintf(stderr, "CpuBackend::create: %s\n", b.error().message.c_str());
      std::abort();
    }
    return std::move(*b);
  }
  test::TempDir dir_;
};

TEST_F(CpuBackendTest, CompilesLoadsAndLaunchesWithMixedArguments) {
  CpuBackend backend = make(test_options());
  auto artifact = backend.compile(scale_source("1"));
  ASSERT_TRUE(artifact.has_value()) << artifact.error().message;
  EXPECT_FALSE(artifact->from_cache);
  EXPECT_GT(artifact->compile_s, 0);
  EXPECT_TRUE(std::filesystem::exists(artifact->path));
  // The source stays beside the object, under the same key.
  std::filesystem::path cpp = artifact->path;
  cpp.replace_extension(".cpp");
  EXPECT_EQ(slurp(cpp), CpuBackend::translation_unit(scale_source("1")));

  auto module = backend.load(*artifact);
  ASSERT_TRUE(module.has_value()) << module.error().message;
  std::vector<float> in = {1, 2, 3, 4, 5};
  std::vector<float> out(5, -7.0f);
  std::int64_t n = 4;  // the last element must stay untouched
  double s = 2.5;
  void* args[] = {out.data(), in.data(), &n, &s};
  ASSERT_TRUE((*module)->launch(args).has_value());
  EXPECT_EQ(out, (std::vector<float>{3.5f, 6.0f, 8.5f, 11.0f, -7.0f}));
}

TEST_F(CpuBackendTest, SecondCompileComesFromTheCacheWithoutRunningTheCompiler) {
  // A compiler wrapper that logs every compile (not --version) and forwards to the real one.
  std::filesystem::path log = dir_.path() / "compiles.log";
  std::filesystem::path wrapper = dir_.path() / "cxx-wrapper.sh";
  std::ofstream(wrapper) << "#!/bin/sh\n"
                         << "if [ \"$1\" = --version ]; then exec c++ --version; fi\n"
                         << "echo compile >> '" << log.string() << "'\n"
                         << "exec c++ \"$@\"\n";
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  CpuCompileOptions options = test_options();
  options.compiler = wrapper.string();
  CpuBackend backend = make(options);

  auto first = backend.compile(scale_source());
  ASSERT_TRUE(first.has_value()) << first.error().message;
  EXPECT_FALSE(first->from_cache);
  auto second = backend.compile(scale_source());
  ASSERT_TRUE(second.has_value()) << second.error().message;
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->compile_s, 0);
  EXPECT_EQ(second->key, first->key);
  EXPECT_EQ(second->path, first->path);
  EXPECT_EQ(count_lines(log), 1);

  // A fresh backend on the same folder finds it too.
  CpuBackend again = make(options);
  auto third = again.compile(scale_source());
  ASSERT_TRUE(third.has_value());
  EXPECT_TRUE(third->from_cache);
  EXPECT_EQ(count_lines(log), 1);
}

// --verbose's hook: told the kernel and the command line of each compiler run, not of a cache
// hit, and no part of the key (a backend without it finds the same artifact).
TEST_F(CpuBackendTest, OnCommandSeesEachCompilerRunButNoCacheHit) {
  std::vector<std::pair<std::string, std::string>> seen;
  CpuCompileOptions options = test_options();
  options.on_command = [&](const std::string& kernel, const std::string& command) {
    seen.emplace_back(kernel, command);
  };
  CpuBackend backend = make(options);
  auto first = backend.compile(scale_source("3"));
  ASSERT_TRUE(first.has_value()) << first.error().message;
  ASSERT_TRUE(backend.compile(scale_source("3")).has_value());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, "scale_OFFSET3");
  EXPECT_TRUE(seen[0].second.starts_with("c++ -O1 -shared -fPIC -std=c++17 -o ")) << seen[0].second;
  EXPECT_TRUE(seen[0].second.ends_with(".cpp")) << seen[0].second;

  CpuBackend quiet = make(test_options());
  auto hit = quiet.compile(scale_source("3"));
  ASSERT_TRUE(hit.has_value()) << hit.error().message;
  EXPECT_TRUE(hit->from_cache);
  EXPECT_EQ(hit->key, first->key);
}

TEST_F(CpuBackendTest, KeyFollowsSourceFlagsAndExtraFlags) {
  CpuBackend o1 = make(test_options());
  CpuCompileOptions opts2 = test_options();
  opts2.flags[0] = "-O2";
  CpuBackend o2 = make(opts2);

  auto a = o1.compile(scale_source());
  auto b = o2.compile(scale_source());
  KernelSource extra = scale_source();
  extra.extra_flags = {"-DUNUSED_FLAG=1"};
  auto c = o1.compile(extra);
  auto d = o1.compile(scale_source("2"));
  ASSERT_TRUE(a && b && c && d);
  EXPECT_NE(a->key, b->key);
  EXPECT_NE(a->key, c->key);
  EXPECT_NE(a->key, d->key);
  EXPECT_FALSE(b->from_cache);
  EXPECT_FALSE(c->from_cache);
}

TEST_F(CpuBackendTest, CompileErrorCarriesTheCompilerMessage) {
  CpuBackend backend = make(test_options());
  KernelSource bad = scale_source();
  bad.name = "broken_kernel";
  bad.code = "void scale(float* out, const float* in, int n, double s) { this is not c++; }\n";
  auto r = backend.compile(bad);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kCompile);
  const std::string& msg = r.error().message;
  EXPECT_TRUE(msg.starts_with("broken_kernel: compiler exited with 1: ")) << msg;
  EXPECT_NE(msg.find("error"), std::string::npos) << msg;
  EXPECT_NE(msg.find("broken_kernel:1"), std::string::npos) << msg;  // #line names the kernel
  // Nothing was committed and no temporary file was left behind.
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir_.path() / "cache")) {
    EXPECT_FALSE(e.is_regular_file()) << e.path();
  }
}

TEST_F(CpuBackendTest, CompilePastTheDeadlineIsATimeout) {
  CpuBackend backend = make(test_options());
  CpuCompileOptions fast = test_options();
  fast.timeout = 1ms;  // no compiler finishes a translation unit that quickly
  CpuBackend quick = make(fast);
  auto r = quick.compile(scale_source("5"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(r.error().message, "scale_OFFSET5: compile exceeded 1 ms");
  EXPECT_FALSE(backend.compile(scale_source("5"))->from_cache);  // nothing half-written
}

TEST_F(CpuBackendTest, ConcurrentCompilesOfOneKeyAllSucceed) {
  CpuBackend backend = make(test_options());
  ThreadPool pool(2);
  std::vector<Result<Artifact>> results(4, make_error(ErrorCode::kInternal, "not run"));
  for (auto& slot : results) pool.submit([&] { slot = backend.compile(scale_source("3")); });
  pool.wait_idle();
  for (const auto& r : results) {
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(r->key, results[0]->key);
  }
  auto module = backend.load(*results[0]);
  ASSERT_TRUE(module.has_value()) << module.error().message;
}

TEST_F(CpuBackendTest, MissingCompilerIsUnavailable) {
  CpuCompileOptions options = test_options();
  options.compiler = "ktune-no-such-compiler";
  auto r = CpuBackend::create(options, dir_.path());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message.find("ktune-no-such-compiler"), std::string::npos);
}

TEST_F(CpuBackendTest, LoadOfAMissingArtifactIsAnIoError) {
  CpuBackend backend = make(test_options());
  Artifact missing;
  missing.path = dir_.path() / "nothing.so";
  auto r = backend.load(missing);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
  EXPECT_NE(r.error().message.find("nothing.so"), std::string::npos) << r.error().message;
}

// An artifact is loaded only as compiled: one swapped after compiling is refused, and one in a
// folder others can write is loaded from a private copy of the checked bytes, which is removed.
TEST_F(CpuBackendTest, LoadChecksTheDigestAndCopiesOutOfASharedFolder) {
  CpuBackend backend = make(test_options());
  auto a = backend.compile(scale_source("1"));
  ASSERT_TRUE(a.has_value()) << a.error().message;
  const std::filesystem::path shared = dir_.path() / "shared";
  std::filesystem::create_directory(shared);
  std::filesystem::permissions(shared, std::filesystem::perms::all);
  const std::filesystem::path so = shared / "k.so";
  std::filesystem::copy_file(a->path, so);
  std::filesystem::copy_file(a->path.string() + ".sha256", so.string() + ".sha256");
  auto loaded = load_cpu_module(so);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(shared)) files += e.exists() ? 1 : 0;
  EXPECT_EQ(files, 2);  // the artifact and its record; the copy is gone

  auto other = backend.compile(scale_source("2"));
  ASSERT_TRUE(other.has_value());
  std::filesystem::copy_file(other->path, so, std::filesystem::copy_options::overwrite_existing);
  auto swapped = load_cpu_module(so);
  ASSERT_FALSE(swapped.has_value());
  EXPECT_NE(swapped.error().message.find("does not match the SHA-256"), std::string::npos)
      << swapped.error().message;
}

TEST_F(CpuBackendTest, FingerprintsNameTheCompilerAndFlags) {
  CpuBackend backend = make(test_options());
  EXPECT_EQ(backend.kind(), DeviceKind::kCpu);
  std::string tc = backend.toolchain_fingerprint();
  EXPECT_NE(tc.find(" -O1 -shared -fPIC -std=c++17"), std::string::npos) << tc;
  EXPECT_FALSE(tc.starts_with(" "));  // the compiler's --version line comes first
  EXPECT_EQ(backend.device_fingerprint(), cpu_fingerprint());
}

TEST(CpuTranslationUnit, HasDefinesCodeAndShim) {
  std::string tu = CpuBackend::translation_unit(scale_source("7"));
  EXPECT_TRUE(
      tu.starts_with("// generated by ktune: scale_OFFSET7\n"
                     "#line 1 \"<tuning parameters>\"\n#define OFFSET 7\n"))
      << tu;
  EXPECT_NE(tu.find(kScaleCode), std::string::npos);
  EXPECT_NE(tu.find("#include <cstdint>"), std::string::npos);
  EXPECT_NE(tu.find("extern \"C\" void ktune_entry(void* const* args)"), std::string::npos);
  EXPECT_NE(tu.find("*static_cast<const std::int64_t*>(args[2])"), std::string::npos) << tu;
  EXPECT_NE(tu.find("*static_cast<const double*>(args[3])"), std::string::npos) << tu;
  EXPECT_NE(tu.find("ktune_shim::Buffer{args[1]}"), std::string::npos) << tu;
  EXPECT_LT(tu.find(kScaleCode), tu.find("ktune_entry"));
}

}  // namespace
}  // namespace ktune

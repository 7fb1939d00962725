// Extern choices: the openblas.gemm binding (roles, literals, errors), supports() against
// problems (kinds, dtypes, shapes, strides), and results against a naive loop for f32 and f64,
// transposed and with padded rows.
#include "ktune/choice/extern_choice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace ktune {
namespace {

// Extern choices never compile or load through a backend; this one fails loudly if they try.
class NoBackend final : public Backend {
 public:
  DeviceKind kind() const override { return DeviceKind::kCpu; }
  std::string device_fingerprint() const override { return "none"; }
  std::string toolchain_fingerprint() const override { return "none"; }
  Result<Artifact> compile(const KernelSource&) const override {
    return make_error(ErrorCode::kInternal, "NoBackend::compile");
  }
  Result<std::unique_ptr<Module>> load(const Artifact&) const override {
    return make_error(ErrorCode::kInternal, "NoBackend::load");
  }
};

using Bind = std::vector<std::pair<std::string, std::string>>;

Bind gemm_bind() {
  return {{"c", "C"}, {"a", "A"}, {"b", "B"}, {"m", "M"}, {"n", "N"}, {"k", "K"}};
}

ChoicePtr make(Bind bind, std::string name = "") {
  auto c = make_extern_choice({std::move(name), "openblas.gemm", std::move(bind)});
  KTUNE_CHECK(c.has_value());
  return std::move(*c);
}

// C[m,n] = A[m,k] B[k,n], or with A stored [k,m] / B stored [n,k] when transposed; `pad` extra
// elements at the end of each row of A.
Problem gemm_problem(DType dt, std::int64_t m, std::int64_t n, std::int64_t k, bool ta = false,
                     bool tb = false, std::int64_t pad = 0) {
  Problem p;
  p.op = "gemm";
  TensorSpec a = ta ? TensorSpec::contiguous(dt, {k, m}) : TensorSpec::contiguous(dt, {m, k});
  a.strides[0] += pad;
  p.args.push_back({{"C", ArgRole::kOut, dt}, TensorSpec::contiguous(dt, {m, n}), {}});
  p.args.push_back({{"A", ArgRole::kIn, dt}, a, {}});
  p.args.push_back({{"B", ArgRole::kIn, dt},
                    tb ? TensorSpec::contiguous(dt, {n, k}) : TensorSpec::contiguous(dt, {k, n}),
                    {}});
  p.args.push_back({{"M", ArgRole::kScalar, DType::kI64}, {}, ScalarValue{m}});
  p.args.push_back({{"N", ArgRole::kScalar, DType::kI32}, {}, ScalarValue{n}});
  p.args.push_back({{"K", ArgRole::kScalar, DType::kI64}, {}, ScalarValue{k}});
  return p;
}

template <class T>
void check_gemm(DType dt, bool ta, bool tb, std::int64_t pad) {
  const std::int64_t m = 5, n = 7, k = 3;
  Problem p = gemm_problem(dt, m, n, k, ta, tb, pad);
  Bind bind = gemm_bind();
  bind.emplace_back("trans_a", ta ? "1" : "0");
  bind.emplace_back("trans_b", tb ? "1" : "0");
  bind.emplace_back("alpha", "2");
  ChoicePtr choice = make(bind);
  ASSERT_TRUE(choice->supports(p).has_value()) << choice->supports(p).error().message;
  NoBackend backend;
  ASSERT_TRUE(choice->compile(backend).has_value());
  auto fn = choice->load(backend, p);
  ASSERT_TRUE(fn.has_value()) << fn.error().message;

  const TensorSpec& as = p.args[1].tensor;
  const TensorSpec& bs = p.args[2].tensor;
  std::vector<T> a(static_cast<std::size_t>(as.storage_elements()));
  std::vector<T> b(static_cast<std::size_t>(bs.storage_elements()));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(int(i % 7) - 3);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<T>(int(i % 5) - 2) / 2;
  auto at = [&](std::int64_t i, std::int64_t j) {  // op(A)[i,j]
    return ta ? a[j * as.strides[0] + i] : a[i * as.strides[0] + j];
  };
  auto bt = [&](std::int64_t i, std::int64_t j) {  // op(B)[i,j]
    return tb ? b[j * bs.strides[0] + i] : b[i * bs.strides[0] + j];
  };
  std::vector<T> c(m * n, std::nan(""));  // beta = 0 must not read C
  std::int64_t mv = m, kv = k;
  std::int32_t nv = n;
  void* args[] = {c.data(), a.data(), b.data(), &mv, &nv, &kv};
  ASSERT_TRUE((*fn)(args).has_value());
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      T want = 0;
      for (std::int64_t l = 0; l < k; ++l) want += at(i, l) * bt(l, j);
      EXPECT_NEAR(c[i * n + j], 2 * want, 1e-5) << i << "," << j;
    }
  }
  std::string info = choice->info();
  EXPECT_NE(info.find(dt == DType::kF32 ? "cblas_sgemm" : "cblas_dgemm"), std::string::npos)
      << info;
  EXPECT_NE(info.find("OpenBLAS"), std::string::npos) << info;
}

TEST(OpenBlasGemm, SgemmMatchesNaiveLoop) { check_gemm<float>(DType::kF32, false, false, 0); }
TEST(OpenBlasGemm, DgemmMatchesNaiveLoop) { check_gemm<double>(DType::kF64, false, false, 0); }
TEST(OpenBlasGemm, TransposedOperands) { check_gemm<float>(DType::kF32, true, true, 0); }
TEST(OpenBlasGemm, PaddedRowsUseTheRowStride) { check_gemm<double>(DType::kF64, false, true, 3); }

TEST(OpenBlasGemm, NamesKindsAndKeys) {
  // cublas.gemm only where CUDA is built in; each kind says which kernels it goes with.
  std::vector<std::string> kinds{"openblas.gemm"};
  if (KTUNE_HAVE_CUDA) kinds.push_back("cublas.gemm");
  EXPECT_EQ(extern_kinds(), kinds);
  EXPECT_EQ(extern_kind_language("openblas.gemm"), "c++");
  EXPECT_EQ(extern_kind_language("cublas.gemm"), KTUNE_HAVE_CUDA ? "cuda" : "");
  EXPECT_EQ(extern_kind_language("mkl.gemm"), "");
  ChoicePtr c = make(gemm_bind());
  EXPECT_EQ(c->name(), "openblas_gemm");
  EXPECT_EQ(c->kind(), Choice::Kind::kExtern);
  EXPECT_EQ(c->compile_s(), 0);
  EXPECT_EQ(make(gemm_bind(), "blas_ref")->name(), "blas_ref");
  EXPECT_EQ(c->hash_key(), make(gemm_bind())->hash_key());
  Bind trans = gemm_bind();
  trans.emplace_back("trans_b", "1");
  EXPECT_NE(c->hash_key(), make(trans)->hash_key());
  Bind renamed = gemm_bind();
  renamed[0].second = "Out";
  EXPECT_NE(c->hash_key(), make(renamed)->hash_key());
}

Error bind_error(Bind bind, std::string kind = "openblas.gemm") {
  auto c = make_extern_choice({"", std::move(kind), std::move(bind)});
  KTUNE_CHECK(!c.has_value());
  return c.error();
}

TEST(OpenBlasGemm, BindingErrors) {
  Error unknown_kind = bind_error(gemm_bind(), "mkl.gemm");
  EXPECT_EQ(unknown_kind.code, ErrorCode::kInvalidArgument);
  EXPECT_NE(unknown_kind.message.find("unknown kind 'mkl.gemm'; known kinds: openblas.gemm"),
            std::string::npos)
      << unknown_kind.message;

  Bind missing = gemm_bind();
  missing.pop_back();
  EXPECT_EQ(bind_error(missing).message,
            "openblas_gemm (openblas.gemm): missing role 'k'; required roles: c, a, b, m, n, k");

  Bind unknown_role = gemm_bind();
  unknown_role.emplace_back("lda", "8");
  EXPECT_NE(bind_error(unknown_role).message.find("unknown role 'lda'"), std::string::npos);

  Bind twice = gemm_bind();
  twice.emplace_back("a", "A2");
  EXPECT_NE(bind_error(twice).message.find("role 'a' bound twice"), std::string::npos);

  Bind bad_trans = gemm_bind();
  bad_trans.emplace_back("trans_a", "yes");
  EXPECT_NE(bind_error(bad_trans).message.find("'trans_a' must be \"0\" or \"1\""),
            std::string::npos);

  Bind bad_alpha = gemm_bind();
  bad_alpha.emplace_back("alpha", "two");
  EXPECT_NE(bind_error(bad_alpha).message.find("'alpha' must be a number"), std::string::npos);
}

std::string supports_error(const Problem& p, Bind bind = gemm_bind()) {
  auto s = make(std::move(bind))->supports(p);
  if (s.has_value()) return "supported";
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  return s.error().message;
}

TEST(OpenBlasGemm, SupportsRejectsProblemsItCannotRun) {
  Problem ok = gemm_problem(DType::kF32, 4, 4, 4);
  EXPECT_EQ(supports_error(ok), "supported");

  Bind absent = gemm_bind();
  absent[1].second = "X";
  EXPECT_EQ(supports_error(ok, absent),
            "openblas_gemm (openblas.gemm): role 'a' is bound to 'X', which the problem has no "
            "argument named");

  Problem mixed = ok;
  mixed.args[1].param.dtype = DType::kF64;
  EXPECT_NE(supports_error(mixed).find("'A' (a) must have c's dtype f32; got f64"),
            std::string::npos);

  Problem ints = gemm_problem(DType::kI32, 4, 4, 4);
  EXPECT_NE(supports_error(ints).find("'C' (c) must be f32 or f64; got i32"), std::string::npos);

  Problem scalar_buffer = ok;
  scalar_buffer.args[3].param.role = ArgRole::kIn;
  EXPECT_NE(supports_error(scalar_buffer).find("'M' (m) must be an i32 or i64 scalar"),
            std::string::npos);

  Problem wrong_shape = gemm_problem(DType::kF32, 4, 4, 4);
  wrong_shape.args[5].scalar = std::int64_t{5};
  EXPECT_NE(supports_error(wrong_shape).find("'A' (a) has sizes [4,4]; expected [4,5]"),
            std::string::npos)
      << supports_error(wrong_shape);

  Problem strided = ok;
  strided.args[2].tensor.strides = {1, 4};  // B column-major
  EXPECT_NE(supports_error(strided).find("'B' (b) needs a unit inner stride"), std::string::npos);

  Problem input_c = ok;
  input_c.args[0].param.role = ArgRole::kIn;
  EXPECT_NE(supports_error(input_c).find("must be an out or inout buffer"), std::string::npos);

  Bind beta = gemm_bind();
  beta.emplace_back("beta", "1");
  EXPECT_NE(supports_error(ok, beta).find("beta = 1 reads 'C' (c), so it must be inout"),
            std::string::npos);

  NoBackend backend;
  auto fn = make(gemm_bind())->load(backend, mixed);
  ASSERT_FALSE(fn.has_value());
  EXPECT_EQ(fn.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace ktune

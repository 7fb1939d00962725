// args[i].tolerance, args[i].nan_ok, init: {npy: ...} and role scratch: parsed, refused where
// they mean nothing (with their position), and carried into the Problem and its key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/json_codec.h"
#include "spec_test_util.h"
#include "support/npy_write.h"
#include "support/temp_dir.h"

namespace ktune {
namespace {

using spec_test::parse_inline;
using spec_test::specs_dir;
using ::testing::HasSubstr;

// C (out) gets `c_extra` and A (in, line 5) gets `a_extra`, inside their flow mappings.
std::string spec_with(const std::string& c_extra, const std::string& a_extra = "") {
  return "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
         "  - {name: C, role: out, dtype: f32, shape: [n]" +
         c_extra +
         "}\n"
         "  - {name: A, role: in,  dtype: f32, shape: [n]" +
         a_extra +
         "}\n"
         "  - {name: n, dtype: i64, value: n}\n"
         "problems:\n  - {n: 8}\n";
}

std::string error_of(const std::string& text,
                     const std::filesystem::path& file = specs_dir() / "inline.yaml") {
  Result<Spec> spec = parse_spec(text, file);
  if (spec) return "accepted";
  const std::string prefix = file.string() + ":";
  const std::string& m = spec.error().message;
  return m.starts_with(prefix) ? m.substr(prefix.size()) : m;
}

Problem problem_of(const std::string& text) {
  Result<Spec> spec = parse_inline(text);
  EXPECT_TRUE(spec) << spec.error().message;
  if (!spec) return {};
  Result<Problem> p = make_problem(*spec, spec->problems[0]);
  EXPECT_TRUE(p) << p.error().message;
  return p ? *p : Problem{};
}

TEST(SpecOutputCheck, RmsAtolReachesTheProblemItsKeyAndTheWorkerRequest) {
  const Problem p = problem_of(spec_with(", tolerance: {rms_atol: 0.03}"));
  ASSERT_TRUE(p.args[0].tolerance.has_value());
  EXPECT_EQ(p.args[0].tolerance->rms_atol, 0.03);
  EXPECT_EQ(p.args[0].tolerance->atol, default_tolerance(DType::kF32).atol);  // left out
  EXPECT_THAT(p.key(), HasSubstr(" tol=0.0001,1e-05,0.0001,rms=0.03"));
  Problem back;
  JsonReader r(JsonWording::kDocument);
  decode_json(r, Json::parse(json_dump(encode_json(p))), "problem", back);
  ASSERT_TRUE(r.ok()) << r.failure()->what;
  ASSERT_TRUE(back.args[0].tolerance.has_value());
  EXPECT_EQ(back.args[0].tolerance->rms_atol, 0.03);
  EXPECT_EQ(back.key(), p.key());
  EXPECT_EQ(error_of(spec_with(", tolerance: {rms_atol: -0.5}")),
            "4:72: args[0].tolerance.rms_atol: expected a number >= 0; got -0.5");
}

TEST(SpecOutputCheck, ToleranceAndNanOkReachTheProblemAndItsKey) {
  const Problem p =
      problem_of(spec_with(", tolerance: {rtol: 1e-2, max_rel_l2: 0.5}, nan_ok: true"));
  ASSERT_EQ(p.args.size(), 3u);
  ASSERT_TRUE(p.args[0].tolerance.has_value());
  EXPECT_EQ(p.args[0].tolerance->rtol, 1e-2);
  EXPECT_EQ(p.args[0].tolerance->atol, default_tolerance(DType::kF32).atol);  // left out
  EXPECT_EQ(p.args[0].tolerance->max_rel_l2, 0.5);
  EXPECT_TRUE(p.args[0].nan_ok);
  EXPECT_THAT(p.key(), HasSubstr("out C f32[8]{1}+0@cpu tol=0.01,1e-05,0.5 nan_ok"));
  // Unset: nothing in the key, so that tuning caches of specs without them stay valid.
  const Problem plain = problem_of(spec_with(""));
  EXPECT_FALSE(plain.args[0].tolerance.has_value());
  EXPECT_FALSE(plain.args[0].nan_ok);
  EXPECT_EQ(plain.key().find("tol="), std::string::npos);
  EXPECT_EQ(plain.key().find("nan_ok"), std::string::npos);
  EXPECT_FALSE(problem_of(spec_with(", nan_ok: false")).args[0].nan_ok);
}

TEST(SpecOutputCheck, MistakesSayWhereAndWhat) {
  EXPECT_EQ(error_of(spec_with("", ", nan_ok: true")),
            "5:58: args[1].nan_ok: 'A' has role in, which is never compared; expected nan_ok "
            "only on an out or inout buffer");
  EXPECT_EQ(error_of(spec_with("", ", tolerance: {rtol: 1}")),
            "5:61: args[1].tolerance: 'A' has role in, which is never compared; expected "
            "tolerance only on an out or inout buffer");
  EXPECT_EQ(error_of(spec_with(", tolerance: {rtol: -1}")),
            "4:68: args[0].tolerance.rtol: expected a number >= 0; got -1");
  EXPECT_EQ(
      error_of(spec_with(", tolerance: {rtl: 1}")),
      "4:62: args[0].tolerance.rtl: unknown key; expected one of rtol, atol, max_rel_l2, rms_atol");
  EXPECT_EQ(error_of(spec_with(", nan_ok: yes")),
            "4:58: args[0].nan_ok: got 'yes'; expected true or false");
  EXPECT_EQ(error_of("name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                     "  - {name: C, role: out, dtype: i32, shape: [n], nan_ok: true}\n"
                     "  - {name: n, dtype: i64, value: n}\nproblems:\n  - {n: 8}\n"),
            "4:58: args[0].nan_ok: 'C' is i32, which has no NaN; expected nan_ok only on a "
            "floating-point output");
  EXPECT_EQ(error_of("name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                     "  - {name: C, role: out, dtype: f32, shape: [n]}\n"
                     "  - {name: n, dtype: i64, value: n, nan_ok: true}\nproblems:\n  - {n: 8}\n"),
            "5:45: args[1].nan_ok: scalar 'n' has a value and cannot have nan_ok");
}

TEST(SpecScratch, IsABufferButNotAnOutput) {
  const std::string scratch =
      "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
      "  - {name: C, role: out, dtype: f32, shape: [n]}\n"
      "  - {name: P, role: scratch, dtype: f32, shape: [n * 2]}\n"
      "  - {name: n, dtype: i64, value: n}\nproblems:\n  - {n: 8}\n";
  const Problem q = problem_of(scratch);
  ASSERT_EQ(q.args.size(), 3u);
  EXPECT_EQ(q.args[1].param.role, ArgRole::kScratch);
  EXPECT_EQ(q.args[1].tensor.sizes, (std::vector<std::int64_t>{16}));
  EXPECT_THAT(q.key(), HasSubstr("scratch P f32[16]"));
  // A scratch buffer alone is no output.
  EXPECT_EQ(error_of("name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                     "  - {name: P, role: scratch, dtype: f32, shape: [n]}\n"
                     "  - {name: n, dtype: i64, value: n}\nproblems:\n  - {n: 8}\n"),
            "4:3: args: no output; expected at least one buffer with role out or inout");
  EXPECT_EQ(error_of("name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                     "  - {name: C, role: out, dtype: f32, shape: [n]}\n"
                     "  - {name: P, role: scratch, dtype: f32, shape: [n], init: zeros}\n"
                     "  - {name: n, dtype: i64, value: n}\nproblems:\n  - {n: 8}\n"),
            "5:60: args[1].init: 'P' has role scratch, whose contents the kernel writes; "
            "expected init only on an in or inout buffer");
  EXPECT_EQ(error_of("name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                     "  - {name: C, role: out, dtype: f32, shape: [n]}\n"
                     "  - {name: P, role: scratch, dtype: f32, shape: [n], nan_ok: true}\n"
                     "  - {name: n, dtype: i64, value: n}\nproblems:\n  - {n: 8}\n"),
            "5:62: args[1].nan_ok: 'P' has role scratch, which is never compared; expected "
            "nan_ok only on an out or inout buffer");
}

// The npy file: relative to the spec's folder, made absolute, digested; the wrong shape or dtype
// is an error naming both, and so is a missing file.
TEST(SpecNpy, ResolvedCheckedAndDigested) {
  test::TempDir dir("spec-npy");
  std::filesystem::copy_file(specs_dir() / "add.cpp", dir.path() / "add.cpp");
  test::write_bytes(
      dir.path() / "data" / "a.npy",
      test::npy_bytes(test::npy_dict("<f4", "(8,)"), test::raw_bytes(std::vector<float>(8, 0.5f))));
  const std::filesystem::path file = dir.path() / "spec.yaml";
  Result<Spec> spec = parse_spec(spec_with("", ", init: {npy: data/a.npy}"), file);
  ASSERT_TRUE(spec) << spec.error().message;
  Result<Problem> p = make_problem(*spec, spec->problems[0]);
  ASSERT_TRUE(p) << p.error().message;
  const DataInit& init = p->args[1].init;
  EXPECT_EQ(init.kind, InitKind::kNpy);
  EXPECT_EQ(init.path, (dir.path() / "data" / "a.npy").string());
  EXPECT_EQ(init.digest.size(), 32u);
  EXPECT_THAT(p->key(), HasSubstr(" init=npy(" + init.digest + ")"));

  // Another problem size: the file's shape no longer fits.
  std::string other = spec_with("", ", init: {npy: data/a.npy}");
  other.replace(other.find("{n: 8}"), 6, "{n: 16}");
  EXPECT_EQ(error_of(other, file),
            "5: args[1].init: " + (dir.path() / "data" / "a.npy").string() +
                ": shape (8); expected the argument's shape (16) in problem 'n=16' (arg 'A')");
  EXPECT_THAT(error_of(spec_with("", ", init: {npy: data/none.npy}"), file),
              HasSubstr("5: args[1].init: " + (dir.path() / "data" / "none.npy").string() +
                        ": cannot read the .npy file"));
  EXPECT_EQ(error_of(spec_with("", ", init: {npy: ''}"), file),
            "5:62: args[1].init.npy: empty path; expected a .npy file, relative to the spec's "
            "folder");
}

}  // namespace
}  // namespace ktune

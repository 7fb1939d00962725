// reference.expected (spec_reference.h): each .npy file is read once, when the reference is made;
// its digest is in the choice's key and its elements are what the reference writes, so a file
// removed (or edited) during the tuning changes neither.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "ktune/backend/cpu_backend.h"
#include "spec/spec_reference.h"
#include "support/npy_write.h"
#include "support/temp_dir.h"

namespace ktune {
namespace {

using test::npy_bytes;
using test::npy_dict;
using test::raw_bytes;
using test::write_bytes;

// The spec of k.yaml in `dir` (y: f32[4] from y.npy, which the test writes first), its problem
// and its reference.expected.
struct Made {
  Problem problem;
  ChoicePtr reference;
};
Made make_in(const std::filesystem::path& dir) {
  std::ofstream(dir / "k.cpp") << "void k(float* y, int n) {}\n";
  Result<Spec> spec = parse_spec(
      "name: k\nkernel: {source: k.cpp, entry: k}\nargs:\n"
      "  - {name: y, role: out, dtype: f32, shape: [n]}\n"
      "  - {name: n, role: scalar, dtype: i32, value: n}\n"
      "problems:\n  - {n: 4}\n"
      "reference:\n  expected: {y: y.npy}\n",
      dir / "k.yaml");
  EXPECT_TRUE(spec) << spec.error().message;
  if (!spec) return {};
  Result<Problem> problem = make_problem(*spec, spec->problems[0]);
  EXPECT_TRUE(problem) << problem.error().message;
  Result<ChoicePtr> ref = spec_detail::make_expected_reference(*spec);
  EXPECT_TRUE(ref) << ref.error().message;
  if (!problem || !ref) return {};
  return {*problem, std::move(*ref)};
}

TEST(SpecExpected, TheFileIsReadOnceWhenTheReferenceIsMade) {
  test::TempDir dir("spec-expected");
  write_bytes(dir.path() / "y.npy",
              npy_bytes(npy_dict("<f4", "(4,)"), raw_bytes<float>({1, 2, 3, 4})));
  Made m = make_in(dir.path());
  ASSERT_TRUE(m.reference);
  const std::string key = m.reference->hash_key();

  // The file gone: the reference still takes the problem and writes what it read.
  std::filesystem::remove(dir.path() / "y.npy");
  ASSERT_TRUE(m.reference->supports(m.problem)) << m.reference->supports(m.problem).error().message;
  auto backend = CpuBackend::create({}, dir.path() / "code");
  ASSERT_TRUE(backend) << backend.error().message;
  auto fn = m.reference->load(*backend, m.problem);
  ASSERT_TRUE(fn) << fn.error().message;
  std::vector<float> y(4, 0.0f);
  int n = 4;
  void* args[] = {y.data(), &n};
  ASSERT_TRUE((*fn)(args));
  EXPECT_THAT(y, testing::ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(m.reference->hash_key(), key);
}

TEST(SpecExpected, AFileOfAnotherShapeOrDtypeIsNotSupported) {
  test::TempDir dir("spec-expected");
  write_bytes(dir.path() / "y.npy",
              npy_bytes(npy_dict("<f4", "(3,)"), raw_bytes<float>({1, 2, 3})));
  Made m = make_in(dir.path());
  ASSERT_TRUE(m.reference);
  Status s = m.reference->supports(m.problem);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message,
              testing::HasSubstr("shape (3); expected the argument's shape (4)"));
}

}  // namespace
}  // namespace ktune

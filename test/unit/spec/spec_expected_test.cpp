// reference.expected (spec_reference.h): each .npy file is read once, when the reference is made;
// its digest is in the choice's key and its elements are what the reference writes, so a file
// edited or removed during the tuning changes neither.
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

Result<Spec> spec_in(const std::filesystem::path& dir) {
  std::ofstream(dir / "k.cpp") << "void k(float* y, int n) {}\n";
  return parse_spec(
      "name: k\nkernel: {source: k.cpp, entry: k}\nargs:\n"
      "  - {name: y, role: out, dtype: f32, shape: [n]}\n"
      "  - {name: n, role: scalar, dtype: i32, value: n}\n"
      "problems:\n  - {n: 4}\n"
      "reference:\n  expected: {y: y.npy}\n",
      dir / "k.yaml");
}

TEST(SpecExpected, TheFileIsReadOnceWhenTheReferenceIsMade) {
  test::TempDir dir("spec-expected");
  write_bytes(dir.path() / "y.npy",
              npy_bytes(npy_dict("<f4", "(4,)"), raw_bytes<float>({1, 2, 3, 4})));
  Result<Spec> spec = spec_in(dir.path());
  ASSERT_TRUE(spec) << spec.error().message;
  Result<Problem> problem = make_problem(*spec, spec->problems[0]);
  ASSERT_TRUE(problem) << problem.error().message;
  Result<ChoicePtr> ref = spec_detail::make_expected_reference(*spec);
  ASSERT_TRUE(ref) << ref.error().message;
  const std::string key = (*ref)->hash_key();

  // Edited, then gone: the reference still writes what it read, under the same key.
  write_bytes(dir.path() / "y.npy",
              npy_bytes(npy_dict("<f4", "(4,)"), raw_bytes<float>({9, 9, 9, 9})));
  std::filesystem::remove(dir.path() / "y.npy");
  ASSERT_TRUE((*ref)->supports(*problem)) << (*ref)->supports(*problem).error().message;
  auto backend = CpuBackend::create({}, dir.path() / "code");
  ASSERT_TRUE(backend) << backend.error().message;
  auto fn = (*ref)->load(*backend, *problem);
  ASSERT_TRUE(fn) << fn.error().message;
  std::vector<float> y(4, 0.0f);
  int n = 4;
  void* args[] = {y.data(), &n};
  ASSERT_TRUE((*fn)(args));
  EXPECT_THAT(y, testing::ElementsAre(1, 2, 3, 4));
  EXPECT_EQ((*ref)->hash_key(), key);
}

TEST(SpecExpected, AFileOfAnotherShapeOrDtypeIsNotSupported) {
  test::TempDir dir("spec-expected");
  write_bytes(dir.path() / "y.npy",
              npy_bytes(npy_dict("<f4", "(3,)"), raw_bytes<float>({1, 2, 3})));
  Result<Spec> spec = spec_in(dir.path());
  ASSERT_TRUE(spec) << spec.error().message;
  Result<Problem> problem = make_problem(*spec, spec->problems[0]);
  ASSERT_TRUE(problem) << problem.error().message;
  Result<ChoicePtr> ref = spec_detail::make_expected_reference(*spec);
  ASSERT_TRUE(ref) << ref.error().message;
  Status s = (*ref)->supports(*problem);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message,
              testing::HasSubstr("shape (3); expected the argument's shape (4)"));
}

}  // namespace
}  // namespace ktune

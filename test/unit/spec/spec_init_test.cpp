// args[i].init: parsed (every form, every mistake with its position) and evaluated per problem
// by make_problem into ProblemArg::init.
#include <gtest/gtest.h>

#include "spec_test_util.h"

namespace ktune {
namespace {

using spec_test::parse_inline;
using spec_test::specs_dir;

// A spec whose input A has `init` (line 5; the init starts at column 56), with problems n = 8
// and n = 300.
std::string spec_with(const std::string& init, const std::string& dtype = "f32") {
  return "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
         "  - {name: C, role: out, dtype: f32, shape: [n]}\n"
         "  - {name: A, role: in,  dtype: " +
         dtype + ", shape: [n], init: " + init +
         "}\n"
         "  - {name: n, dtype: i64, value: n}\n"
         "problems:\n  - {n: 8}\n  - {n: 300}\n";
}

std::string error_of(const std::string& text) {
  Result<Spec> spec = parse_inline(text);
  if (spec) {
    for (const ProblemDecl& decl : spec->problems) {
      Result<Problem> p = make_problem(*spec, decl);
      if (!p) return p.error().message;
    }
    return "accepted";
  }
  const std::string prefix = (specs_dir() / "inline.yaml").string() + ":";
  const std::string& m = spec.error().message;
  return m.starts_with(prefix) ? m.substr(prefix.size()) : m;
}

DataInit init_of(const std::string& init, std::size_t problem = 0) {
  Result<Spec> spec = parse_inline(spec_with(init));
  EXPECT_TRUE(spec) << spec.error().message;
  if (!spec) return {};
  Result<Problem> p = make_problem(*spec, spec->problems[problem]);
  EXPECT_TRUE(p) << p.error().message;
  return p ? p->args[1].init : DataInit{};
}

TEST(SpecInit, EveryFormBecomesTheProblemsInit) {
  EXPECT_EQ(init_of("{uniform: {low: 0.5, high: 2}}"), (DataInit{InitKind::kUniform, 0.5, 2}));
  EXPECT_EQ(init_of("{normal: {mean: -1, std: 1e-1}}"), (DataInit{InitKind::kNormal, -1, 0.1}));
  EXPECT_EQ(init_of("{int: {low: 0, high: 9}}"), (DataInit{InitKind::kInt, 0, 9}));
  EXPECT_EQ(init_of("zeros"), (DataInit{InitKind::kZeros, 0, 0}));
  EXPECT_EQ(init_of("ones"), (DataInit{InitKind::kOnes, 0, 0}));
  EXPECT_EQ(init_of("arange"), (DataInit{InitKind::kArange, 0, 0}));
}

// Bounds are size expressions: an index array in range for every problem.
TEST(SpecInit, BoundsAreEvaluatedPerProblem) {
  EXPECT_EQ(init_of("{int: {low: 0, high: n - 1}}", 0), (DataInit{InitKind::kInt, 0, 7}));
  EXPECT_EQ(init_of("{int: {low: 0, high: n - 1}}", 1), (DataInit{InitKind::kInt, 0, 299}));
}

TEST(SpecInit, WithoutInitTheDataIsKtunesOwn) {
  Result<Spec> spec = load_spec(specs_dir() / "add.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  Result<Problem> p = make_problem(*spec, spec->problems[0]);
  ASSERT_TRUE(p) << p.error().message;
  for (const ProblemArg& a : p->args) EXPECT_EQ(a.init.kind, InitKind::kRandom) << a.param.name;
}

TEST(SpecInit, MistakesSayWhereAndWhat) {
  const std::string kinds = "expected one of uniform, normal, int, zeros, ones, arange, npy";
  EXPECT_EQ(error_of(spec_with("random")), "5:56: args[1].init: 'random'; " + kinds);
  EXPECT_EQ(error_of(spec_with("[1, 2]")), "5:56: args[1].init: got a list; " + kinds);
  EXPECT_EQ(error_of(spec_with("{poisson: {lambda: 2}}")),
            "5:57: args[1].init: 'poisson'; " + kinds);
  EXPECT_EQ(
      error_of(spec_with("uniform")),
      "5:56: args[1].init: 'uniform' needs its bounds; expected {uniform: {low: A, high: B}}");
  EXPECT_EQ(error_of(spec_with("{uniform: {low: 0, hi: 1}}")),
            "5:75: args[1].init.uniform.hi: unknown key; expected one of low, high");
  EXPECT_EQ(error_of(spec_with("{normal: {mean: 0}}")),
            "5:65: args[1].init.normal.std: missing required field");
  EXPECT_EQ(error_of(spec_with("{int: {low: 0, high: m}}")),
            "5:77: args[1].init.int.high: 'm' in 'm' is not a problem size; expected one of n");
  EXPECT_EQ(error_of("name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                     "  - {name: C, role: out, dtype: f32, shape: [n], init: zeros}\n"
                     "  - {name: n, dtype: i64, value: n}\nproblems:\n  - {n: 8}\n"),
            "4:56: args[0].init: 'C' has role out, whose contents the kernel writes; expected "
            "init only on an in or inout buffer");
  EXPECT_EQ(error_of("name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                     "  - {name: C, role: out, dtype: f32, shape: [n]}\n"
                     "  - {name: n, dtype: i64, value: n, init: zeros}\nproblems:\n  - {n: 8}\n"),
            "5:43: args[1].init: scalar 'n' has a value and cannot have init");
}

// Bounds that a problem makes wrong are that problem's error, with the arg's line.
TEST(SpecInit, BoundsWrongForAProblemAreItsError) {
  EXPECT_EQ(error_of(spec_with("{uniform: {low: 2, high: n - 8}}")),
            "5: args[1].init: uniform low '2' is 2 and high 'n - 8' is 0 in problem 'n=8' "
            "(arg 'A'); expected low <= high");
  EXPECT_EQ(error_of(spec_with("{int: {low: 0.5, high: 0.75}}")),
            "5: args[1].init: int low '0.5' is 0.5 and high '0.75' is 0.75 in problem "
            "'n=8' (arg 'A'); expected an integer in [low, high]");
  EXPECT_EQ(error_of(spec_with("{normal: {mean: 0, std: 4 - n}}")),
            "5: args[1].init: normal std '4 - n' is -4 in problem 'n=8' (arg 'A'); "
            "expected a standard deviation >= 0");
  EXPECT_EQ(error_of(spec_with("{int: {low: 0, high: 200}}", "i8")),
            "5: args[1].init: int [0, 200] in problem 'n=8' (arg 'A'); expected bounds "
            "that fit i8");
  EXPECT_EQ(error_of(spec_with("arange", "i8")),
            "5: args[1].init: arange up to 299 in problem 'n=300' (arg 'A'); expected "
            "values that fit i8");
}

}  // namespace
}  // namespace ktune

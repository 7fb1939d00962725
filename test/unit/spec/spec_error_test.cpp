// load_spec and parse_spec on bad specs: each error's code and its exact message, position
// included. Inline specs are parsed as test/data/specs/inline.yaml.
#include <gtest/gtest.h>

#include "spec_test_util.h"

namespace ktune {
namespace {

using spec_test::parse_inline;
using spec_test::specs_dir;

// The valid head shared by most inline cases (lines 1-6); a case appends its own lines from 7.
constexpr const char* kHead = spec_test::kAddHead;
constexpr const char* kProblems = spec_test::kOneProblem;

struct BadCase {
  const char* label;
  std::string text;
  ErrorCode code;
  // Expected after "<specs dir>/inline.yaml:"; one ending in ": " is a prefix (the rest is
  // another module's message), any other the whole message.
  std::string message;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.label; }

class BadSpec : public testing::TestWithParam<BadCase> {};

TEST_P(BadSpec, ReportsWhereAndWhat) {
  const BadCase& c = GetParam();
  Result<Spec> spec = parse_inline(c.text);
  ASSERT_FALSE(spec) << "accepted:\n" << c.text;
  EXPECT_EQ(spec.error().code, c.code) << spec.error().message;
  std::string prefix = (specs_dir() / "inline.yaml").string() + ":";
  if (c.message.ends_with(": ")) {
    EXPECT_TRUE(spec.error().message.starts_with(prefix + c.message)) << spec.error().message;
    EXPECT_GT(spec.error().message.size(), prefix.size() + c.message.size());
  } else {
    EXPECT_EQ(spec.error().message, prefix + c.message);
  }
}

std::string head() { return kHead; }
std::string with_problems(const std::string& tail) { return kHead + std::string(kProblems) + tail; }

INSTANTIATE_TEST_SUITE_P(
    Schema, BadSpec,
    testing::Values(
        BadCase{"syntax", "name: add\nkernel: {source: add.cpp\n", ErrorCode::kParse,
                "3:1: syntax error: end of map flow not found"},
        BadCase{"not_a_mapping", "- 1\n- 2\n", ErrorCode::kInvalidArgument,
                "1:1: top level: expected a mapping; got a list"},
        BadCase{"unknown_top_key", with_problems("tolerence: {rtol: 1}\n"),
                ErrorCode::kInvalidArgument,
                "9:1: tolerence: unknown key; expected one of name, kernel, args, problems, "
                "params, restrictions, reference, tolerance, externs, seed, epilogue, op, metrics, "
                "search"},
        BadCase{"duplicate_key", "name: add\nname: sub\n", ErrorCode::kInvalidArgument,
                "2:1: name: duplicate key"},
        BadCase{"missing_name", "kernel: {source: add.cpp, entry: add}\n",
                ErrorCode::kInvalidArgument, "1:1: name: missing required field"},
        BadCase{"name_not_identifier", "name: my op\n", ErrorCode::kInvalidArgument,
                "1:7: name: 'my op' is not an identifier; expected letters, digits and '_', not "
                "starting with a digit"},
        BadCase{"missing_args",
                "name: add\nkernel: {source: add.cpp, entry: add}\n" + std::string(kProblems),
                ErrorCode::kInvalidArgument, "1:1: args: missing required field"},
        BadCase{"missing_kernel", "name: add\n", ErrorCode::kInvalidArgument,
                "1:1: kernel: missing required field"},
        BadCase{"kernel_unknown_key",
                "name: add\nkernel: {source: add.cpp, entry: add, flag: [-O3]}\n",
                ErrorCode::kInvalidArgument,
                "2:39: kernel.flag: unknown key; expected one of source, entry, language, "
                "render, flags, size_defines, launch"},
        BadCase{"kernel_source_missing", "name: add\nkernel:\n  source: nope.cpp\n  entry: add\n",
                ErrorCode::kNotFound,
                "3:11: kernel.source: file not found; expected a file at '" +
                    (specs_dir() / "nope.cpp").string() + "'"},
        BadCase{"kernel_entry", "name: add\nkernel: {source: add.cpp, entry: 2add}\n",
                ErrorCode::kInvalidArgument,
                "2:34: kernel.entry: '2add' is not an identifier; expected letters, digits and "
                "'_', not starting with a digit"},
        BadCase{"kernel_language",
                "name: add\nkernel: {source: add.cpp, entry: add, language: hip}\n",
                ErrorCode::kInvalidArgument,
                "2:49: kernel.language: unsupported language 'hip'; expected one of c++, cuda, "
                "opencl"},
        BadCase{"kernel_render",
                "name: add\nkernel: {source: add.cpp, entry: add, render: jinja}\n",
                ErrorCode::kInvalidArgument,
                "2:47: kernel.render: unknown render mode 'jinja'; expected one of defines, "
                "mustache, none"},
        BadCase{"kernel_render_none_cpp",
                "name: add\nkernel: {source: add.cpp, entry: add, render: none}\n",
                ErrorCode::kInvalidArgument,
                "2:47: kernel.render: render: none leaves a c++ kernel no way to see its "
                "parameters; expected defines or mustache (none is for cuda and opencl kernels, "
                "whose parameters reach the entry's {{P}} and the launch)"},
        BadCase{"flags_not_list", "name: add\nkernel: {source: add.cpp, entry: add, flags: -O3}\n",
                ErrorCode::kInvalidArgument, "2:46: kernel.flags: expected a list; got '-O3'"},
        BadCase{"no_problems", head() + "problems: []\n", ErrorCode::kInvalidArgument,
                "7:11: problems: expected at least one problem; got none"},
        BadCase{"problem_not_integer", head() + "problems:\n  - {n: big}\n",
                ErrorCode::kInvalidArgument, "8:9: problems[0].n: expected an integer; got 'big'"},
        BadCase{"problems_differ", head() + "problems:\n  - {n: 8}\n  - {n: 9, m: 2}\n",
                ErrorCode::kInvalidArgument,
                "9:5: problems[1]: binds sizes m, n; expected the same sizes as problems[0]: n"},
        BadCase{"problem_duplicate_name",
                head() + "problems:\n  - {name: a, n: 8}\n  - {name: a, n: 9}\n",
                ErrorCode::kInvalidArgument,
                "9:5: problems[1].name: duplicate problem name 'a'; problems[0] has it too"},
        BadCase{"args_not_list",
                "name: add\nkernel: {source: add.cpp, entry: add}\n"
                "args: {name: C}\nproblems:\n  - {n: 8}\n",
                ErrorCode::kInvalidArgument, "3:7: args: expected a list; got a mapping"}));

INSTANTIATE_TEST_SUITE_P(
    Args, BadSpec,
    testing::Values(
        BadCase{"unknown_dtype",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: out, dtype: f33, shape: [n]}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "4:33: args[0].dtype: unknown dtype 'f33'; expected one of f16, bf16, f32, f64, "
                "i8, i32, i64"},
        BadCase{"arg_unknown_key",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: out, dtype: f32, shap: [n]}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "4:38: args[0].shap: unknown key; expected one of name, role, dtype, shape, "
                "strides, offset, value, init, tolerance, nan_ok"},
        BadCase{"unknown_role",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: output, dtype: f32, shape: [n]}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "4:21: args[0].role: unknown role 'output'; expected one of in, out, inout, "
                "scratch, scalar"},
        BadCase{"duplicate_arg",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: out, dtype: f32, shape: [n]}\n"
                "  - {name: C, role: in, dtype: f32, shape: [n]}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "5:12: args[1].name: duplicate argument 'C'; args[0] has it too"},
        BadCase{"scalar_with_shape",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: out, dtype: f32, shape: [n]}\n"
                "  - {name: n, dtype: i64, value: n, shape: [1]}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "5:44: args[1].shape: scalar 'n' has a value and cannot have shape"},
        BadCase{"scalar_with_buffer_role",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: out, dtype: f32, shape: [n]}\n"
                "  - {name: n, role: in, dtype: i64, value: n}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "5:21: args[1].role: 'in' with a value; a scalar (an arg with value) has role "
                "scalar or none, a buffer has shape and no value"},
        BadCase{"buffer_without_shape",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: out, dtype: f32}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "4:5: args[0].shape: missing required field for buffer 'C'; expected a list of "
                "size expressions (or value: for a scalar)"},
        BadCase{"scalar_role_without_value",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: n, role: scalar, dtype: i64}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "4:5: args[0].value: missing required field for scalar 'n'; expected an "
                "expression"},
        BadCase{"buffer_without_role",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, dtype: f32, shape: [n]}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "4:5: args[0].role: missing required field; expected one of in, out, inout, "
                "scratch (or value: for a scalar)"},
        BadCase{"shape_is_string",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: out, dtype: f32, shape: n}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument, "4:45: args[0].shape: expected a list; got 'n'"},
        BadCase{"unknown_size",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: out, dtype: f32, shape: [n, m * 2]}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "4:49: args[0].shape[1]: 'm' in 'm * 2' is not a problem size; expected one of "
                "n"},
        BadCase{"bad_expression",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: out, dtype: f32, shape: [\"n +\"]}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "4:46: args[0].shape[0]: bad expression 'n +': Unexpected end of expression at "
                "position 4"},
        BadCase{"strides_rank",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: out, dtype: f32, shape: [n], strides: [1, 1]}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "4:59: args[0].strides: expected 1 strides (one per dimension); got 2"},
        BadCase{"no_output",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: A, role: in, dtype: f32, shape: [n]}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "4:3: args: no output; expected at least one buffer with role out or inout"},
        BadCase{"negative_size",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: out, dtype: f32, shape: [n - 10]}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "4: args[0].shape[0]: 'n - 10' is -2 in problem 'n=8' (arg 'C'); expected a "
                "non-negative integer"},
        BadCase{"fractional_size",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: out, dtype: f32, shape: [n / 3]}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "4: args[0].shape[0]: 'n / 3' is 2.6666666666666665 in problem 'n=8' (arg 'C'); "
                "expected a non-negative integer"},
        BadCase{"scalar_out_of_range",
                "name: add\nkernel: {source: add.cpp, entry: add}\nargs:\n"
                "  - {name: C, role: out, dtype: f32, shape: [n]}\n"
                "  - {name: big, dtype: i8, value: n * 100}\n" +
                    std::string(kProblems),
                ErrorCode::kInvalidArgument,
                "5: args[1].value: 'n * 100' is 800 in problem 'n=8' (arg 'big'); expected an "
                "integer that fits i8"}));

INSTANTIATE_TEST_SUITE_P(
    SpaceExternsReference, BadSpec,
    testing::Values(
        BadCase{"params_not_mapping", with_problems("params: [1, 2]\n"),
                ErrorCode::kInvalidArgument, "9:9: params: expected a mapping; got a list"},
        BadCase{"param_values_not_list", with_problems("params:\n  TILE: 4\n"),
                ErrorCode::kInvalidArgument, "10:9: params.TILE: expected a list; got '4'"},
        BadCase{"restriction_unknown_param",
                with_problems("params:\n  TILE: [1, 2]\nrestrictions:\n  - TILE > 0\n"
                              "  - TILE < WIDTH\n"),
                ErrorCode::kInvalidArgument, "13:5: restrictions[1]: "},
        BadCase{"restrictions_not_list", with_problems("restrictions: TILE > 1\n"),
                ErrorCode::kInvalidArgument, "9:15: restrictions: expected a list; got 'TILE > 1'"},
        BadCase{"unknown_extern_kind",
                with_problems("externs:\n  - {kind: mkl.gemm, bind: {c: C}}\n"),
                ErrorCode::kInvalidArgument,
                "10:12: externs[0].kind: unknown extern kind 'mkl.gemm'; expected one of "
                "openblas.gemm beside a c++ kernel"},
        BadCase{"extern_bind_unknown_arg",
                with_problems("externs:\n  - {kind: openblas.gemm, bind: {c: X}}\n"),
                ErrorCode::kInvalidArgument,
                "10:37: externs[0].bind.c: 'X' is not an argument; expected one of C, A, n"},
        BadCase{"extern_missing_bind", with_problems("externs:\n  - {kind: openblas.gemm}\n"),
                ErrorCode::kInvalidArgument, "10:5: externs[0].bind: missing required field"},
        BadCase{"extern_bad_binding",
                with_problems("externs:\n  - {kind: openblas.gemm, bind: {c: C, a: A}}\n"),
                ErrorCode::kInvalidArgument, "10:5: externs[0]: "},
        BadCase{"reference_unknown_extern", with_problems("reference: {extern: mkl}\n"),
                ErrorCode::kInvalidArgument,
                "9:21: reference.extern: unknown extern 'mkl'; expected one of the names in "
                "externs (none declared)"},
        BadCase{"reference_both",
                with_problems("reference: {extern: x, kernel: {source: add.cpp, entry: add}}\n"),
                ErrorCode::kInvalidArgument,
                "9:12: reference: expected exactly one of extern, kernel, expected; got extern and "
                "kernel"},
        BadCase{"reference_expected_not_an_output",
                with_problems("reference: {expected: {A: add.cpp}}\n"), ErrorCode::kInvalidArgument,
                "9:24: reference.expected.A: 'A' is not an output argument; expected one of C"},
        BadCase{"reference_expected_missing_file",
                with_problems("reference: {expected: {C: nowhere.npy}}\n"), ErrorCode::kNotFound,
                "9:27: reference.expected.C: file not found; expected an .npy file at '" +
                    (specs_dir() / "nowhere.npy").string() + "'"},
        BadCase{
            "reference_expected_random_input",
            with_problems("reference: {expected: {C: add.cpp}}\n"), ErrorCode::kInvalidArgument,
            "9:23: reference.expected: input 'A' is random (init: random); expected outputs from a "
            "file need every input fixed: init npy, zeros, ones or arange"},
        BadCase{"reference_kernel_missing_entry",
                with_problems("reference:\n  kernel: {source: add.cpp}\n"),
                ErrorCode::kInvalidArgument,
                "10:11: reference.kernel.entry: missing required field"},
        BadCase{"tolerance_negative", with_problems("tolerance: {rtol: -1}\n"),
                ErrorCode::kInvalidArgument,
                "9:19: tolerance.rtol: expected a number >= 0; got -1"},
        BadCase{"tolerance_not_number", with_problems("tolerance: {atol: tight}\n"),
                ErrorCode::kInvalidArgument,
                "9:19: tolerance.atol: expected a number; got 'tight'"},
        BadCase{"seed_negative", with_problems("seed: -3\n"), ErrorCode::kInvalidArgument,
                "9:7: seed: expected an integer >= 0; got -3"}));

}  // namespace
}  // namespace ktune

namespace ktune {
namespace {

// The fixtures under test/data/specs/bad/, read through load_spec.
struct BadFile {
  const char* file;
  ErrorCode code;
  std::string message;  // after "<specs dir>/bad/<file>:"; ": " at the end makes it a prefix
};

void PrintTo(const BadFile& c, std::ostream* os) { *os << c.file; }

class BadSpecFile : public testing::TestWithParam<BadFile> {};

TEST_P(BadSpecFile, ReportsWhereAndWhat) {
  const BadFile& c = GetParam();
  std::filesystem::path path = specs_dir() / "bad" / c.file;
  Result<Spec> spec = load_spec(path);
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().code, c.code) << spec.error().message;
  std::string expected = path.string() + ":" + c.message;
  if (c.message.ends_with(": ")) {
    EXPECT_TRUE(spec.error().message.starts_with(expected)) << spec.error().message;
  } else {
    EXPECT_EQ(spec.error().message, expected);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BadSpecFile,
    testing::Values(
        BadFile{"syntax.yaml", ErrorCode::kParse, "3:5: syntax error: end of map flow not found"},
        BadFile{"unknown_dtype.yaml", ErrorCode::kInvalidArgument,
                "5:32: args[1].dtype: unknown dtype 'f33'; expected one of f16, bf16, f32, f64, "
                "i8, i32, i64"},
        BadFile{"typo_key.yaml", ErrorCode::kInvalidArgument,
                "8:1: tolerence: unknown key; expected one of name, kernel, args, problems, "
                "params, restrictions, reference, tolerance, externs, seed, epilogue, op, metrics, "
                "search"},
        BadFile{"missing_source.yaml", ErrorCode::kNotFound,
                "3:11: kernel.source: file not found; expected a file at '" +
                    (specs_dir() / "bad" / "nowhere.cpp").string() + "'"},
        BadFile{"restriction.yaml", ErrorCode::kInvalidArgument, "12:5: restrictions[1]: "}));

TEST(LoadSpec, MissingFileIsNotFound) {
  std::filesystem::path path = specs_dir() / "no_such_spec.yaml";
  Result<Spec> spec = load_spec(path);
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(spec.error().message,
            path.string() + ": spec file not found; expected a YAML or JSON file");
}

// The restriction's own message comes from the space module; the spec adds where it is.
TEST(LoadSpec, RestrictionErrorNamesTheRestriction) {
  Result<Spec> spec = load_spec(specs_dir() / "bad" / "restriction.yaml");
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("WIDTH"), std::string::npos) << spec.error().message;
}

TEST(LoadSpec, ExternBindingErrorComesFromTheChoiceModule) {
  Result<Spec> spec = parse_inline(std::string(kHead) + kProblems +
                                   "externs:\n  - {kind: openblas.gemm, bind: {c: C, a: A}}\n");
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("inline.yaml:10:5: externs[0]: "), std::string::npos)
      << spec.error().message;
}

}  // namespace
}  // namespace ktune

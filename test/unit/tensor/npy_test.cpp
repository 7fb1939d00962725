// The .npy reader: NumPy's own layouts accepted (versions 1-3, every dtype ktune has), and
// truncated or hostile headers refused with what is wrong, before anything is sized from them.
#include "tensor/npy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ktune/tensor/problem_buffers.h"
#include "support/npy_write.h"
#include "support/temp_dir.h"

namespace ktune {
namespace {

using test::npy_bytes;
using test::npy_dict;
using test::raw_bytes;
using ::testing::HasSubstr;

std::string error_of(const std::string& bytes) {
  Result<NpyArray> a = parse_npy(bytes, "x.npy");
  return a ? "accepted" : a.error().message;
}

TEST(Npy, ReadsEveryVersionAndShape) {
  const std::string data = raw_bytes(std::vector<float>{1, 2, 3, 4, 5, 6});
  for (int major : {1, 2, 3}) {
    const std::string file = npy_bytes(npy_dict("<f4", "(2, 3)"), data, major);
    Result<NpyArray> a = parse_npy(file, "x.npy");
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_EQ(a->descr, "<f4");
    EXPECT_EQ(a->shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(a->data, data);
  }
  Result<NpyArray> one = parse_npy(
      npy_bytes(npy_dict("<i8", "(3,)"), raw_bytes(std::vector<std::int64_t>{7, 8, 9})), "x.npy");
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(one->shape, (std::vector<std::int64_t>{3}));
  Result<NpyArray> scalar =
      parse_npy(npy_bytes(npy_dict("<f8", "()"), raw_bytes(std::vector<double>{2.5})), "x.npy");
  ASSERT_TRUE(scalar) << scalar.error().message;
  EXPECT_TRUE(scalar->shape.empty());
  // Keys in another order, double quotes, no trailing comma: still NumPy's dict.
  EXPECT_EQ(error_of(npy_bytes(R"({"shape": (2,), "fortran_order": False, "descr": "|i1"})",
                               std::string(2, '\1'))),
            "accepted");
}

TEST(Npy, DescrPerDType) {
  EXPECT_EQ(npy_descr(DType::kF32), "<f4");
  EXPECT_EQ(npy_descr(DType::kF64), "<f8");
  EXPECT_EQ(npy_descr(DType::kF16), "<f2");
  EXPECT_EQ(npy_descr(DType::kBF16), "<u2");
  EXPECT_EQ(npy_descr(DType::kI8), "|i1");
  EXPECT_EQ(npy_descr(DType::kI32), "<i4");
  EXPECT_EQ(npy_descr(DType::kI64), "<i8");
}

TEST(Npy, RefusesBrokenAndHostileFiles) {
  const std::string f4 = raw_bytes(std::vector<float>{1, 2, 3, 4});
  EXPECT_THAT(error_of("not numpy at all"), HasSubstr("no \\x93NUMPY magic"));
  EXPECT_THAT(error_of("\x93NUMPY"), HasSubstr("no \\x93NUMPY magic"));  // ends in the prefix
  EXPECT_THAT(error_of(npy_bytes(npy_dict("<f4", "(4,)"), f4, 4)),
              HasSubstr("format version 4; expected 1, 2 or 3"));
  // A header length past the end of the file, or past the bound.
  std::string truncated = npy_bytes(npy_dict("<f4", "(4,)"), "");
  truncated.resize(40);
  EXPECT_THAT(error_of(truncated), HasSubstr("file ends after 30"));
  std::string huge = "\x93NUMPY\x02";
  huge += std::string("\0\xff\xff\xff\x7f", 5) + "{}";
  EXPECT_THAT(error_of(huge), HasSubstr("header of 2147483647 bytes; expected at most 65536"));
  EXPECT_THAT(error_of(npy_bytes(npy_dict(">f4", "(4,)"), f4)), HasSubstr("dtype '>f4'"));
  EXPECT_THAT(error_of(npy_bytes(npy_dict("<c8", "(2,)"), f4)), HasSubstr("dtype '<c8'"));
  EXPECT_THAT(error_of(npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (4,), }", f4)),
              HasSubstr("fortran_order is True; expected a C-order array"));
  EXPECT_THAT(error_of(npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, "
                                 "'shape': (4,), }",
                                 f4)),
              HasSubstr("structured dtypes are not supported"));
  EXPECT_THAT(error_of(npy_bytes("{'descr': '<f4', 'shape': (4,), }", f4)),
              HasSubstr("lacks descr, fortran_order or shape"));
  EXPECT_THAT(error_of(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), "
                                 "'evil': 1}",
                                 f4)),
              HasSubstr("unknown header key 'evil'"));
  EXPECT_THAT(error_of(npy_bytes(npy_dict("<f4", "(-4,)"), f4)),
              HasSubstr("shape is not a tuple of non-negative integers"));
  EXPECT_THAT(error_of(npy_bytes(npy_dict("<f4", "(99999999999999999999,)"), f4)),
              HasSubstr("shape is not a tuple"));
  // A product that wraps int64 (and uint64) must not pass as a small buffer.
  EXPECT_THAT(error_of(npy_bytes(npy_dict("<f4", "(4294967296, 4294967296, 16)"), f4)),
              HasSubstr("is larger than"));
  EXPECT_THAT(error_of(npy_bytes(npy_dict("<f4", "(5,)"), f4)),
              HasSubstr("16 bytes of data for shape (5) of '<f4'; expected 20"));
  EXPECT_THAT(error_of(npy_bytes(npy_dict("<f4", "(4,)"), f4 + "x")),
              HasSubstr("17 bytes of data"));
  EXPECT_THAT(error_of(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,)", f4)),
              HasSubstr("not closed"));
}

TEST(Npy, DigestChecksDTypeAndShape) {
  test::TempDir dir("npy");
  const auto path = test::write_bytes(
      dir.path() / "x.npy",
      npy_bytes(npy_dict("<f4", "(2, 2)"), raw_bytes(std::vector<float>{1, 2, 3, 4})));
  Result<std::string> digest = npy_digest(path, DType::kF32, {2, 2});
  ASSERT_TRUE(digest) << digest.error().message;
  EXPECT_EQ(digest->size(), 32u);
  Result<std::string> shape = npy_digest(path, DType::kF32, {4});
  ASSERT_FALSE(shape);
  EXPECT_THAT(shape.error().message, HasSubstr("shape (2, 2); expected the argument's shape (4)"));
  Result<std::string> dtype = npy_digest(path, DType::kF64, {2, 2});
  ASSERT_FALSE(dtype);
  EXPECT_THAT(dtype.error().message, HasSubstr("dtype '<f4'; expected '<f8' for a f64 argument"));
  Result<std::string> missing = npy_digest(dir.path() / "nope.npy", DType::kF32, {2, 2});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

// The file's elements land in the view's positions (a transposed view here), and a file edited
// after its digest was taken is refused.
TEST(Npy, FillsTheViewAndRefusesAnEditedFile) {
  test::TempDir dir("npy-fill");
  const auto path = test::write_bytes(
      dir.path() / "x.npy",
      npy_bytes(npy_dict("<i4", "(2, 3)"), raw_bytes(std::vector<std::int32_t>{0, 1, 2, 3, 4, 5})));
  Result<std::string> digest = npy_digest(path, DType::kI32, {2, 3});
  ASSERT_TRUE(digest) << digest.error().message;
  TensorSpec t{DType::kI32, {}, {2, 3}, {1, 2}, 0};  // column-major storage
  Problem p{"fill", "p", {}};
  ProblemArg out{{"Y", ArgRole::kOut, DType::kI32}, TensorSpec::contiguous(DType::kI32, {1}), {}};
  ProblemArg in{{"X", ArgRole::kIn, DType::kI32}, t, {}};
  in.init = DataInit{InitKind::kNpy, 0, 0, path.string(), *digest};
  p.args = {out, in};
  Result<ProblemBuffers> b = ProblemBuffers::try_create(p, 0);
  ASSERT_TRUE(b) << b.error().message;
  const auto* x = reinterpret_cast<const std::int32_t*>(b->buffer(1).data());
  EXPECT_EQ((std::vector<std::int32_t>(x, x + 6)), (std::vector<std::int32_t>{0, 3, 1, 4, 2, 5}));

  test::write_bytes(path, npy_bytes(npy_dict("<i4", "(2, 3)"),
                                    raw_bytes(std::vector<std::int32_t>{9, 1, 2, 3, 4, 5})));
  Result<ProblemBuffers> edited = ProblemBuffers::try_create(p, 0);
  ASSERT_FALSE(edited);
  EXPECT_THAT(edited.error().message, HasSubstr("input X: "));
  EXPECT_THAT(edited.error().message, HasSubstr("changed since the problem was made"));
}

}  // namespace
}  // namespace ktune

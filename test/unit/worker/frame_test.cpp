// Frames over a pipe (round trips, a frame split across writes, end of stream between and inside
// frames, an oversized length, a closed reader without SIGPIPE) and the reference-output file
// (round trip by argument index, size mismatch, missing file).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/unique_fd.h"
#include "support/temp_dir.h"
#include "worker/worker_protocol.h"

namespace ktune {
namespace {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
  Pipe() {
    int fds[2];
    if (::pipe(fds) != 0) std::abort();
    read.reset(fds[0]);
    write.reset(fds[1]);
  }
};

void write_raw(int fd, std::string_view bytes) {
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
}

std::string le32(std::uint32_t n) {
  return {static_cast<char>(n & 0xFF), static_cast<char>((n >> 8) & 0xFF),
          static_cast<char>((n >> 16) & 0xFF), static_cast<char>(n >> 24)};
}

TEST(FrameTest, RoundTripsSmallEmptyAndLargePayloads) {
  Pipe p;
  const std::string large(3 << 20, 'x');  // far beyond the pipe's buffer: written by a thread
  std::thread writer([&] {
    EXPECT_TRUE(write_frame(p.write.get(), "hello").has_value());
    EXPECT_TRUE(write_frame(p.write.get(), "").has_value());
    EXPECT_TRUE(write_frame(p.write.get(), large).has_value());
  });
  auto a = read_frame(p.read.get());
  auto b = read_frame(p.read.get());
  auto c = read_frame(p.read.get());
  writer.join();
  ASSERT_TRUE(a.has_value()) << a.error().message;
  EXPECT_EQ(*a, "hello");
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ(*b, "");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(*c, large);
}

TEST(FrameTest, LengthIsFourBytesLittleEndian) {
  Pipe p;
  ASSERT_TRUE(write_frame(p.write.get(), "abc").has_value());
  char buf[8] = {};
  ASSERT_EQ(::read(p.read.get(), buf, sizeof buf), 7);
  EXPECT_EQ(std::string(buf, 7), le32(3) + "abc");
}

TEST(FrameTest, FrameSplitAcrossWritesIsReassembled) {
  Pipe p;
  const std::string frame = le32(11) + "split frame";
  std::thread writer([&] {
    for (char ch : frame) write_raw(p.write.get(), std::string_view(&ch, 1));
  });
  auto got = read_frame(p.read.get());
  writer.join();
  ASSERT_TRUE(got.has_value()) << got.error().message;
  EXPECT_EQ(*got, "split frame");
}

TEST(FrameTest, EndOfStreamBetweenFrames) {
  Pipe p;
  p.write.reset();
  auto got = read_frame(p.read.get());
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().code, ErrorCode::kEndOfStream);
  EXPECT_EQ(got.error().message, "read_frame: end of stream");
}

TEST(FrameTest, EndOfStreamInsideTheLength) {
  Pipe p;
  write_raw(p.write.get(), le32(10).substr(0, 2));
  p.write.reset();
  auto got = read_frame(p.read.get());
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().code, ErrorCode::kIo);
  EXPECT_EQ(got.error().message,
            "read_frame: end of stream inside a frame's length; expected 4 bytes, got 2");
}

TEST(FrameTest, EndOfStreamInsideThePayload) {
  Pipe p;
  write_raw(p.write.get(), le32(10) + "abc");
  p.write.reset();
  auto got = read_frame(p.read.get());
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().code, ErrorCode::kIo);
  EXPECT_EQ(got.error().message,
            "read_frame: end of stream inside a frame; expected 10 bytes, got 3");
}

TEST(FrameTest, OversizedLengthIsAProtocolError) {
  Pipe p;
  write_raw(p.write.get(), le32(kMaxFrameBytes + 1));
  auto got = read_frame(p.read.get());
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().code, ErrorCode::kParse);
  EXPECT_EQ(got.error().message,
            "read_frame: frame too long; expected at most 67108864 bytes, got 67108865");
}

TEST(FrameTest, ClosedReaderGivesIoErrorNotSigpipe) {
  // SIGPIPE keeps its default action (ending the process) here: the test lives only if
  // write_frame keeps the signal from being delivered.
  ASSERT_NE(::signal(SIGPIPE, SIG_DFL), SIG_ERR);
  Pipe p;
  p.read.reset();
  Status s = write_frame(p.write.get(), "nobody listens");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kIo);
  EXPECT_NE(s.error().message.find("write_frame: write to fd"), std::string::npos)
      << s.error().message;
  sigset_t pending;
  sigemptyset(&pending);
  ASSERT_EQ(::sigpending(&pending), 0);
  EXPECT_FALSE(sigismember(&pending, SIGPIPE)) << "SIGPIPE left pending";
  sigset_t mask;
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, nullptr, &mask), 0);
  EXPECT_FALSE(sigismember(&mask, SIGPIPE)) << "SIGPIPE left blocked";
}

// A problem with every kind of argument; the outputs are strided and offset.
Problem reference_problem() {
  Problem p;
  p.op = "axpy";
  p.name = "n=5";
  TensorSpec strided;
  strided.dtype = DType::kF64;
  strided.sizes = {2, 3};
  strided.strides = {4, 1};
  strided.offset = 2;
  p.args.push_back(
      {{"x", ArgRole::kIn, DType::kF32}, TensorSpec::contiguous(DType::kF32, {5}), {}});
  p.args.push_back({{"y", ArgRole::kOut, DType::kF64}, strided, {}});
  p.args.push_back({{"n", ArgRole::kScalar, DType::kI64}, {}, std::int64_t{5}});
  p.args.push_back(
      {{"z", ArgRole::kInOut, DType::kI32}, TensorSpec::contiguous(DType::kI32, {3}), {}});
  return p;
}

ReferenceOutputs patterned_outputs(const Problem& p) {
  ReferenceOutputs ref;
  ref.outputs.resize(p.args.size());
  ref.tolerances.resize(p.args.size());
  for (std::size_t i = 0; i < p.args.size(); ++i) {
    if (p.args[i].param.role != ArgRole::kOut && p.args[i].param.role != ArgRole::kInOut) continue;
    ref.outputs[i] = HostBuffer::allocate(p.args[i].tensor.storage_bytes());
    for (std::size_t b = 0; b < ref.outputs[i].bytes(); ++b) {
      ref.outputs[i].data()[b] = static_cast<std::byte>(b * 7 + i);
    }
  }
  return ref;
}

TEST(ReferenceFileTest, RoundTripByArgumentIndex) {
  test::TempDir dir;
  const Problem p = reference_problem();
  const ReferenceOutputs ref = patterned_outputs(p);
  const auto path = dir.path() / "ref.bin";
  ASSERT_TRUE(write_reference_file(path, p, ref).has_value());
  // y: f64 storage of offset 2 + (1*4 + 2) + 1 = 9 elements; z: 3 i32.
  EXPECT_EQ(std::filesystem::file_size(path), 9 * 8 + 3 * 4u);

  auto back = read_reference_file(path, p, std::nullopt);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  ASSERT_EQ(back->outputs.size(), p.args.size());
  ASSERT_EQ(back->tolerances.size(), p.args.size());
  EXPECT_EQ(back->outputs[0].bytes(), 0u);  // input
  EXPECT_EQ(back->outputs[2].bytes(), 0u);  // scalar
  for (std::size_t i : {1u, 3u}) {
    SCOPED_TRACE(i);
    ASSERT_EQ(back->outputs[i].bytes(), ref.outputs[i].bytes());
    EXPECT_EQ(std::memcmp(back->outputs[i].data(), ref.outputs[i].data(), ref.outputs[i].bytes()),
              0);
    EXPECT_TRUE(back->outputs[i].redzones_intact());
  }
  EXPECT_EQ(back->tolerances[1].rtol, default_tolerance(DType::kF64).rtol);
  EXPECT_EQ(back->tolerances[3].atol, default_tolerance(DType::kI32).atol);

  const Tolerance loose{0.5, 0.25, 0.125};
  back = read_reference_file(path, p, loose);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  for (std::size_t i : {1u, 3u}) {
    EXPECT_EQ(back->tolerances[i].rtol, 0.5);
    EXPECT_EQ(back->tolerances[i].atol, 0.25);
    EXPECT_EQ(back->tolerances[i].max_rel_l2, 0.125);
  }
}

TEST(ReferenceFileTest, SizeMismatchFailsWithThePath) {
  test::TempDir dir;
  const Problem p = reference_problem();
  const auto path = dir.path() / "ref.bin";
  ASSERT_TRUE(write_reference_file(path, p, patterned_outputs(p)).has_value());
  std::filesystem::resize_file(path, 9 * 8 + 3 * 4 - 1);
  auto back = read_reference_file(path, p, std::nullopt);
  ASSERT_FALSE(back.has_value());
  EXPECT_EQ(back.error().code, ErrorCode::kParse);
  EXPECT_EQ(back.error().message,
            "read_reference_file '" + path.string() +
                "': size does not match problem 'n=5'; expected 84 bytes, got 83");
}

TEST(ReferenceFileTest, MissingFileFailsWithThePath) {
  test::TempDir dir;
  const auto path = dir.path() / "absent.bin";
  auto back = read_reference_file(path, reference_problem(), std::nullopt);
  ASSERT_FALSE(back.has_value());
  EXPECT_EQ(back.error().code, ErrorCode::kIo);
  EXPECT_TRUE(back.error().message.starts_with("read_reference_file '" + path.string() +
                                               "': cannot stat; "))
      << back.error().message;
}

TEST(ReferenceFileTest, WriteRejectsOutputsThatDoNotMatchTheProblem) {
  test::TempDir dir;
  const Problem p = reference_problem();
  ReferenceOutputs ref = patterned_outputs(p);
  ref.outputs.pop_back();
  Status s = write_reference_file(dir.path() / "r.bin", p, ref);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);

  ref = patterned_outputs(p);
  ref.outputs[1] = HostBuffer::allocate(8);
  s = write_reference_file(dir.path() / "r.bin", p, ref);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("output y has the wrong size; expected 72 bytes, got 8"),
            std::string::npos)
      << s.error().message;
}

}  // namespace
}  // namespace ktune

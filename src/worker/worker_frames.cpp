// The worker protocol's byte level: length-prefixed frames on a pipe, and the file that carries
// the reference's outputs to the worker (worker_protocol.h).
//
// Frames are blocking whatever the descriptor's mode: EINTR is retried, and EAGAIN on a
// non-blocking descriptor waits in poll(). A write to a pipe whose reader is gone raises SIGPIPE,
// whose default action ends the process; write_frame blocks SIGPIPE in the calling thread for
// the write and consumes the signal it caused, so that the caller sees kIo (EPIPE) instead.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>

#include "core/sigpipe_block.h"
#include "worker/worker_protocol.h"

namespace ktune {
namespace {

std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

// Waits until `fd` is ready for `events` (after EAGAIN on a non-blocking descriptor).
void wait_ready(int fd, short events) {
  pollfd p{fd, events, 0};
  while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
}

Status write_all(int fd, const char* data, std::size_t size) {
  SigpipeBlock block;
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      const int e = errno;
      if (e == EINTR) continue;
      if (e == EAGAIN || e == EWOULDBLOCK) {
        wait_ready(fd, POLLOUT);
        continue;
      }
      if (e == EPIPE) block.consume();
      return make_error(ErrorCode::kIo,
                        fmt::format("write_frame: write to fd {} failed; {}", fd, errno_text(e)));
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return {};
}

// Reads exactly `size` bytes; `got` says how many arrived before end of stream or an error.
Status read_exact(int fd, char* data, std::size_t size, std::size_t& got) {
  got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, data + got, size - got);
    if (n == 0) return make_error(ErrorCode::kEndOfStream, "end of stream");
    if (n < 0) {
      const int e = errno;
      if (e == EINTR) continue;
      if (e == EAGAIN || e == EWOULDBLOCK) {
        wait_ready(fd, POLLIN);
        continue;
      }
      return make_error(ErrorCode::kIo,
                        fmt::format("read from fd {} failed; {}", fd, errno_text(e)));
    }
    got += static_cast<std::size_t>(n);
  }
  return {};
}

bool is_output(ArgRole role) { return role == ArgRole::kOut || role == ArgRole::kInOut; }

}  // namespace

std::string encode_frame(std::string_view payload) {
  const auto n = static_cast<std::uint32_t>(payload.size());
  std::string frame(4, '\0');
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  frame.append(payload);
  return frame;
}

std::uint32_t frame_length(std::string_view header) {
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= std::uint32_t(static_cast<unsigned char>(header[i])) << (8 * i);
  return n;
}

Status write_frame(int fd, std::string_view payload) {
  if (payload.size() > kMaxFrameBytes) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("write_frame: payload too long; expected at most {} bytes, got {}",
                    kMaxFrameBytes, payload.size()));
  }
  const std::string frame = encode_frame(payload);
  return write_all(fd, frame.data(), frame.size());
}

Result<std::string> read_frame(int fd) {
  unsigned char header[4];
  std::size_t got = 0;
  if (Status s = read_exact(fd, reinterpret_cast<char*>(header), 4, got); !s) {
    // A clean end between frames keeps its code (kEndOfStream: run_worker_loop's normal stop);
    // an end inside the length, or a failed read, is a broken pipe.
    if (got == 0) return std::unexpected(with_context(s.error(), "read_frame"));
    return make_error(
        ErrorCode::kIo,
        fmt::format("read_frame: {} inside a frame's length; expected 4 bytes, got {}",
                    s.error().message, got));
  }
  const std::uint32_t n = frame_length(std::string_view(reinterpret_cast<const char*>(header), 4));
  if (n > kMaxFrameBytes) {
    return make_error(ErrorCode::kParse,
                      fmt::format("read_frame: frame too long; expected at most {} bytes, got {}",
                                  kMaxFrameBytes, n));
  }
  std::string payload(n, '\0');
  if (Status s = read_exact(fd, payload.data(), n, got); !s) {
    return make_error(ErrorCode::kIo,
                      fmt::format("read_frame: {} inside a frame; expected {} bytes, got {}",
                                  s.error().message, n, got));
  }
  return payload;
}

Status write_reference_file(const std::filesystem::path& path, const Problem& problem,
                            const ReferenceOutputs& outputs) {
  const std::string where = fmt::format("write_reference_file '{}'", path.string());
  if (outputs.outputs.size() != problem.args.size()) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: outputs do not match the problem; expected {} (one per "
                                  "argument), got {}",
                                  where, problem.args.size(), outputs.outputs.size()));
  }
  for (std::size_t i = 0; i < problem.args.size(); ++i) {
    const ProblemArg& a = problem.args[i];
    if (is_output(a.param.role) && outputs.outputs[i].bytes() != a.tensor.storage_bytes()) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: output {} has the wrong size; expected {} bytes, got {}", where,
                      a.param.name, a.tensor.storage_bytes(), outputs.outputs[i].bytes()));
    }
  }
  // A new file only (O_EXCL), never through a link planted where it goes (O_NOFOLLOW), readable
  // by this user alone.
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, S_IRUSR | S_IWUSR);
  if (fd < 0) {
    return make_error(ErrorCode::kIo,
                      fmt::format("{}: cannot create; {}", where, errno_text(errno)));
  }
  for (std::size_t i = 0; i < problem.args.size(); ++i) {
    if (!is_output(problem.args[i].param.role)) continue;
    const auto* p = reinterpret_cast<const char*>(outputs.outputs[i].data());
    std::size_t left = outputs.outputs[i].bytes();
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int e = errno;
        ::close(fd);
        return make_error(ErrorCode::kIo,
                          fmt::format("{}: cannot write; {}", where, errno_text(e)));
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  if (::close(fd) != 0) {
    return make_error(ErrorCode::kIo,
                      fmt::format("{}: cannot write; {}", where, errno_text(errno)));
  }
  return {};
}

Result<ReferenceOutputs> read_reference_file(const std::filesystem::path& path,
                                             const Problem& problem,
                                             const std::optional<Tolerance>& tolerance) {
  const std::string where = fmt::format("read_reference_file '{}'", path.string());
  std::size_t expected = 0;
  for (const ProblemArg& a : problem.args) {
    if (is_output(a.param.role)) expected += a.tensor.storage_bytes();
  }
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec)
    return make_error(ErrorCode::kIo, fmt::format("{}: cannot stat; {}", where, ec.message()));
  if (size != expected) {
    return make_error(ErrorCode::kParse,
                      fmt::format("{}: size does not match problem '{}'; expected {} bytes, got {}",
                                  where, problem.name, expected, size));
  }
  std::ifstream in(path, std::ios::binary);
  ReferenceOutputs ref;
  ref.outputs.resize(problem.args.size());
  ref.tolerances.resize(problem.args.size());
  for (std::size_t i = 0; i < problem.args.size(); ++i) {
    const ProblemArg& a = problem.args[i];
    if (!is_output(a.param.role)) continue;
    ref.outputs[i] = HostBuffer::allocate(a.tensor.storage_bytes());
    in.read(reinterpret_cast<char*>(ref.outputs[i].data()),
            static_cast<std::streamsize>(ref.outputs[i].bytes()));
    ref.tolerances[i] = output_tolerance(a, tolerance);
  }
  if (!in)
    return make_error(ErrorCode::kIo, fmt::format("{}: cannot read; {}", where, errno_text(errno)));
  return ref;
}

}  // namespace ktune

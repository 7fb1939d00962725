// Fuzz target: the worker protocol's decoder, as the parent reads a worker's answers and a worker
// reads its requests. The input is tried two ways: as one frame's payload (decode_message), and
// as a byte stream of frames (read_frame from an in-memory file, then decode_message of each
// payload, up to 16 frames), and a request's buffers are sized. A message that decodes must
// re-encode and decode again: whatever one side accepts, the other side can send.
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <string_view>

#include "core/checked_size.h"
#include "fuzz_target.h"
#include "worker/worker_protocol.h"

namespace {

using namespace ktune;

void check_round_trip(const WorkerMessage& m) {
  std::string encoded;
  if (m.ping) encoded = encode_ping();
  if (m.pong_pid) encoded = encode_pong(*m.pong_pid);
  if (m.request) encoded = encode_request(*m.request);
  if (m.response) encoded = encode_response(*m.response);
  if (encoded.empty()) fuzz::property_failed("a decoded message has a type", "none set");
  Result<WorkerMessage> again = decode_message(encoded);
  if (!again) {
    fuzz::property_failed("a decoded message re-encodes and decodes",
                          again.error().message.c_str());
  }
}

void decode(std::string_view payload) {
  Result<WorkerMessage> m = decode_message(payload);
  if (!m) return;
  // What a worker computes next from a request: every buffer's size, to allocate it.
  if (m->request) {
    for (const ProblemArg& a : m->request->problem.args) {
      if (!checked_storage_bytes(a.tensor)) {
        fuzz::property_failed("a decoded request's buffers have a size", a.param.name.c_str());
      }
      (void)a.tensor.storage_bytes();
    }
  }
  check_round_trip(*m);
}

// The frames of `bytes`, read as the worker loop and the parent read a pipe.
void read_frames(std::string_view bytes) {
  const int fd = ::memfd_create("ktune-fuzz", MFD_CLOEXEC);
  if (fd < 0) return;
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  if (done == bytes.size() && ::lseek(fd, 0, SEEK_SET) == 0) {
    for (int i = 0; i < 16; ++i) {
      Result<std::string> frame = read_frame(fd);
      if (!frame) break;
      decode(*frame);
    }
  }
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  decode(bytes);
  read_frames(bytes);
  return 0;
}

// run_worker_loop: the body of ktune-worker. One request at a time, each answered by the
// request flow of its launch kind's device (created on first use).
#include "worker/worker_loop.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "worker/device_handler.h"
#include "worker/worker_protocol.h"

namespace ktune {
namespace {

constexpr int kExitProtocol = 3;
constexpr int kExitDeviceLost = 4;

// One request flow per device kind, each created on its first request.
class Handlers {
 public:
  BenchmarkResponse handle(const BenchmarkRequest& request) {
    std::unique_ptr<RequestFlow>& flow = flows_[launch_device(request.launch.kind)];
    if (!flow) flow = make_request_flow(launch_device(request.launch.kind));
    return flow->serve(request);
  }

 private:
  std::map<DeviceKind, std::unique_ptr<RequestFlow>> flows_;
};

}  // namespace

int run_worker_loop(int in_fd, int out_fd) {
  Handlers handler;
  for (;;) {
    Result<std::string> frame = read_frame(in_fd);
    if (!frame) {
      // The parent closed the request pipe between frames: the normal way to stop us.
      // Anything else (an end inside a frame, a failed read) is a broken protocol.
      if (frame.error().code == ErrorCode::kEndOfStream) return 0;
      std::fprintf(stderr, "error: ktune-worker: %s\n", frame.error().message.c_str());
      return kExitProtocol;
    }
    Result<WorkerMessage> message = decode_message(*frame);
    if (!message || !(message->ping || message->request)) {
      std::fprintf(stderr, "error: ktune-worker: %s\n",
                   message ? "unexpected message; expected ping or request, got pong or response"
                           : message.error().message.c_str());
      return kExitProtocol;
    }
    bool device_lost = false;
    std::string reply;
    if (message->ping) {
      reply = encode_pong(static_cast<int>(::getpid()));
    } else {
      BenchmarkResponse response = handler.handle(*message->request);
      device_lost = response.restart;
      reply = encode_response(response);
    }
    // What a kernel printed reaches the parent's output tail now, not at exit.
    std::fflush(stdout);
    std::fflush(stderr);
    if (Status s = write_frame(out_fd, reply); !s) {
      std::fprintf(stderr, "error: ktune-worker: %s\n", s.error().message.c_str());
      return kExitProtocol;
    }
    if (device_lost) return kExitDeviceLost;  // the parent starts a fresh worker
  }
}

}  // namespace ktune

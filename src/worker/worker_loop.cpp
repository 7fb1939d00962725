// run_worker_loop: the body of ktune-worker. One request at a time, each answered by the
// request flow of its launch kind's device (created on first use).
#include "worker/worker_loop.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "worker/device_handler.h"
#include "worker/worker_guard.h"
#include "worker/worker_protocol.h"

namespace ktune {
namespace {

constexpr int kExitProtocol = 3;
constexpr int kExitDeviceLost = 4;

// One request flow per device kind, each created on its first request.
class Handlers {
 public:
  // The flow is created before the guard's reset, so that what a device runtime sets up as it
  // starts (threads, signal handlers) is the worker's own state, not a candidate's.
  BenchmarkResponse handle(const BenchmarkRequest& request, CandidateGuard* guard) {
    std::unique_ptr<RequestFlow>& flow = flows_[launch_device(request.launch.kind)];
    if (!flow) flow = make_request_flow(launch_device(request.launch.kind));
    if (guard != nullptr) guard->reset();
    BenchmarkResponse response = flow->serve(request);
    if (guard == nullptr) return response;
    if (std::string problem = guard->check(); !problem.empty()) {
      response.outcome = Outcome::kCrashed;
      response.message = request.candidate + ": " + problem;
      response.stats.reset();
      response.restart = true;  // decoys are placed once per worker: a fresh one gets new ones
    }
    return response;
  }

 private:
  std::map<DeviceKind, std::unique_ptr<RequestFlow>> flows_;
};

}  // namespace

int run_worker_loop(int in_fd, int out_fd, CandidateGuard* guard, pid_t parent_pid,
                    bool exit_at_end) {
  Handlers handler;
  for (;;) {
    Result<std::string> frame = read_frame(in_fd);
    if (parent_pid > 0 && ::getppid() != parent_pid) return kExitProtocol;  // orphaned
    if (!frame) {
      // The parent closed the request pipe between frames: the normal way to stop us.
      // Anything else (an end inside a frame, a failed read) is a broken protocol.
      if (frame.error().code == ErrorCode::kEndOfStream) {
        if (exit_at_end) {
          std::fflush(nullptr);
          ::_exit(0);
        }
        return 0;
      }
      std::fprintf(stderr, "error: ktune-worker: %s\n", frame.error().message.c_str());
      return kExitProtocol;
    }
    Result<WorkerMessage> message = decode_message(*frame);
    // The nonce stays in `nonce` only, out of the request the candidate's flow sees; the frame's
    // copy is wiped (a candidate can still search this process's memory: see the docs).
    ::explicit_bzero(frame->data(), frame->size());
    const std::string nonce = message ? message->nonce : std::string();
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
      BenchmarkResponse response = handler.handle(*message->request, guard);
      device_lost = response.restart;
      reply = encode_response(response, nonce);
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

// MpiComm (mpi_comm.h): MPI on one thread of its own; a stub without MPI support.
#include "mpi_comm.h"

#include <fmt/format.h>

#include <cstdio>

#include "cli.h"

#if KTUNE_HAVE_MPI
// MPI's C API only: not Open MPI's deprecated C++ bindings (a library ktune does not link).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace ktune::cli {

#if !KTUNE_HAVE_MPI

struct MpiComm::Impl {};

Result<std::unique_ptr<MpiComm>> MpiComm::start() {
  return make_error(ErrorCode::kUnavailable, "no MPI support; rebuild with libopenmpi-dev");
}
MpiComm::MpiComm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MpiComm::~MpiComm() = default;
int MpiComm::rank() const { return 0; }
int MpiComm::size() const { return 1; }
int MpiComm::local_rank() const { return 0; }
int MpiComm::local_size() const { return 1; }
const std::optional<cpu_set_t>& MpiComm::core_share() const {
  static const std::optional<cpu_set_t> none;
  return none;
}
bool MpiComm::cores_oversubscribed() const { return false; }
void MpiComm::send(int, MpiTag, std::string) {}
std::optional<MpiMessage> MpiComm::receive(std::chrono::milliseconds) { return std::nullopt; }
bool MpiComm::alive(int) const { return false; }
bool MpiComm::finish(std::chrono::milliseconds) { return true; }

#else

namespace {

using Clock = std::chrono::steady_clock;

// What every rank tells the others once, at the start.
struct RankInfo {
  std::int64_t pid = 0;
  std::array<char, 256> host{};
  cpu_set_t mask{};
};

std::string mpi_error(int code) {
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int len = 0;
  MPI_Error_string(code, text.data(), &len);
  return std::string(text.data(), static_cast<std::size_t>(std::max(len, 0)));
}

struct Outgoing {
  int to = 0;
  MpiTag tag = MpiTag::kHeartbeat;
  std::string body;
};

struct Pending {
  MPI_Request request = MPI_REQUEST_NULL;
  std::unique_ptr<std::string> body;  // alive until the send completes
  int to = 0;
};

}  // namespace

struct MpiComm::Impl {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  std::optional<cpu_set_t> share;
  bool oversubscribed = false;
  std::vector<RankInfo> ranks;

  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<Outgoing> outbox;
  std::deque<MpiMessage> inbox;
  std::vector<Clock::time_point> last_seen;
  bool started = false;
  bool stopping = false;
  bool finished = false;  // the thread is done with MPI (finalised, or never started it)
  std::optional<Error> start_error;
  std::thread thread;

  bool same_host(int r) const {
    return std::strncmp(ranks[r].host.data(), ranks[rank].host.data(), ranks[r].host.size()) == 0;
  }

  bool alive(int r) const {
    if (r == rank) return true;
    if (r < 0 || r >= size) return false;
    if (same_host(r) && ::kill(static_cast<pid_t>(ranks[r].pid), 0) != 0 && errno == ESRCH) {
      return false;
    }
    std::lock_guard lock(mu);
    return Clock::now() - last_seen[r] < kSilenceLimit;
  }

  // Initialisation, on the communication thread; false with start_error set.
  bool init() {
    int provided = 0;
    if (int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        rc != MPI_SUCCESS) {
      start_error = Error{ErrorCode::kUnavailable, "MPI_Init_thread failed"};
      return false;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    RankInfo me;
    me.pid = ::getpid();
    ::gethostname(me.host.data(), me.host.size() - 1);
    // The main thread's mask (this thread was started by it and inherited it).
    CPU_ZERO(&me.mask);
    if (::sched_getaffinity(0, sizeof me.mask, &me.mask) != 0) CPU_ZERO(&me.mask);
    ranks.resize(static_cast<std::size_t>(size));
    if (int rc = MPI_Allgather(&me, sizeof me, MPI_BYTE, ranks.data(), sizeof me, MPI_BYTE,
                               MPI_COMM_WORLD);
        rc != MPI_SUCCESS) {
      start_error = Error{ErrorCode::kUnavailable, "MPI_Allgather: " + mpi_error(rc)};
      return false;
    }
    // The ranks on this host, in rank order.
    std::vector<int> local;
    for (int r = 0; r < size; ++r) {
      if (same_host(r)) local.push_back(r);
    }
    local_size = static_cast<int>(local.size());
    local_rank = static_cast<int>(std::find(local.begin(), local.end(), rank) - local.begin());
    if (const char* env = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")) local_rank = std::atoi(env);
    bool same_masks = true;
    for (int r : local) same_masks = same_masks && CPU_EQUAL(&ranks[r].mask, &me.mask);
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &me.mask)) cpus.push_back(c);
    }
    if (same_masks && local_size > 1 && !cpus.empty()) {
      cpu_set_t mine;
      CPU_ZERO(&mine);
      const auto n = cpus.size();
      const auto l = static_cast<std::size_t>(local_rank);
      const auto ls = static_cast<std::size_t>(local_size);
      if (ls <= n) {
        for (std::size_t i = l * n / ls; i < (l + 1) * n / ls; ++i) CPU_SET(cpus[i], &mine);
      } else {
        CPU_SET(cpus[l % n], &mine);
        oversubscribed = true;
      }
      share = mine;
    }
    last_seen.assign(static_cast<std::size_t>(size), Clock::now());
    return true;
  }

  void post(std::vector<Pending>& pending, int to, MpiTag tag, std::string body) {
    Pending p;
    p.body = std::make_unique<std::string>(std::move(body));
    p.to = to;
    if (MPI_Isend(p.body->data(), static_cast<int>(p.body->size()), MPI_BYTE, to,
                  static_cast<int>(tag), MPI_COMM_WORLD, &p.request) == MPI_SUCCESS) {
      pending.push_back(std::move(p));
    }
  }

  void loop() {
    std::vector<Pending> pending;
    auto next_heartbeat = Clock::now();
    std::optional<Clock::time_point> stop_at;
    for (;;) {
      std::deque<Outgoing> out;
      bool stop = false;
      {
        std::unique_lock lock(mu);
        cv.wait_for(lock, std::chrono::milliseconds(5),
                    [&] { return !outbox.empty() || stopping; });
        out.swap(outbox);
        stop = stopping;
      }
      for (Outgoing& o : out) post(pending, o.to, o.tag, std::move(o.body));
      const auto now = Clock::now();
      if (now >= next_heartbeat && !stop) {
        next_heartbeat = now + std::chrono::seconds(1);
        for (int r = 0; r < size; ++r) {
          if (r == rank || (rank != 0 && r != 0) || !alive(r)) continue;
          post(pending, r, MpiTag::kHeartbeat, {});
        }
      }
      for (;;) {
        int flag = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS ||
            !flag) {
          break;
        }
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        std::string body(static_cast<std::size_t>(std::max(count, 0)), '\0');
        if (MPI_Recv(body.data(), count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS) {
          break;
        }
        std::lock_guard lock(mu);
        if (st.MPI_SOURCE >= 0 && st.MPI_SOURCE < size) last_seen[st.MPI_SOURCE] = Clock::now();
        if (st.MPI_TAG != static_cast<int>(MpiTag::kHeartbeat)) {
          inbox.push_back({st.MPI_SOURCE, static_cast<MpiTag>(st.MPI_TAG), std::move(body)});
          cv.notify_all();
        }
      }
      std::erase_if(pending, [](Pending& p) {
        int done = 0;
        return MPI_Test(&p.request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done;
      });
      if (stop) {
        if (!stop_at) stop_at = Clock::now() + std::chrono::seconds(5);
        // A send to a rank that is gone never completes: dropped, so that finalising goes on.
        std::erase_if(pending, [&](Pending& p) {
          if (alive(p.to) && Clock::now() < *stop_at) return false;
          MPI_Cancel(&p.request);
          MPI_Request_free(&p.request);
          return true;
        });
        if (pending.empty()) break;
      }
    }
    MPI_Finalize();
  }
};

MpiComm::MpiComm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MpiComm::~MpiComm() {
  if (!finish()) {
    std::fflush(nullptr);
    std::_Exit(kExitError);
  }
}

Result<std::unique_ptr<MpiComm>> MpiComm::start() {
  auto impl = std::make_unique<Impl>();
  Impl* p = impl.get();
  p->thread = std::thread([p] {
    const bool ok = p->init();
    {
      std::lock_guard lock(p->mu);
      p->started = true;
    }
    p->cv.notify_all();
    if (ok) p->loop();
    {
      std::lock_guard lock(p->mu);
      p->finished = true;
    }
    p->cv.notify_all();
  });
  {
    std::unique_lock lock(p->mu);
    p->cv.wait(lock, [&] { return p->started; });
  }
  if (p->start_error) {
    Error e = *p->start_error;
    p->thread.join();
    return std::unexpected(e);
  }
  return std::unique_ptr<MpiComm>(new MpiComm(std::move(impl)));
}

int MpiComm::rank() const { return impl_->rank; }
int MpiComm::size() const { return impl_->size; }
int MpiComm::local_rank() const { return impl_->local_rank; }
int MpiComm::local_size() const { return impl_->local_size; }
const std::optional<cpu_set_t>& MpiComm::core_share() const { return impl_->share; }
bool MpiComm::cores_oversubscribed() const { return impl_->oversubscribed; }

void MpiComm::send(int to, MpiTag tag, std::string body) {
  {
    std::lock_guard lock(impl_->mu);
    impl_->outbox.push_back({to, tag, std::move(body)});
  }
  impl_->cv.notify_all();
}

std::optional<MpiMessage> MpiComm::receive(std::chrono::milliseconds timeout) {
  std::unique_lock lock(impl_->mu);
  if (!impl_->cv.wait_for(lock, timeout, [&] { return !impl_->inbox.empty(); })) {
    return std::nullopt;
  }
  MpiMessage m = std::move(impl_->inbox.front());
  impl_->inbox.pop_front();
  return m;
}

bool MpiComm::alive(int rank) const { return impl_->alive(rank); }

bool MpiComm::finish(std::chrono::milliseconds limit) {
  if (!impl_ || !impl_->thread.joinable()) return true;
  {
    std::unique_lock lock(impl_->mu);
    impl_->stopping = true;
    impl_->cv.notify_all();
    if (!impl_->cv.wait_for(lock, limit, [&] { return impl_->finished; })) return false;
  }
  impl_->thread.join();
  return true;
}

#endif

}  // namespace ktune::cli

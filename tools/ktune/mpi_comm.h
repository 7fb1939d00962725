// The MPI transport of `ktune tune --distributed` (tune_distributed.h): the one file of ktune that
// includes <mpi.h> is mpi_comm.cpp, built into the CLI only (never into the libraries that
// programs link), and only when CMake found MPI (KTUNE_MPI; cmake/mpi_support.cmake).
//
// One thread owns MPI (MPI_THREAD_FUNNELED): it initialises MPI, sends what the tuning queues,
// receives everything into an inbox, and sends a heartbeat every second (every rank to rank 0,
// rank 0 to every rank), so that a rank that died is noticed without a collective: its process
// is gone (same host: kill(pid, 0)) or it has been silent for kSilenceLimit. Errors return
// (MPI_ERRORS_RETURN) rather than abort the job; whether the job survives a rank's death is
// mpirun's choice (Open MPI ends every rank unless run with --enable-recovery;
// docs/architecture.md, "Tuning over MPI ranks").
#pragma once

#include <sched.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "ktune/core/status.h"

namespace ktune::cli {

// Whether this build has MPI (KTUNE_HAVE_MPI, a compile definition of the CLI only).
inline constexpr bool kBuiltWithMpi = KTUNE_HAVE_MPI;

// Tags of the messages between ranks (tune_distributed.cpp).
enum class MpiTag : int { kHeartbeat = 1, kPlan = 2, kResult = 3, kFinal = 4 };

struct MpiMessage {
  int from = 0;
  MpiTag tag = MpiTag::kHeartbeat;
  std::string body;
};

// A rank silent for this long counts as gone.
inline constexpr std::chrono::seconds kSilenceLimit{60};

class MpiComm {
 public:
  // Initialises MPI on the communication thread. kUnavailable, "no MPI support; rebuild with
  // libopenmpi-dev", in a build without MPI.
  [[nodiscard]] static Result<std::unique_ptr<MpiComm>> start();
  ~MpiComm();  // finish(); past its limit, _Exit(kExitError)
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  [[nodiscard]] int rank() const;
  [[nodiscard]] int size() const;
  // The rank among those on this host ($OMPI_COMM_WORLD_LOCAL_RANK, else from MPI), and their
  // count: the CUDA device of a rank, its share of the cores.
  [[nodiscard]] int local_rank() const;
  [[nodiscard]] int local_size() const;
  // This rank's share of the host's cores when every rank on the host was started with the same
  // affinity (mpirun --bind-to none, or oversubscribed): the cores split into local_size()
  // contiguous groups (one core each, shared round-robin, when there are more ranks than cores).
  // nullopt when mpirun already bound the ranks to cores of their own: keep them.
  [[nodiscard]] const std::optional<cpu_set_t>& core_share() const;
  // Whether the ranks on this host share cores (more ranks than cores).
  [[nodiscard]] bool cores_oversubscribed() const;

  // Queues a message; returns at once.
  void send(int to, MpiTag tag, std::string body);
  // The next message received (heartbeats excluded), waiting up to `timeout`.
  [[nodiscard]] std::optional<MpiMessage> receive(std::chrono::milliseconds timeout);
  // False once `rank`'s process is gone (same host) or it has been silent past kSilenceLimit.
  [[nodiscard]] bool alive(int rank) const;

  // Sends what is queued (up to a few seconds for a peer that does not take it), stops the
  // thread and finalises MPI, waiting up to `limit`. False when MPI has not finished by then
  // (Open MPI's MPI_Finalize can wait for a rank that died, as seen under load with
  // --enable-recovery): the thread is still inside MPI, so the process must end without its
  // destructors (the caller flushes and calls _Exit with its exit code; the destructor does so
  // with kExitError). Idempotent.
  [[nodiscard]] bool finish(std::chrono::milliseconds limit = std::chrono::seconds(20));

  struct Impl;

 private:
  explicit MpiComm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune::cli

// Planted faults against the worker process itself (issue 16, classes 4, 5, 6 and 8), chosen
// by FAULT; test/faults/worker_faults_test.cpp tunes them through the real CLI. C = A + B over
// n floats; 0 and 1 are correct. Processes a fault starts write their pids as files into
// $KTUNE_FAULT_DIR (when set), so that the test can check that none survives.
#include <fcntl.h>
#include <fenv.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xmmintrin.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

namespace {

void note_pid(pid_t pid) {
  if (const char* dir = std::getenv("KTUNE_FAULT_DIR")) {
    std::FILE* f = std::fopen((std::string(dir) + "/" + std::to_string(pid)).c_str(), "w");
    if (f != nullptr) std::fclose(f);
  }
}

// A well-formed "ok" answer that claims 1 ns a run, as a frame: 4-byte length, then JSON. The
// id is guessed (requests are numbered from 1).
void forge_to(int fd) {
  char json[512];
  for (int id = 1; id <= 4; ++id) {
    const int n = std::snprintf(json, sizeof json,
                                R"({"type":"response","id":%d,"outcome":"ok","message":"",)"
                                R"("output_tail":"","restart":false,"stats":{"median_ns":1,)"
                                R"("min_ns":1,"max_ns":1,"mad_ns":0,"runs":3}})",
                                id);
    const unsigned char len[4] = {static_cast<unsigned char>(n), static_cast<unsigned char>(n >> 8),
                                  0, 0};
    if (::write(fd, len, 4) != 4 || ::write(fd, json, static_cast<size_t>(n)) != n) return;
  }
}

// Every descriptor above stderr that is a pipe: where the worker's answers go, wherever it moved.
void forge_to_every_pipe() {
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::atoi(e.path().filename().c_str());
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(e.path(), ec).string();
    if (fd > 2 && target.rfind("pipe:", 0) == 0) {
      ::fcntl(fd, F_SETFL, O_NONBLOCK);
      forge_to(fd);
    }
  }
}

[[noreturn]] void spin() {
  for (;;) __asm__ volatile("");
}

}  // namespace

void add(float* C, float* A, const float* B, int n) {
  if (FAULT == 40) {  // the issue's forger: an "ok" frame on descriptor 4, then exit
    forge_to(4);
    ::_exit(0);
  }
  if (FAULT == 41) forge_to_every_pipe();  // then computes correctly
  if (FAULT == 42) {
    forge_to_every_pipe();
    ::_exit(0);
  }
  if (FAULT == 43) {  // leaves rounding upward and FTZ/DAZ set
    std::fesetround(FE_UPWARD);
    _mm_setcsr(_mm_getcsr() | 0x8040);
  }
  if (FAULT == 44) {  // leaves another working directory and umask
    if (::chdir("/") != 0) std::abort();
    ::umask(0777);
  }
  if (FAULT == 45) {  // innocent, but right only in a clean process state
    char cwd[4096];
    const bool clean = std::fegetround() == FE_TONEAREST && (_mm_getcsr() & 0x8040) == 0 &&
                       ::getcwd(cwd, sizeof cwd) != nullptr && std::strcmp(cwd, "/") != 0;
    const mode_t mask = ::umask(022);
    ::umask(mask);
    if (!clean || mask == 0777) C[0] = 1e6f;  // overwritten below only when clean
    if (!clean || mask == 0777) return;
  }
  if (FAULT == 46 || FAULT == 47) {  // a thread that keeps writing C after the call returns
    std::thread([C, n] {
      for (;;) {
        C[n / 2] = 12345.0f;
        ::usleep(FAULT == 46 ? 50 : 200 * 1000);
      }
    }).detach();
  }
  if (FAULT == 48) {  // a child left spinning, in the worker's process group
    const pid_t child = ::fork();
    if (child == 0) spin();
    note_pid(child);
  }
  if (FAULT == 49) {  // a grandchild in its own session, re-parented when its parent exits
    const pid_t child = ::fork();
    if (child == 0) {
      ::setsid();
      const pid_t grandchild = ::fork();
      if (grandchild == 0) spin();
      note_pid(grandchild);
      ::_exit(0);
    }
    ::waitpid(child, nullptr, 0);
  }
  if (FAULT == 50) {  // a child that allocates and touches 1 GiB while the call waits for it
    const pid_t child = ::fork();
    if (child == 0) {
      for (int i = 0; i < 16; ++i) {
        void* p = std::malloc(64 << 20);
        if (p != nullptr) std::memset(p, 1, 64 << 20);
      }
      ::sleep(30);
      ::_exit(0);
    }
    ::waitpid(child, nullptr, 0);
  }
  if (FAULT == 51) {  // spins, with a child in its own session spinning too (kill -9 of ktune)
    note_pid(::getpid());
    const pid_t child = ::fork();
    if (child == 0) {
      ::setsid();
      spin();
    }
    note_pid(child);
    spin();
  }
  if (FAULT == 53) {  // a copy of the worker carries on while the worker itself exits
    static bool forked = false;
    if (!forked) {
      forked = true;
      if (::fork() != 0) ::_exit(0);
    }
  }
  if (FAULT == 52) {  // correct, with an idle pool thread kept between calls, as OpenMP does
    static std::mutex m;
    static std::condition_variable cv;
    static bool started = false;
    if (!started) {
      started = true;
      std::thread([] {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [] { return false; });
      }).detach();
    }
  }
  for (int i = 0; i < n; ++i) C[i] = A[i] + B[i];
  if (FAULT == 1) C[0] = A[0] + B[0];
}

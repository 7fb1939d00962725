// ktune-worker: the process that will run generated code in isolation (the isolation issue).
// Until then it only answers --version; ktune runs candidates in-process and claims no isolation.
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("ktune-worker %s\n", KTUNE_WORKER_VERSION);
    return 0;
  }
  std::fprintf(stderr,
               "error: ktune-worker: isolated benchmarking is not implemented yet; "
               "ktune runs candidates in-process\n");
  return 2;
}

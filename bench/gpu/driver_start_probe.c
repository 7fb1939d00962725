// How long the two ways to learn a GPU's model take in a new process, and how they interact
// (docs/benchmarks.md, "Compiling ahead of the driver"): NVML (libnvidia-ml.so.1: init, the
// handle of device 0, its name, compute capability and CUDA cores) and the driver
// (libcuda.so.1: cuInit), each alone, one after the other, or on two threads at once. No CUDA
// headers needed.
//
//   gcc -O2 -pthread -o probe bench/gpu/driver_start_probe.c -ldl
//   for i in 1 2 3; do for m in nvml cuda seq both cuda-first; do ./probe $m; sleep 0.2; done; done
//
// Modes: nvml, cuda (each alone); seq (NVML, then cuInit); both (NVML on a thread started just
// before cuInit on the main one); cuda-first (cuInit, then NVML). Times in ms from the start.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double t0;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void* nvml(void* arg) {
  (void)arg;
  const double start = now_ms() - t0;
  void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!h) {
    printf("nvml: libnvidia-ml.so.1 not found\n");
    return 0;
  }
  int (*init)(void) = (int (*)(void))dlsym(h, "nvmlInit_v2");
  int (*handle)(unsigned, void**) =
      (int (*)(unsigned, void**))dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
  int (*cc)(void*, int*, int*) =
      (int (*)(void*, int*, int*))dlsym(h, "nvmlDeviceGetCudaComputeCapability");
  const int r = init();
  const double inited = now_ms() - t0;
  void* d = 0;
  int major = 0, minor = 0;
  const int q = handle(0, &d) | cc(d, &major, &minor);
  printf("nvml: start %.1f, init done %.1f, facts done %.1f ms (cc %d.%d; rc %d %d)\n", start,
         inited, now_ms() - t0, major, minor, r, q);
  return 0;
}

static void cuda(void) {
  const double start = now_ms() - t0;
  void* h = dlopen("libcuda.so.1", RTLD_NOW);
  if (!h) {
    printf("cuda: libcuda.so.1 not found\n");
    return;
  }
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
  const int r = init(0);
  printf("cuda: start %.1f, cuInit done %.1f ms (rc %d)\n", start, now_ms() - t0, r);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  pthread_t t;
  t0 = now_ms();
  if (strcmp(mode, "nvml") == 0) {
    nvml(0);
  } else if (strcmp(mode, "cuda") == 0) {
    cuda();
  } else if (strcmp(mode, "seq") == 0) {
    nvml(0);
    cuda();
  } else if (strcmp(mode, "both") == 0) {
    pthread_create(&t, 0, nvml, 0);
    cuda();
    pthread_join(t, 0);
  } else if (strcmp(mode, "cuda-first") == 0) {
    cuda();
    nvml(0);
  } else {
    fprintf(stderr, "usage: %s nvml|cuda|seq|both|cuda-first\n", argv[0]);
    return 2;
  }
  return 0;
}

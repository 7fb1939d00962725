// How long the two ways to learn a GPU's model take in a new process, and how they interact
// (docs/benchmarks.md, "Compiling ahead of the driver"): NVML (libnvidia-ml.so.1: init, the
// handle of device 0, its name, compute capability and CUDA cores) and the driver
// (libcuda.so.1: cuInit), each alone, one after the other, or on two threads at once. No CUDA
// headers needed.
//
//   gcc -O2 -pthread -o probe bench/gpu/driver_start_probe.c -ldl
//   for i in 1 2 3; do for m in nvml cuda seq both cuda-first; do ./probe $m; sleep 0.2; done; done
//   for i in 1 2 3; do sleep 3; ./probe steps; sleep 3; ./probe steps-noattach; done
//   ./probe cuda & ./probe cuda; wait     (two processes starting the driver at once)
//
// Modes: nvml, cuda (each alone); seq (NVML, then cuInit); both (NVML on a thread started just
// before cuInit on the main one); cuda-first (cuInit, then NVML); steps, steps-noattach (each
// NVML call predict_cuda_device makes, timed alone, without or with NVML_INIT_FLAG_NO_ATTACH).
// Times in ms from the start.
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

// Each NVML call of predict_cuda_device timed on its own, after nvmlInitWithFlags(flags): 0, or
// 2 (NVML_INIT_FLAG_NO_ATTACH: the GPUs are not attached at init).
static void nvml_steps(unsigned flags) {
  double last = now_ms() - t0;
#define STEP(what, call)                                         \
  do {                                                           \
    const int rc_ = (call);                                      \
    const double at_ = now_ms() - t0;                            \
    printf("  %-28s %7.1f ms (rc %d)\n", what, at_ - last, rc_); \
    last = at_;                                                  \
  } while (0)
  void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!h) {
    printf("nvml: libnvidia-ml.so.1 not found\n");
    return;
  }
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "nvmlInitWithFlags");
  int (*count)(unsigned*) = (int (*)(unsigned*))dlsym(h, "nvmlDeviceGetCount_v2");
  int (*handle)(unsigned, void**) =
      (int (*)(unsigned, void**))dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
  int (*name)(void*, char*, unsigned) =
      (int (*)(void*, char*, unsigned))dlsym(h, "nvmlDeviceGetName");
  int (*cc)(void*, int*, int*) =
      (int (*)(void*, int*, int*))dlsym(h, "nvmlDeviceGetCudaComputeCapability");
  int (*cores)(void*, unsigned*) = (int (*)(void*, unsigned*))dlsym(h, "nvmlDeviceGetNumGpuCores");
  int (*mig)(void*, unsigned*, unsigned*) =
      (int (*)(void*, unsigned*, unsigned*))dlsym(h, "nvmlDeviceGetMigMode");
  int (*driver)(int*) = (int (*)(int*))dlsym(h, "nvmlSystemGetCudaDriverVersion_v2");
  printf("nvml steps, flags %u (dlopen %.1f ms):\n", flags, now_ms() - t0 - last);
  last = now_ms() - t0;
  unsigned n = 0, c = 0, m1 = 0, m2 = 0;
  int major = 0, minor = 0, v = 0;
  void* d = 0;
  char text[96] = "";
  STEP("nvmlInitWithFlags", init(flags));
  STEP("nvmlDeviceGetCount_v2", count(&n));
  STEP("nvmlDeviceGetHandleByIndex_v2", handle(0, &d));
  STEP("nvmlDeviceGetName", name(d, text, sizeof text));
  STEP("nvmlDeviceGetCudaComputeCapability", cc(d, &major, &minor));
  STEP("nvmlDeviceGetNumGpuCores", cores(d, &c));
  STEP("nvmlDeviceGetMigMode", mig(d, &m1, &m2));
  STEP("nvmlSystemGetCudaDriverVersion_v2", driver(&v));
#undef STEP
  printf("  %s, cc %d.%d, %u cores, mig %u, driver %d, %u GPUs; %.1f ms in all\n", text, major,
         minor, c, m1, v, n, now_ms() - t0);
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
  } else if (strcmp(mode, "steps") == 0) {
    nvml_steps(0);
  } else if (strcmp(mode, "steps-noattach") == 0) {
    nvml_steps(2);
  } else if (strcmp(mode, "cuda-first") == 0) {
    cuda();
    nvml(0);
  } else {
    fprintf(stderr, "usage: %s nvml|cuda|seq|both|cuda-first|steps|steps-noattach\n", argv[0]);
    return 2;
  }
  return 0;
}

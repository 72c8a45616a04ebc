// nvJitLink's cost per call, in one process (bench/gpu/ptxas_floor.sh builds and runs it): the
// PTX file given is assembled 4 times for -arch=sm_90 (each: create, add the PTX, complete,
// destroy), and each call's milliseconds are printed. The first call pays the library's own
// start-up; the later ones are what a long-lived process (tl-viz, an autotuner) would pay.
//   gcc -O2 nvjitlink_probe.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lnvJitLink
#include <nvJitLink.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double nowMs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE.ptx\n", argv[0]);
    return 1;
  }
  FILE* f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char* ptx = malloc((size_t)n + 1);
  if (!ptx || fread(ptx, 1, (size_t)n, f) != (size_t)n) return 1;
  ptx[n] = 0;
  fclose(f);
  const char* opts[] = {"-arch=sm_90"};
  for (int call = 0; call < 4; ++call) {
    double t0 = nowMs();
    nvJitLinkHandle h;
    nvJitLinkResult r = nvJitLinkCreate(&h, 1, opts);
    if (r == NVJITLINK_SUCCESS) r = nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, ptx, (size_t)n + 1, "kernel.ptx");
    if (r == NVJITLINK_SUCCESS) r = nvJitLinkComplete(h);
    nvJitLinkDestroy(&h);
    printf("call %d: %.1f ms%s\n", call + 1, nowMs() - t0, r == NVJITLINK_SUCCESS ? "" : " (failed)");
  }
  free(ptx);
  return 0;
}

// CHECK(x) for the GPU probes of sim/gpus/*.cu (latency, launch, mma): a failed CUDA runtime
// call prints the file, line, the call and the error, and returns 1 from the function.
#pragma once

#include <cstdio>

#include <cuda_runtime.h>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e = (x);                                                                      \
    if (e != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      return 1;                                                                               \
    }                                                                                         \
  } while (0)

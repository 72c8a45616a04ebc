// gpu_peaks: the GPU's peaks, measured (issue 14), the figures bench/cpu/suite.py divides by the
// CPU's (bench/cpu/cpu_peaks): fp32 FMA throughput and device-memory copy bandwidth.
//
//   nvcc -O3 -arch=sm_90 -o gpu_peaks bench/gpu/gpu_peaks.cu     (cudart linked statically)
//   ./gpu_peaks                                                    -> one JSON object on stdout
//
// FMA: every thread runs 8 independent chains of fmaf for `iters` steps (8 chains hide the
// 4-cycle latency on each of the SM's FMA pipes), 8 blocks of 256 threads per SM; GFLOP/s =
// 2 * chains * iters * threads / time, best of 5 launches timed with CUDA events. Copy: a
// 1 GiB float4 copy, bytes read + written over time, best of 10.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>

#define CHECK(x)                                                                  \
  do {                                                                            \
    cudaError_t e = (x);                                                          \
    if (e != cudaSuccess) {                                                       \
      std::fprintf(stderr, "gpu_peaks: error: %s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

__global__ void fmaChains(float* out, int iters, float a, float b) {
  float c[8];
  for (int k = 0; k < 8; ++k) c[k] = threadIdx.x * 1e-3f + k;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 8; ++k) c[k] = fmaf(c[k], a, b);
  }
  float s = 0;
  for (int k = 0; k < 8; ++k) s += c[k];
  if (s == 12345.678f) out[blockIdx.x * blockDim.x + threadIdx.x] = s;  // keeps the chains alive
}

__global__ void copy4(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) out[i] = in[i];
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int blocks = prop.multiProcessorCount * 8, threads = 256, iters = 1 << 16;
  float* sink;
  CHECK(cudaMalloc(&sink, size_t(blocks) * threads * sizeof(float)));
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  float best = 1e30f, ms = 0;
  fmaChains<<<blocks, threads>>>(sink, iters, 0.999999f, 1e-7f);
  for (int rep = 0; rep < 5; ++rep) {
    CHECK(cudaEventRecord(t0));
    fmaChains<<<blocks, threads>>>(sink, iters, 0.999999f, 1e-7f);
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    best = std::min(best, ms);
  }
  const double fmaTflops = 2.0 * 8 * double(iters) * blocks * threads / (best * 1e-3) / 1e12;

  const size_t bytes = size_t(1) << 30, n = bytes / sizeof(float4);
  float4 *a, *b;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMemset(a, 0, bytes));
  copy4<<<prop.multiProcessorCount * 16, 512>>>(a, b, n);
  best = 1e30f;
  for (int rep = 0; rep < 10; ++rep) {
    CHECK(cudaEventRecord(t0));
    copy4<<<prop.multiProcessorCount * 16, 512>>>(a, b, n);
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    best = std::min(best, ms);
  }
  CHECK(cudaGetLastError());
  const double copyGbps = 2.0 * double(bytes) / (best * 1e-3) / 1e9;
  std::printf("{\"device\": \"%s\", \"sms\": %d, \"fma_tflops\": %.2f, \"copy_gbps\": %.1f}\n", prop.name,
              prop.multiProcessorCount, fmaTflops, copyGbps);
  return 0;
}

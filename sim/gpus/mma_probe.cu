// mma_probe.cu: measures what the simulator's tensor-core model needs (sim/Gpu.h, `mma` in
// sim/gpus/*.json): for each mma.sync.aligned shape tilelab emits (ir/MmaLayout.h), its
// dependent-issue latency and its throughput per SM sub-partition, on the GPU it runs on. Not
// part of the build: the figures in sim/gpus/h200.json marked "measured (mma_probe.cu)" came from
//
//   nvcc -O2 -arch=sm_90 -o mma_probe sim/gpus/mma_probe.cu && ./mma_probe > h200_mma_probe.json
//
// Method (as latency_probe.cu, after Jia et al. 2018):
//   latency     one warp runs a chain of N mma whose C is the previous D (each waits for the
//               last); clock64() around the chain gives cycles per mma;
//   throughput  every sub-partition (4 warps per SM... here 4 x `ilp` independent chains: 8 warps
//               per SM, each with 4 independent accumulators) runs N mma per chain; the
//               cycles for the whole block give mma per cycle per SM, from which the cycles one
//               sub-partition's tensor core is busy per mma (4 sub-partitions per SM).
// Each figure is the median of 5 runs; a grid of one block per SM keeps the clock honest.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "probe_check.h"

constexpr int kChain = 4096;

// One mma of each kind: d = a*b + d, with the fragment register counts of ir/MmaLayout.h.
template <int Kind>
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (Kind == 0)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else if constexpr (Kind == 1)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else if constexpr (Kind == 2)
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// chains: independent accumulators per warp (1: latency; 4: throughput).
template <int Kind, int Chains>
__global__ void probe(uint32_t seed, float* sink, long long* cycles) {
  uint32_t a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = seed * (threadIdx.x + 3 * i) & 0x3c003c00u;  // small normal values
  for (int i = 0; i < 2; ++i) b[i] = seed * (threadIdx.x + 7 * i) & 0x3c003c00u;
  float d[Chains][4] = {};
  __syncthreads();
  long long t0 = clock64();
  for (int n = 0; n < kChain; ++n)
#pragma unroll
    for (int c = 0; c < Chains; ++c) mma<Kind>(d[c], a, b);
  __syncthreads();
  long long t1 = clock64();
  float s = 0;
  for (int c = 0; c < Chains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

template <int Kind>
int measure(const char* name, int sms, float* sink, long long* cyc, bool last) {
  std::vector<double> lat, thr;
  std::vector<long long> host(static_cast<size_t>(sms), 0);
  for (int rep = 0; rep < 5; ++rep) {
    probe<Kind, 1><<<1, 32>>>(12345u + rep, sink, cyc);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(host.data(), cyc, sizeof(long long), cudaMemcpyDeviceToHost));
    lat.push_back(double(host[0]) / kChain);
    // 8 warps per block (two per sub-partition), 4 chains each, one block per SM.
    probe<Kind, 4><<<sms, 256>>>(777u + rep, sink, cyc);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(host.data(), cyc, sizeof(long long) * size_t(sms), cudaMemcpyDeviceToHost));
    std::sort(host.begin(), host.end());
    const double mmaPerSm = 8.0 * 4 * kChain;
    // cycles one sub-partition's tensor core spends per mma: the block's cycles x 4 sub-partitions / mma
    thr.push_back(double(host[size_t(sms / 2)]) * 4.0 / mmaPerSm);
  }
  std::sort(lat.begin(), lat.end());
  std::sort(thr.begin(), thr.end());
  std::printf("    \"%s\": {\"latencyCycles\": %.1f, \"issueCyclesPerSubpartition\": %.2f}%s\n", name, lat[2], thr[2],
              last ? "" : ",");
  return 0;
}

int main() {
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  float* sink;
  long long* cyc;
  CHECK(cudaMalloc(&sink, sizeof(float) * size_t(p.multiProcessorCount) * 256));
  CHECK(cudaMalloc(&cyc, sizeof(long long) * size_t(p.multiProcessorCount)));
  std::printf("{\n  \"device\": \"%s\", \"smCount\": %d,\n  \"chain\": %d,\n  \"mma\": {\n", p.name, p.multiProcessorCount, kChain);
  if (measure<0>("m16n8k16.f16", p.multiProcessorCount, sink, cyc, false)) return 1;
  if (measure<1>("m16n8k16.bf16", p.multiProcessorCount, sink, cyc, false)) return 1;
  if (measure<2>("m16n8k8.tf32", p.multiProcessorCount, sink, cyc, false)) return 1;
  if (measure<3>("m16n8k32.e4m3", p.multiProcessorCount, sink, cyc, true)) return 1;
  std::printf("  }\n}\n");
  return 0;
}

// latency_probe.cu: measures the load latencies a GPU description lists (sharedLatencyCycles,
// l1LatencyCycles, l2LatencyCycles, dramLatencyCycles) and the SM clock, on the GPU it runs on.
// Not part of the build: the figures in sim/gpus/h200.json marked "measured (latency_probe.cu)"
// came from
//
//   nvcc -O2 -arch=sm_90 -o latency_probe sim/gpus/latency_probe.cu && ./latency_probe
//
// Method (pointer chasing, as in Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via
// Microbenchmarking", 2018): one thread follows a chain p = a[p] whose next address depends on
// the previous load, so loads cannot overlap; clock64() before and after N loads gives cycles
// per load. Each level is reached by choosing the footprint and the cache operator:
//   shared  a chain in shared memory;
//   L1      a 16 KB chain with ld.global.ca, walked once to warm L1, then timed;
//   L2      a 16 MB chain (> L1, < L2) with ld.global.cg (cached in L2 only), warmed, timed;
//   DRAM    a 1 GB chain (> L2), each 4 KB step a new line, walked once cold with ld.global.cg.
// The figure includes the address arithmetic of the loop (a few cycles), as the simulator's
// dependent-load latency should. The clock is cycles / %globaltimer nanoseconds over the DRAM walk.
#include <cstdio>
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "probe_check.h"

__device__ __forceinline__ uint32_t ldCa(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t ldCg(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint64_t globalNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// out[0] = cycles per load, out[1] = the chain's end (keeps the loads alive), out[2] = ns.
__global__ void chaseShared(uint64_t* out, int steps) {
  __shared__ uint32_t chain[4096];
  for (int i = 0; i < 4096; ++i) chain[i] = (i + 33) % 4096;  // 132-byte stride, wraps
  __syncthreads();
  uint32_t p = 0;
  for (int i = 0; i < 64; ++i) p = chain[p];
  uint64_t t0 = clock64();
  for (int i = 0; i < steps; ++i) p = chain[p];
  uint64_t t1 = clock64();
  out[0] = (t1 - t0) / steps;
  out[1] = p;
}

template <bool kCa>
__global__ void chaseGlobal(const uint32_t* chain, uint64_t* out, int warmSteps, int steps) {
  uint32_t p = 0;
  for (int i = 0; i < warmSteps; ++i) p = kCa ? ldCa(chain + p) : ldCg(chain + p);
  uint64_t n0 = globalNs();
  uint64_t t0 = clock64();
  for (int i = 0; i < steps; ++i) p = kCa ? ldCa(chain + p) : ldCg(chain + p);
  uint64_t t1 = clock64();
  uint64_t n1 = globalNs();
  out[0] = (t1 - t0) / steps;
  out[1] = p;
  out[2] = n1 - n0;
  out[3] = t1 - t0;
}

// A chain over `bytes` with `strideBytes` between consecutive loads, wrapping around.
std::vector<uint32_t> makeChain(size_t bytes, size_t strideBytes) {
  size_t n = bytes / 4, stride = strideBytes / 4;
  std::vector<uint32_t> c(n, 0);
  for (size_t i = 0; i < n; i += stride) c[i] = static_cast<uint32_t>((i + stride) % n);
  return c;
}

int run(const char* what, size_t bytes, size_t stride, bool ca, int warm, int steps, uint64_t* dOut) {
  std::vector<uint32_t> host = makeChain(bytes, stride);
  uint32_t* d = nullptr;
  CHECK(cudaMalloc(&d, bytes));
  CHECK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaDeviceSynchronize());
  if (ca) chaseGlobal<true><<<1, 1>>>(d, dOut, warm, steps);
  else chaseGlobal<false><<<1, 1>>>(d, dOut, warm, steps);
  CHECK(cudaDeviceSynchronize());
  uint64_t out[4];
  CHECK(cudaMemcpy(out, dOut, sizeof(out), cudaMemcpyDeviceToHost));
  std::printf("  \"%s\": {\"cycles\": %llu, \"ns_per_load\": %.1f, \"clock_GHz\": %.3f, \"footprint_bytes\": %zu, "
              "\"stride_bytes\": %zu},\n",
              what, (unsigned long long)out[0], double(out[2]) / steps, double(out[3]) / double(out[2]), bytes, stride);
  CHECK(cudaFree(d));
  return 0;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  uint64_t* dOut = nullptr;
  CHECK(cudaMalloc(&dOut, 4 * sizeof(uint64_t)));
  // The limits occupancy uses, as the driver reports them (to check the description against).
  std::printf("{\n  \"device\": \"%s\", \"cc\": %d%d, \"sms\": %d, \"l2_bytes\": %d, \"shared_per_sm\": %zu, "
              "\"shared_per_block\": %zu, \"shared_per_block_optin\": %zu, \"reserved_shared_per_block\": %zu, "
              "\"threads_per_sm\": %d, \"blocks_per_sm\": %d, \"regs_per_sm\": %d, \"regs_per_block\": %d, "
              "\"warp_size\": %d,\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize,
              prop.sharedMemPerMultiprocessor, prop.sharedMemPerBlock, prop.sharedMemPerBlockOptin,
              prop.reservedSharedMemPerBlock, prop.maxThreadsPerMultiProcessor, prop.maxBlocksPerMultiProcessor,
              prop.regsPerMultiprocessor, prop.regsPerBlock, prop.warpSize);
  chaseShared<<<1, 1>>>(dOut, 4096);
  CHECK(cudaDeviceSynchronize());
  uint64_t out[2];
  CHECK(cudaMemcpy(out, dOut, sizeof(out), cudaMemcpyDeviceToHost));
  std::printf("  \"shared\": {\"cycles\": %llu},\n", (unsigned long long)out[0]);
  // L1: 16 KB, 128 B stride = 128 lines; warm for 4 rounds, time 16 rounds.
  if (run("l1", 16 << 10, 128, true, 512, 2048, dOut)) return 1;
  // L2: 16 MB, 256 B stride (a new line every load); warm one full pass, time a second.
  if (run("l2", 16 << 20, 256, false, (16 << 20) / 256, 8192, dOut)) return 1;
  // DRAM: 1 GB, 4 KB + 128 B stride (a new line, a new DRAM page), cold.
  if (run("dram", size_t(1) << 30, 4096 + 128, false, 0, 16384, dOut)) return 1;
  std::printf("  \"done\": true\n}\n");
  CHECK(cudaFree(dOut));
  return 0;
}

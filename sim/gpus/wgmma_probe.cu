// wgmma_probe.cu: measures what the simulator's warpgroup-MMA model needs (sim/Gpu.h
// wgmmaCyclesF16, wgmmaCyclesTf32, wgmmaCyclesFp8; sim/Timing.cpp): the cycles one
// sub-partition's tensor core is busy per 16 x 8 x K piece (32 bytes of K) of a
// wgmma.mma_async.m64nNk16.f32.bf16.bf16, m64nNk8.f32.tf32.tf32 and m64nNk32.f32.e4m3.e4m3, and
// the latency of one wgmma from issue to the end of its wgmma_wait. Hopper only (sm_90a). Not part of the build: run it as
//
//   nvcc -O2 -gencode=arch=compute_90a,code=sm_90a -o wgmma_probe sim/gpus/wgmma_probe.cu \
//     && ./wgmma_probe > h200_wgmma_probe.json
//
// (bench/gpu/wgmma_h200.sh does, when nvcc is there). Method, as mma_probe.cu:
//   latency     one warpgroup, a chain of wgmma each followed by commit and wait 0;
//   throughput  two warpgroups per SM, one block per SM, each issuing kChain wgmma on one
//               accumulator between one fence and one commit / wait (as the lowering does for a
//               K step); the block's cycles x 4 sub-partitions / (wgmma x N/8 pieces per warp x 4
//               warps) is the figure. The operands are zeros in shared memory (the values do not
//               change the rate), A K-major and B N-major (tf32, e4m3: K-major) with the
//               128-byte swizzle, as stages/thread/LowerWgmma.cpp stages them.
// Each figure is the median of 5 runs.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "probe_check.h"

constexpr int kChain = 1024;
constexpr int kN = 128;  // m64n128k16: 64 f32 accumulators per thread

__device__ __forceinline__ uint64_t descriptor(const void* smem, uint32_t lbo, uint32_t sbo) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  return uint64_t((a & 0x3FFFF) >> 4) | uint64_t(lbo >> 4) << 16 | uint64_t(sbo >> 4) << 32 | uint64_t(1) << 62;
}

// One wgmma of 32 bytes of K per row, m64n128: bf16 (k16, B N-major: transpose 1), tf32 (k8) and
// e4m3 (k32), both K-major only (no transpose operands).
#define TL_WGMMA128(name, shape_types, tail)                                                                       \
  __device__ __forceinline__ void name(float(&d)[64], uint64_t da, uint64_t db) {                                 \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\nwgmma.mma_async.sync.aligned." shape_types " "         \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26," \
                 "%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,"    \
                 "%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1" tail ";\n}\n"             \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),     \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),           \
                   "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),         \
                   "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),         \
                   "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),         \
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),         \
                   "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),         \
                   "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),         \
                   "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])          \
                 : "l"(da), "l"(db), "r"(1)                                                                         \
                 : "memory");                                                                                       \
  }
TL_WGMMA128(wgmmaBf16, "m64n128k16.f32.bf16.bf16", ", 0, 1")
TL_WGMMA128(wgmmaTf32, "m64n128k8.f32.tf32.tf32", "")
TL_WGMMA128(wgmmaE4m3, "m64n128k32.f32.e4m3.e4m3", "")

enum class Kind { Bf16, Tf32, E4m3 };

// waitEach: commit and wait after every wgmma (latency), else once after the chain (throughput).
template <bool WaitEach, Kind kind>
__global__ void probe(float* sink, long long* cycles) {
  __shared__ __align__(1024) uint16_t a[64 * 64];   // 64 rows x 128 bytes, K-major
  __shared__ __align__(1024) uint16_t b[kN * 64];   // bf16: 16 k rows x 256 bytes (two 64-column blocks); else 128 n rows x 128 bytes
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) a[i] = 0;
  for (int i = threadIdx.x; i < kN * 64; i += blockDim.x) b[i] = 0;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const uint64_t da = descriptor(a, 16, 1024), db = descriptor(b, kind == Kind::Bf16 ? 16 * 128 : 16, 1024);
  float d[64] = {};
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  __syncthreads();
  long long t0 = clock64();
  for (int n = 0; n < kChain; ++n) {
    if (kind == Kind::Bf16) wgmmaBf16(d, da, db);
    if (kind == Kind::Tf32) wgmmaTf32(d, da, db);
    if (kind == Kind::E4m3) wgmmaE4m3(d, da, db);
    if (WaitEach) {
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  __syncthreads();
  long long t1 = clock64();
  float s = 0;
  for (float x : d) s += x;
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

// Latency and cycles per piece (median of 5 runs each) of one kind; 1 on a CUDA error (CHECK).
template <Kind kind>
int measure(int sms, float* sink, long long* cyc, double* latency, double* perPiece) {
  std::vector<long long> host(static_cast<size_t>(sms), 0);
  std::vector<double> lat, thr;
  for (int rep = 0; rep < 5; ++rep) {
    probe<true, kind><<<1, 128>>>(sink, cyc);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(host.data(), cyc, sizeof(long long), cudaMemcpyDeviceToHost));
    lat.push_back(double(host[0]) / kChain);
    probe<false, kind><<<sms, 256>>>(sink, cyc);  // two warpgroups per SM
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(host.data(), cyc, sizeof(long long) * size_t(sms), cudaMemcpyDeviceToHost));
    std::sort(host.begin(), host.end());
    // pieces per sub-partition: 2 warpgroups x kChain wgmma x N/8 pieces per warp (one warp per sub-partition)
    const double pieces = 2.0 * kChain * (kN / 8);
    thr.push_back(double(host[size_t(sms / 2)]) / pieces);
  }
  std::sort(lat.begin(), lat.end());
  std::sort(thr.begin(), thr.end());
  *latency = lat[2];
  *perPiece = thr[2];
  return 0;
}

int main() {
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  const int sms = p.multiProcessorCount;
  float* sink;
  long long* cyc;
  CHECK(cudaMalloc(&sink, sizeof(float) * size_t(sms) * 256));
  CHECK(cudaMalloc(&cyc, sizeof(long long) * size_t(sms)));
  double lat[3], per[3];
  if (measure<Kind::Bf16>(sms, sink, cyc, &lat[0], &per[0]) || measure<Kind::Tf32>(sms, sink, cyc, &lat[1], &per[1]) ||
      measure<Kind::E4m3>(sms, sink, cyc, &lat[2], &per[2]))
    return 1;
  std::printf("{\n  \"device\": \"%s\", \"smCount\": %d,\n  \"chain\": %d,\n  \"wgmma\": {\n", p.name, sms, kChain);
  const char* names[3] = {"m64n%dk16.bf16", "m64n%dk8.tf32", "m64n%dk32.e4m3"};
  for (int i = 0; i < 3; ++i) {
    std::printf("    \"");
    std::printf(names[i], kN);
    std::printf("\": {\"latencyCycles\": %.1f, \"cyclesPerPiece\": %.2f}%s\n", lat[i], per[i], i < 2 ? "," : "");
  }
  std::printf("  }\n}\n");
  return 0;
}

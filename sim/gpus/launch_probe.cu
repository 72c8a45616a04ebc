// launch_probe.cu: measures what a kernel launch and a block launch cost on the GPU it runs on,
// the two figures the timing model adds around its per-SM simulation (sim/Timing.h:
// launchOverheadUs, blockLaunchCycles). Not part of the build: the figures in
// sim/gpus/h200.json marked "measured (launch_probe.cu)" came from
//
//   nvcc -O2 -arch=sm_90 -o launch_probe sim/gpus/launch_probe.cu && ./launch_probe
//
// Method, timed as tl-ptx times kernels (CUDA events around one launch, median of 200):
//   launch    an empty kernel of 1 block: the time an event pair sees for a kernel that does
//             nothing, i.e. launch + drain;
//   turnover  an empty kernel with W x SMs x slots blocks (slots = the blocks one SM holds at
//             once) for W = 1 .. 64 waves; the slope of time against waves is one wave of
//             blocks through every slot: the cycles from one block retiring to the next one
//             starting in its slot, plus the empty block's own few cycles. Two block sizes
//             (32 and 128 threads: 32 and 16 slots) tell a per-slot cost from a per-SM one.
// Output: one JSON object on stdout.
#include <algorithm>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "probe_check.h"

// Does nothing visible; the store never happens (flag is 0) but keeps the kernel non-trivial.
__global__ void empty(int* flag) {
  if (flag && *flag == 12345) flag[1] = threadIdx.x;
}

// Median event time of `reps` launches of `blocks` x `threads`, in milliseconds.
static float medianMs(int blocks, int threads, int* flag, int reps) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < reps + 5; ++i) {
    cudaEventRecord(a);
    empty<<<blocks, threads>>>(flag);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (i >= 5) t.push_back(ms);  // the first launches warm up
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  int* flag = nullptr;
  CHECK(cudaMalloc(&flag, 2 * sizeof(int)));
  CHECK(cudaMemset(flag, 0, 2 * sizeof(int)));
  int clockKHz = 0;
  CHECK(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, 0));
  const double ghz = clockKHz / 1e6;
  const int reps = 200;

  float launchMs = medianMs(1, 32, flag, reps);
  std::printf("{\n \"device\": \"%s\", \"sms\": %d, \"clock_GHz\": %.3f,\n", p.name, p.multiProcessorCount, ghz);
  std::printf(" \"launch_us\": %.3f,\n \"turnover\": [\n", 1000.0 * launchMs);
  const int sizes[2] = {32, 128};
  for (int s = 0; s < 2; ++s) {
    int threads = sizes[s];
    int slots = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&slots, empty, threads, 0));
    std::vector<int> waves = {1, 2, 4, 8, 16, 32, 64};
    std::vector<double> x, y;
    std::printf("  {\"threads\": %d, \"slots\": %d, \"points\": [", threads, slots);
    for (size_t i = 0; i < waves.size(); ++i) {
      int blocks = waves[i] * p.multiProcessorCount * slots;
      float ms = medianMs(blocks, threads, flag, 50);
      x.push_back(waves[i]);
      y.push_back(1000.0 * ms);
      std::printf("%s{\"waves\": %d, \"blocks\": %d, \"us\": %.3f}", i ? ", " : "", waves[i], blocks, 1000.0 * ms);
    }
    // Least-squares slope (us per wave) over the points.
    double mx = 0, my = 0;
    for (size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
    mx /= x.size(), my /= y.size();
    double sxy = 0, sxx = 0;
    for (size_t i = 0; i < x.size(); ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
    double usPerWave = sxy / sxx;
    std::printf("],\n   \"us_per_wave\": %.4f, \"cycles_per_block_per_slot\": %.1f}%s\n", usPerWave,
                usPerWave * 1000.0 * ghz, s == 0 ? "," : "");
  }
  std::printf(" ]\n}\n");
  CHECK(cudaFree(flag));
  return 0;
}

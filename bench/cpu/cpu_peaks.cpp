// cpu_peaks: this machine's CPU peaks, measured (issue 14): FMA throughput and memory bandwidth
// (STREAM's copy and triad), on one thread and on all of them. The suite (bench/cpu/suite.py)
// and lab 7 quote these figures, not data sheets.
//
//   cpu_peaks [--threads N] [--mib M]     -> one JSON object on stdout
//
// FMA: each thread runs 12 independent chains of vector FMAs (the widest of AVX-512 and AVX2
// the CPU has; 12 chains cover a 4-cycle latency on 2 ports with room) for ~0.2 s: GFLOP/s =
// 2 * lanes * chains * iterations / time. Bandwidth: three arrays of M MiB each (default 256,
// far past any cache), each thread touching its own contiguous part first (first-touch
// placement); copy c = a (8 bytes per element moved), triad a = b + s * c (12 bytes, STREAM's
// convention: the write-allocate read is not counted); the best of 5 runs.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <class F>
double parallelSeconds(int threads, F f) {
  std::vector<std::thread> pool;
  const double t0 = now();
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { f(t); });
  for (auto& th : pool) th.join();
  return now() - t0;
}

constexpr int kChains = 12;

__attribute__((target("avx512f"))) float fmaAvx512(long iters) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(1.0f + c * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  }
  __m512 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm512_add_ps(s, acc[c]);
  float out[16];
  _mm512_storeu_ps(out, s);
  return out[0] + out[15];
}

__attribute__((target("avx2,fma"))) float fmaAvx2(long iters) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(1.0f + c * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  __m256 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm256_add_ps(s, acc[c]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[7];
}

double fmaGflops(int threads, bool avx512) {
  const int lanes = avx512 ? 16 : 8;
  long iters = 1 << 20;
  for (;;) {
    std::vector<float> sink(static_cast<size_t>(threads));
    const double s = parallelSeconds(threads, [&](int t) { sink[static_cast<size_t>(t)] = avx512 ? fmaAvx512(iters) : fmaAvx2(iters); });
    if (s > 0.2) return 2.0 * lanes * kChains * double(iters) * threads / s / 1e9;
    iters *= 2;
  }
}

struct Bandwidth {
  double copy = 0, triad = 0;
};

Bandwidth bandwidth(int threads, size_t mib) {
  const size_t n = mib * (size_t(1) << 20) / sizeof(float);
  float* a = static_cast<float*>(std::aligned_alloc(4096, n * sizeof(float)));
  float* b = static_cast<float*>(std::aligned_alloc(4096, n * sizeof(float)));
  float* c = static_cast<float*>(std::aligned_alloc(4096, n * sizeof(float)));
  auto part = [&](int t, size_t& lo, size_t& hi) {
    lo = n * static_cast<size_t>(t) / static_cast<size_t>(threads);
    hi = n * static_cast<size_t>(t + 1) / static_cast<size_t>(threads);
  };
  parallelSeconds(threads, [&](int t) {
    size_t lo, hi;
    part(t, lo, hi);
    for (size_t i = lo; i < hi; ++i) a[i] = 1.0f, b[i] = 2.0f, c[i] = 0.5f;
  });
  Bandwidth best;
  for (int rep = 0; rep < 5; ++rep) {
    const double sc = parallelSeconds(threads, [&](int t) {
      size_t lo, hi;
      part(t, lo, hi);
      std::memcpy(c + lo, a + lo, (hi - lo) * sizeof(float));
    });
    best.copy = std::max(best.copy, 2.0 * double(n) * sizeof(float) / sc / 1e9);
    const double st = parallelSeconds(threads, [&](int t) {
      size_t lo, hi;
      part(t, lo, hi);
      for (size_t i = lo; i < hi; ++i) a[i] = b[i] + 3.0f * c[i];
    });
    best.triad = std::max(best.triad, 3.0 * double(n) * sizeof(float) / st / 1e9);
  }
  std::free(a);
  std::free(b);
  std::free(c);
  return best;
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  size_t mib = 256;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) threads = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--mib")) mib = std::max<size_t>(16, std::strtoul(argv[i + 1], nullptr, 10));
    else {
      std::fprintf(stderr, "cpu_peaks: error: unknown option %s (expected --threads N, --mib M)\n", argv[i]);
      return 1;
    }
  }
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    std::fprintf(stderr, "cpu_peaks: error: this CPU has neither AVX-512 nor AVX2 with FMA\n");
    return 1;
  }
  const double fma1 = fmaGflops(1, avx512), fmaN = fmaGflops(threads, avx512);
  const Bandwidth bw1 = bandwidth(1, mib), bwN = bandwidth(threads, mib);
  std::printf(
      "{\"cpu\": \"%s\", \"isa\": \"%s\", \"threads\": %d, \"array_mib\": %zu,\n"
      " \"fma_gflops_1_thread\": %.1f, \"fma_gflops\": %.1f,\n"
      " \"copy_gbps_1_thread\": %.2f, \"triad_gbps_1_thread\": %.2f, \"copy_gbps\": %.2f, \"triad_gbps\": %.2f}\n",
      cpuModel().c_str(), avx512 ? "avx512" : "avx2", threads, mib, fma1, fmaN, bw1.copy, bw1.triad, bwN.copy, bwN.triad);
  return 0;
}

// Compile time of the PTX path, as the issue asks it to be measured (Google Benchmark):
//   compile/front_end        source text -> block IR (parse, @launch, IR generation)
//   compile/to_ptx           block IR -> block passes, layouts, lowering, LLVM, PTX
//   compile/ptxas            PTX -> cubin with ptxas -v (a separate process; skipped without ptxas)
//   compile/cold_total       source -> cubin through jitCompile with the cache bypassed
//   compile/cache_hit        cache key + lookup of a stored entry (what a second run pays)
// for kernels/softmax.tl at its default launch. The module load itself needs a GPU; tl-ptx
// reports it per run (docs/performance.md).
//
//   build/bench/bench_compile --benchmark_repetitions=5 --benchmark_out=bench/results/compile.json
#include <benchmark/benchmark.h>

#include <filesystem>
#include <iostream>

#include "ptx/Codegen.h"
#include "ptx/JitCache.h"
#include "ptx/Ptxas.h"
#include "runtime/Driver.h"
#include "thread/Pipeline.h"

namespace {

const std::string kKernel = std::string(TL_SOURCE_DIR) + "/kernels/softmax.tl";

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  auto k = tl::compileKernelFile(kKernel, {}, std::cerr);
  if (!k) return 1;
  const std::string ptx = tl::compileToPTX(*tl::compileToThreadIR(*k->ir, k->launch).threadIR, {}).ptx;
  const std::string cacheDir = (std::filesystem::temp_directory_path() / "tilelab-bench-cache").string();
  std::filesystem::remove_all(cacheDir);
  tl::JitCache cache(cacheDir);
  tl::JitOptions jo;
  tl::jitCompile(*k, jo, &cache);  // fills the entry the cache_hit benchmark reads

  benchmark::RegisterBenchmark("compile/front_end", [](benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(tl::compileKernelFile(kKernel, {}, std::cerr));
  })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("compile/to_ptx", [&](benchmark::State& state) {
    for (auto _ : state) {
      tl::ThreadCompilation tc = tl::compileToThreadIR(*k->ir, k->launch);
      benchmark::DoNotOptimize(tl::compileToPTX(*tc.threadIR, {}).ptx.size());
    }
  })->Unit(benchmark::kMillisecond);
  std::string why;
  if (!tl::findPtxas(&why).empty()) {
    benchmark::RegisterBenchmark("compile/ptxas", [&](benchmark::State& state) {
      for (auto _ : state) benchmark::DoNotOptimize(tl::runPtxas(ptx, "sm_90").registers);
    })->Unit(benchmark::kMillisecond);
  } else {
    std::cerr << "compile/ptxas skipped: " << why << "\n";
  }
  benchmark::RegisterBenchmark("compile/cold_total", [&](benchmark::State& state) {
    tl::JitOptions nocache = jo;
    nocache.useCache = false;
    for (auto _ : state) {
      auto fresh = tl::compileKernelFile(kKernel, {}, std::cerr);
      benchmark::DoNotOptimize(tl::jitCompile(*fresh, nocache, nullptr).entry.ptx.size());
    }
  })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("compile/cache_hit", [&](benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(cache.lookup(tl::cacheKeyFor(*k, jo.ptx)).has_value());
  })->Unit(benchmark::kMillisecond);

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove_all(cacheDir);
  return 0;
}

// Compile time of the PTX path, as the issue asks it to be measured (Google Benchmark):
//   compile/front_end        source text -> block IR (parse, @launch, IR generation)
//   compile/to_ptx           block IR -> block passes, layouts, lowering, LLVM, PTX
//   compile/ptxas            PTX -> cubin with ptxas -v (a separate process; skipped without ptxas)
//   compile/nvjitlink        PTX -> cubin with libnvJitLink in this process (NvJitLink::open, which
//                            finds the library already loaded after the first time, + assemble)
//   compile/nvjitlink_fresh  the same in a child process forked from a parent that never loaded
//                            the library: loading the ~100 MB library included, as in a cold
//                            tl-ptx run (plus the fork)
//   compile/cold_total_ptxas, compile/cold_total_nvjitlink
//                            source -> cubin through jitCompile with the cache bypassed, --assembler
//   compile/cache_hit        cache key + lookup of a stored entry (what a second run pays)
// for kernels/softmax.tl at its default launch (the nvJitLink rows are skipped without the
// library). The module load itself needs a GPU; tl-ptx reports it per run (docs/performance.md),
// and bench/gpu/compile_time_h200.sh measures source -> loaded module both ways on the H200.
//
//   build/bench/bench_compile --benchmark_repetitions=5 --benchmark_out=bench/results/compile.json
#include <benchmark/benchmark.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <iostream>

#include "ptx/Codegen.h"
#include "ptx/JitCache.h"
#include "ptx/NvJitLink.h"
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
  jo.assembler = tl::Assembler::Ptxas;  // (not loading nvJitLink here: see compile/nvjitlink_fresh)
  tl::jitCompile(*k, jo, &cache);       // fills the entry the cache_hit benchmark reads

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
  // The nvJitLink rows. compile/nvjitlink_fresh runs first: its children are forked from a
  // parent that has not loaded the library yet (nor has anything before it: the cache above was
  // filled with the ptxas process), so each child loads it afresh, as a cold tl-ptx does.
  auto inChild = [](const std::function<bool()>& work) {
    pid_t pid = fork();
    if (pid == 0) _exit(work() ? 0 : 1);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  };
  auto assembleFresh = [&ptx] {
    std::unique_ptr<tl::NvJitLink> lib = tl::NvJitLink::open(nullptr);
    return lib && lib->assemble(ptx, "sm_90").ok;
  };
  const bool haveNvJitLink = inChild(assembleFresh);
  if (haveNvJitLink) {
    benchmark::RegisterBenchmark("compile/nvjitlink_fresh", [&](benchmark::State& state) {
      for (auto _ : state)
        if (!inChild(assembleFresh)) state.SkipWithError("the child did not assemble");
    })->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("compile/nvjitlink", [&](benchmark::State& state) {
      for (auto _ : state) {
        std::string cubin;
        benchmark::DoNotOptimize(tl::NvJitLink::open(nullptr)->assemble(ptx, "sm_90", &cubin).registers);
      }
    })->Unit(benchmark::kMillisecond);
  } else {
    std::string noLib;
    tl::NvJitLink::open(&noLib);
    std::cerr << "compile/nvjitlink skipped: " << noLib << "\n";
  }
  for (tl::Assembler a : {tl::Assembler::Ptxas, tl::Assembler::NvJitLink}) {
    if (a == tl::Assembler::NvJitLink && !haveNvJitLink) continue;
    const std::string name = std::string("compile/cold_total_") + tl::assemblerName(a);
    benchmark::RegisterBenchmark(name.c_str(), [&, a](benchmark::State& state) {
      tl::JitOptions nocache = jo;
      nocache.useCache = false;
      nocache.assembler = a;
      for (auto _ : state) {
        auto fresh = tl::compileKernelFile(kKernel, {}, std::cerr);
        benchmark::DoNotOptimize(tl::jitCompile(*fresh, nocache, nullptr).entry.ptx.size());
      }
    })->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("compile/cache_hit", [&](benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(cache.lookup(tl::cacheKeyFor(*k, jo.ptx, false, jo.assembler)).has_value());
  })->Unit(benchmark::kMillisecond);

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove_all(cacheDir);
  return 0;
}

// The warp-level executor (sim/) on every kernel's default launch (Google Benchmark).
//
// Each kernel is compiled to thread IR once, outside the timed loop (front end, block
// pipeline, layouts, lowering); its buffers are filled once. The timed loop runs the whole grid
// on the executor, in two configurations:
//   exec/<kernel>         access recording and race detection on (what the simulator needs)
//   exec_bare/<kernel>    both off (the functional run alone)
// The bar: every default launch simulates in a few seconds on one core.
//
//   build/bench/bench_executor --benchmark_repetitions=3 --benchmark_out=bench/results/executor.json
#include <benchmark/benchmark.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include "runtime/Driver.h"
#include "sim/ThreadExecutor.h"
#include "thread/Pipeline.h"

namespace {

struct Prepared {
  std::unique_ptr<tl::CompiledKernel> kernel;
  tl::ThreadCompilation tc;
  tl::Memory memory;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::vector<std::unique_ptr<Prepared>> all;
  for (const auto& path : tl::defaultKernelPaths()) {
    auto p = std::make_unique<Prepared>();
    p->kernel = tl::compileKernelFile(path, {}, std::cerr);
    if (!p->kernel) return 1;
    p->tc = tl::compileToThreadIR(*p->kernel->ir, p->kernel->launch);
    p->memory = tl::Memory::fromLaunch(p->kernel->launch);
    std::string name = std::filesystem::path(path).stem().string();
    Prepared* raw = p.get();
    for (bool full : {true, false}) {
      tl::ExecOptions eo;
      eo.recordAccesses = full;
      eo.detectRaces = full;
      benchmark::RegisterBenchmark(((full ? "exec/" : "exec_bare/") + name).c_str(),
                                   [raw, eo](benchmark::State& state) {
                                     size_t accesses = 0;
                                     for (auto _ : state)
                                       accesses = tl::runThreadIR(*raw->tc.threadIR, raw->kernel->launch,
                                                                  raw->memory, eo)
                                                      .accesses.size();
                                     state.counters["warp_accesses"] = double(accesses);
                                   })
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.5);
    }
    all.push_back(std::move(p));
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

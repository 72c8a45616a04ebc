// tl-scalar vs tl-block on every kernel's default launch (Google Benchmark).
//
// Each kernel is parsed, launched and compiled once, outside the timed loop; its buffers are
// filled once too. The timed loop runs the whole grid: the scalar reference on the front end's
// IR, the block interpreter on the IR after the block pipeline (what the two tools run).
// Re-running a kernel over the same buffers recomputes the same outputs, so no reset is needed.
//
//   build/bench/bench_interpreters --benchmark_format=json > bench/results/interpreters.json
//   python3 bench/summarize.py bench/results/interpreters.json    # the ratio table
#include <benchmark/benchmark.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include "block/BlockInterpreter.h"
#include "ir/Pass.h"
#include "runtime/Driver.h"
#include "scalar/ScalarInterpreter.h"

namespace {

struct Prepared {
  std::unique_ptr<tl::CompiledKernel> kernel;
  std::unique_ptr<tl::Function> optimized;
  tl::Memory memory;
};

std::vector<std::unique_ptr<Prepared>>& prepared() {
  static std::vector<std::unique_ptr<Prepared>> all;
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (const auto& path : tl::defaultKernelPaths()) {
    auto p = std::make_unique<Prepared>();
    p->kernel = tl::compileKernelFile(path, {}, std::cerr);
    if (!p->kernel) return 1;
    p->optimized = tl::cloneFunction(*p->kernel->ir);
    tl::PassManager pm = tl::blockPipeline();
    pm.run(*p->optimized);
    p->memory = tl::Memory::fromLaunch(p->kernel->launch);
    std::string name = std::filesystem::path(path).stem().string();
    Prepared* raw = p.get();
    benchmark::RegisterBenchmark(("scalar/" + name).c_str(), [raw](benchmark::State& state) {
      for (auto _ : state) tl::runScalar(*raw->kernel->ir, raw->kernel->launch, raw->memory);
    })->Unit(benchmark::kMillisecond)->MinTime(0.5);
    benchmark::RegisterBenchmark(("block/" + name).c_str(), [raw](benchmark::State& state) {
      for (auto _ : state) tl::runBlock(*raw->optimized, raw->kernel->launch, raw->memory);
    })->Unit(benchmark::kMillisecond)->MinTime(0.5);
    prepared().push_back(std::move(p));
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// The results JSON tl-cpu writes for every kernel it runs (out/results-cpu/<kernel>.json): what
// ran, on which CPU (model, ISA, vector width, threads), how fast (median and min over the timed
// runs, GB/s of compulsory traffic, GFLOP/s of a dot), what compiling cost, and the check. The
// layout follows tl-ptx's results (stages/ptx/Results.h: schema_version, tool, kernel, sizes,
// time, throughput, compile_ms, check), so one reader handles both; docs/cpu.md lists the fields.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tl {
class Function;
class Memory;
class SourceFile;
struct LaunchConfig;
struct Specialization;
}  // namespace tl

namespace tl::cpu {

struct CpuOutputCheck {
  std::string name;
  bool pass = false;
  double maxAbsErr = 0, maxRelErr = 0;
  int64_t mismatches = 0;
};

struct CpuResults {
  std::string toolVersion, timestamp;
  std::string kernel, source, sourceSha256;
  std::vector<std::pair<std::string, std::string>> sizes;
  std::array<int64_t, 3> grid{1, 1, 1};
  int64_t programs = 0;  // grid[0] * grid[1] * grid[2]
  std::map<std::string, std::string> dtypes;
  // The CPU.
  std::string cpuModel, isa;
  int vectorBytes = 0;
  bool libmvec = false;
  int threads = 0;
  // Timing (runs = 0: not timed).
  int runs = 0;
  double medianMs = 0, minMs = 0;
  double bytes = 0, gbps = 0, flops = 0, gflops = 0;
  // Compiling.
  double frontEndMs = 0, passesMs = 0, cacheMs = 0, llvmIrMs = 0, optimizeMs = 0, objectMs = 0, jitMs = 0;
  bool cacheHit = false;
  // --unfused (unfusedKernels = 0: not run).
  int unfusedKernels = 0;
  double unfusedMedianMs = 0;
  std::string unfusedCheck;
  // The check.
  std::string check = "skipped";  // PASS, FAIL or skipped
  std::string reference;
  std::vector<CpuOutputCheck> outputs;
};

struct CpuTarget;
struct CpuKernel;

// What a checked run of `kernel` (compiled for `target` from `fn`, block IR after its passes, at
// `launch` with `spec`) on `memory` tells: the tool, the kernel and its source, sizes, grid and
// programs, dtypes, the CPU, the threads the run used, the compile's times, the compulsory bytes
// and the dot FLOPs. The caller adds the front end's and the passes' times, the timing
// (setTiming) and the check. tl-cpu and tl-grade both describe runs with it.
CpuResults describeRun(const Function& fn, const LaunchConfig& launch, const Specialization& spec,
                       const SourceFile& source, const CpuTarget& target, const CpuKernel& kernel, int threads,
                       const Memory& memory);
// runs, median, min, GB/s and GFLOP/s from the timed runs' milliseconds (not empty).
void setTiming(CpuResults& r, const std::vector<double>& ms);

nlohmann::ordered_json resultsToJson(const CpuResults& r);
// Writes DIR/<stem of source>.json atomically; returns the path (throws std::runtime_error).
std::string writeResults(const CpuResults& r, const std::string& dir);
// "Intel(R) Xeon(R) ..." from /proc/cpuinfo ("unknown" elsewhere).
std::string cpuModelName();

}  // namespace tl::cpu

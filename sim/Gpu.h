// GPU descriptions: the numbers the simulator's models read, as data (sim/gpus/*.json), never
// as code. Each file cites where its figures come from in its "sources" list, and says for each
// figure whether it is a vendor figure or a measurement (and whose).
//
//   GpuSpec h200 = loadGpu("h200");          // sim/gpus/h200.json
//   listGpus()                                // {"a100", "h100", "h200", "rtx4090", ...}
//
// The target GPU: the one description the compiling stages check a kernel against (today: the
// shared memory one block may use, stages/thread/SharedMemory.cpp). One per process, like
// runtime/Budget.h's workLimits(): a tool sets it once from its command line (tl-ptx --gpu;
// tl-sim and tl-viz are to set it from theirs), tl-thread keeps the default, h200.
//
//   setTargetGpu(loadGpu("a100"));            // tl-ptx --gpu a100
//   targetGpu().maxSharedPerBlock             // 166912
//
// Expects: a JSON object whose keys are exactly the field names below (camelCase, as spelled in
// the struct), every one present, no other key. Guarantees: a returned GpuSpec passed the checks
// in Gpu.cpp (positive sizes, warps x 32 = threads, carve-outs ascending and ending at
// sharedPerSM, ...); any problem throws std::runtime_error naming the file and the field.
#pragma once

#include <string>
#include <vector>

namespace tl {

struct GpuSpec {
  std::string name;        // "NVIDIA H200 SXM"
  std::string key;         // "h200" (the file name)
  std::string file;        // the file it was read from, as loadGpuFile was given it
  std::string arch;        // "sm_90"
  int computeCapability = 90;  // major * 10 + minor: 90, 89, 86, 80

  // Chip
  int smCount = 0;
  double smClockGHz = 0;         // the clock timing predictions use (sustained boost)
  int warpSchedulersPerSM = 4;   // = SM sub-partitions (SMSPs); registers are split among them

  // Per-SM limits and allocation granularities (as the CUDA occupancy calculator uses them)
  int maxThreadsPerSM = 2048;
  int maxWarpsPerSM = 64;
  int maxBlocksPerSM = 32;
  int maxThreadsPerBlock = 1024;
  int registersPerSM = 65536;
  int maxRegistersPerBlock = 65536;  // registers one block may hold (cudaDeviceProp::regsPerBlock)
  int maxRegistersPerThread = 255;
  int registerAllocUnit = 256;       // registers are allocated per warp in units of this many
  int sharedPerSM = 0;               // bytes of shared memory per SM at the largest carve-out
  int maxSharedPerBlock = 0;         // bytes (opt-in maximum)
  int defaultSharedPerBlock = 49152; // bytes a block may use without opting in (48 KB)
  int sharedAllocUnit = 128;         // bytes
  int reservedSharedPerBlock = 1024; // bytes the system reserves per block (sm_80+)
  std::vector<int> sharedCarveoutsKB;  // the L1/shared split options, KB of shared memory

  // Memory hierarchy
  int l1BytesPerSM = 0;              // unified L1/texture/shared capacity per SM
  int l2Bytes = 0;
  int l1LineBytes = 128, sectorBytes = 32;
  double dramBandwidthGBs = 0;       // what the time model uses: measured where available (see `sources`)
  double dramBandwidthVendorGBs = 0; // the datasheet figure, for comparison
  bool dramBandwidthMeasured = false;  // true when dramBandwidthGBs is a measurement, not the datasheet
  int dramLatencyCycles = 0;
  int l2LatencyCycles = 0;
  int l1LatencyCycles = 0;
  int sharedLatencyCycles = 0;
  double l2BandwidthBytesPerCycle = 0;  // whole chip
  // Tensor cores (mma.sync, ir/MmaLayout.h): the cycles one sub-partition's tensor core is busy
  // per instruction (its throughput), per input dtype, and the latency from issue to the result
  // a dependent mma can use. 0: the GPU has no such instruction (fp8 before sm_89).
  double mmaCyclesF16 = 0;   // m16n8k16 f16 / bf16, f32 accumulation
  double mmaCyclesTf32 = 0;  // m16n8k8 tf32
  double mmaCyclesFp8 = 0;   // m16n8k32 e4m3 / e5m2
  int mmaLatencyCycles = 0;
  // Warpgroup MMAs (wgmma.mma_async m64nNkK, sm_90a): the cycles each sub-partition of the
  // warpgroup is busy per 16 x 8 x K piece of its warp's 16 rows (N/8 pieces; K = 16 for f16 /
  // bf16, 8 for tf32, 32 for fp8: 32 bytes of each row); the latency is mmaLatencyCycles.
  // 0: no wgmma.
  double wgmmaCyclesF16 = 0;
  double wgmmaCyclesTf32 = 0;
  double wgmmaCyclesFp8 = 0;
  // Block launch: the fewest cycles between two blocks starting on one SM (the block
  // scheduler's rate, per SM); 0 when not measured (no limit modelled).
  int blockLaunchIntervalCycles = 0;
  // What one launch adds to a kernel's time as tl-ptx measures it (CUDA events around the
  // launch, queued behind the L2 flush): launch and drain, in microseconds.
  double launchOverheadUs = 2.0;

  std::vector<std::string> sources;  // citations for the figures above
};

// Loads sim/gpus/<key>.json (looks in $TL_GPU_DIR, ./sim/gpus, then the source tree). Throws
// std::runtime_error naming the file and the bad field. `key` must be lower-case letters,
// digits and '_' (it names a file; nothing else is looked up).
GpuSpec loadGpu(const std::string& key);
// The keys of every description found in those folders, sorted, without duplicates.
std::vector<std::string> listGpus();

// Loads one description file by path (its key is the file's stem). Same checks as loadGpu.
GpuSpec loadGpuFile(const std::string& path);
// Parses a description from JSON text; `fileName` is only used in error messages and `key` must
// match the text's "key" field.
GpuSpec parseGpuJson(const std::string& text, const std::string& fileName, const std::string& key);
// The process's target GPU: the one setTargetGpu() gave, else loadGpu(kDefaultTargetGpu), loaded
// on first use (throws like loadGpu when that file is not found). Thread-safe; returns a copy.
inline constexpr const char* kDefaultTargetGpu = "h200";
GpuSpec targetGpu();
void setTargetGpu(const GpuSpec& gpu);
// Back to the default (the next targetGpu() loads kDefaultTargetGpu again).
void resetTargetGpu();

// The description as JSON text (the same fields loadGpu reads), for reports.
std::string gpuToJson(const GpuSpec& spec, int indent = 1);

}  // namespace tl

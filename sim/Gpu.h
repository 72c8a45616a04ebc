// GPU descriptions: the numbers the simulator's models read, as data (sim/gpus/*.json), never
// as code. Each file cites where its figures come from.
//
//   GpuSpec h200 = loadGpu("h200");          // sim/gpus/h200.json
//   listGpus()                                // {"a100", "h100", "h200", "rtx4090", ...}
#pragma once

#include <string>
#include <vector>

namespace tl {

struct GpuSpec {
  std::string name;        // "NVIDIA H200 SXM"
  std::string key;         // "h200" (the file name)
  std::string arch;        // "sm_90"
  int computeCapability = 90;

  // Chip
  int smCount = 0;
  double smClockGHz = 0;         // the clock timing predictions use (sustained boost)
  int warpSchedulersPerSM = 4;

  // Per-SM limits and allocation granularities (as the CUDA occupancy calculator uses them)
  int maxThreadsPerSM = 2048;
  int maxWarpsPerSM = 64;
  int maxBlocksPerSM = 32;
  int maxThreadsPerBlock = 1024;
  int registersPerSM = 65536;
  int maxRegistersPerThread = 255;
  int registerAllocUnit = 256;       // registers are allocated per warp in units of this many
  int sharedPerSM = 0;               // bytes of shared memory per SM at the largest carve-out
  int maxSharedPerBlock = 0;         // bytes (opt-in maximum)
  int sharedAllocUnit = 128;         // bytes
  int reservedSharedPerBlock = 1024; // bytes the system reserves per block (sm_80+)
  std::vector<int> sharedCarveoutsKB;  // the L1/shared split options, KB of shared memory

  // Memory hierarchy
  int l1BytesPerSM = 0;              // unified L1/texture/shared capacity per SM
  int l2Bytes = 0;
  int l1LineBytes = 128, sectorBytes = 32;
  double dramBandwidthGBs = 0;       // measured where available (see `sources`)
  int dramLatencyCycles = 0;
  int l2LatencyCycles = 0;
  int l1LatencyCycles = 0;
  int sharedLatencyCycles = 0;
  double l2BandwidthBytesPerCycle = 0;  // whole chip

  std::vector<std::string> sources;  // citations for the figures above
};

// Loads sim/gpus/<key>.json (looks in $TL_GPU_DIR, ./sim/gpus, then the source tree). Throws
// std::runtime_error naming the file and the bad field.
GpuSpec loadGpu(const std::string& key);
std::vector<std::string> listGpus();

}  // namespace tl

// The CUDA Driver API, loaded at run time: find the GPU, load a kernel's cubin or PTX, copy a
// Memory's buffers to the device, launch, copy the outputs back and time the kernel.
//
// tilelab never links libcuda. CudaRuntime::open() dlopen()s "libcuda.so.1" (or $TL_LIBCUDA)
// and looks up each entry point by its exact versioned name (cuMemAlloc_v2, ...: the names
// cuda.h's macros map the plain names to), so every tool builds and runs on machines without an
// NVIDIA driver; there open() returns nullptr and says why, and tl-ptx prints that the GPU step
// was skipped and where the PTX was written.
//
//   std::string why;
//   auto rt = CudaRuntime::open(&why);               // nullptr + why when there is no driver
//   GpuModule mod = rt->loadModule(ptx, cubin, "softmax_kernel", 128, dynamicSharedBytes);
//   std::vector<KernelArg> args = kernelArgsFor(*fn, launch);
//   DeviceBuffers dev(*rt, args, memory);            // cuMemAlloc + cuMemcpyHtoD per buffer (pointer
//                                                    // tables get device addresses)
//   dev.launch(mod, launch.grid, 128);               // cuLaunchKernel
//   rt->synchronize();  dev.copyOutputsBack(memory); // cuMemcpyDtoH for every output
//   GpuTiming t = timeKernel(*rt, mod, dev, launch.grid, 128, TimingOptions{});
//
// This header does not include cuda.h (only CudaRuntime.cpp does), so its users need no CUDA
// toolkit: handles are cuda.h's opaque struct pointers, device addresses are uint64_t.
//
// Expects: one thread uses a CudaRuntime (the CUDA context is made current on the thread that
// opened it). Guarantees: every Driver API call's result is checked; a failure throws CudaError
// whose message names the call, what it was doing, and the driver's error name and text. Device
// memory, modules and events are freed by destructors.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "frontend/Launch.h"
#include "ir/IR.h"
#include "runtime/Memory.h"

// cuda.h's opaque handle types (CUmodule = CUmod_st*, CUfunction = CUfunc_st*, CUcontext = CUctx_st*).
struct CUmod_st;
struct CUfunc_st;
struct CUctx_st;

namespace tl {

// A failed Driver API call: "cuMemAlloc_v2 (x_ptr, 1 GiB): CUDA_ERROR_OUT_OF_MEMORY: out of memory".
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& message, int code) : std::runtime_error(message), code(code) {}
  int code;  // the CUresult
};

// What the driver says about device 0.
struct DeviceInfo {
  std::string name;            // "NVIDIA H200"
  int ccMajor = 0, ccMinor = 0;
  int smCount = 0;             // streaming multiprocessors
  int64_t l2Bytes = 0;         // L2 cache size
  int clockKHz = 0;            // SM clock (0 when the driver no longer reports it)
  int memClockKHz = 0;         // memory clock
  int busWidthBits = 0;        // memory bus width
  int64_t totalMemBytes = 0;
  int maxThreadsPerSM = 0;
  int maxSharedPerBlockOptin = 0;  // shared memory one block may opt in to (0 when not reported)
  int driverVersion = 0;       // e.g. 13000 for CUDA 13.0

  std::string arch() const { return "sm_" + std::to_string(ccMajor) + std::to_string(ccMinor); }
  int maxWarpsPerSM() const { return maxThreadsPerSM / 32; }
  // Theoretical DRAM bandwidth (double data rate), GB/s; 0 when the clock is unknown.
  double peakGBps() const { return 2.0 * memClockKHz * 1e3 * (busWidthBits / 8.0) / 1e9; }
  // "NVIDIA H200 (sm_90, 132 SMs, L2 60 MiB, driver 13.0)".
  std::string str() const;
};

// What the driver says about a loaded kernel (cuFuncGetAttribute, cuOccupancy...).
struct KernelAttributes {
  int registers = 0;             // CU_FUNC_ATTRIBUTE_NUM_REGS
  int sharedBytes = 0;           // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (static shared memory)
  int dynamicSharedBytes = 0;    // what every launch passes as sharedMemBytes (loadModule's argument)
  int localBytes = 0;            // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES (spills + stack, per thread)
  int maxThreadsPerBlock = 0;    // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  int blocksPerSM = 0;           // cuOccupancyMaxActiveBlocksPerMultiprocessor at the launch's block size
  int warpsPerSM = 0;            // blocksPerSM * warps per block
};

class CudaRuntime;

// A loaded module and its kernel. Move-only; unloads the module when destroyed.
class GpuModule {
 public:
  GpuModule() = default;
  GpuModule(GpuModule&& o) noexcept;
  GpuModule& operator=(GpuModule&& o) noexcept;
  GpuModule(const GpuModule&) = delete;
  GpuModule& operator=(const GpuModule&) = delete;
  ~GpuModule();

  CUfunc_st* function = nullptr;   // the CUfunction
  KernelAttributes attrs;
  bool fromCubin = false;      // loaded from ptxas' cubin (else the driver JIT-compiled the PTX)
  int dynamicSharedBytes = 0;  // passed as cuLaunchKernel's sharedMemBytes at every launch
  std::string loadNote;        // why the cubin was not used, when it was not
  std::string jitLog;          // the JIT's info log (PTX loads)
  double loadMs = 0;           // cuModuleLoadData(Ex) + cuModuleGetFunction + attributes

 private:
  friend class CudaRuntime;
  const CudaRuntime* rt_ = nullptr;
  CUmod_st* module_ = nullptr;
};

// One kernel argument as cuLaunchKernel receives it.
struct KernelArg {
  std::string name;            // the parameter
  bool pointer = false;        // a buffer: passed as the CUdeviceptr of the Memory buffer `name`
  DType dtype = DType::I32;    // scalars: the parameter's dtype (how the value is passed)
  ScalarValue value;           // scalars: the launch's value
};

// The kernel's arguments in parameter order, from its (front-end or thread) IR and the launch.
// Throws std::runtime_error when a scalar parameter has no value in the launch.
std::vector<KernelArg> kernelArgsFor(const Function& fn, const LaunchConfig& launch);

// A scalar as the bytes cuLaunchKernel copies for a parameter of `dtype` (little-endian, in the
// low bytes of a zeroed 8-byte slot: i1 and fp8 -> 1 byte, f16/bf16 -> 2, i32/f32 -> 4, i64 -> 8).
// The value is converted to `dtype` the way tl-scalar converts it.
std::array<uint8_t, 8> packScalar(DType dtype, const ScalarValue& value);

// Device copies of a Memory's buffers plus the argument array for cuLaunchKernel.
class DeviceBuffers {
 public:
  // Allocates one device buffer per Memory buffer (cuMemAlloc) and copies its contents in
  // (outputs too: they start as the launch says); a pointer table (Buffer::pointees, from
  // `pointers(...)` in @launch) gets the device addresses of the buffers it names. A pointer
  // argument is the device buffer of its name.
  DeviceBuffers(const CudaRuntime& rt, const std::vector<KernelArg>& args, const Memory& memory);
  ~DeviceBuffers();
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;

  // Enqueues one launch on the default stream with the module's dynamic shared memory
  // (asynchronous: errors inside the kernel surface at the next synchronize()).
  void launch(const GpuModule& mod, const std::array<int64_t, 3>& grid, int threadsPerBlock) const;
  // Copies every output buffer back into `memory` (synchronous).
  void copyOutputsBack(Memory& memory) const;
  // Bytes the kernel must move at least: every buffer once (inputs read, outputs written).
  uint64_t compulsoryBytes() const { return compulsoryBytes_; }

 private:
  struct Slot {
    std::string name;
    uint64_t ptr = 0;              // the CUdeviceptr
    uint64_t bytes = 0;
    bool output = false;
  };
  const CudaRuntime& rt_;
  std::vector<Slot> slots_;                       // device buffers
  std::vector<std::array<uint8_t, 8>> storage_;   // one 8-byte slot per argument
  mutable std::vector<void*> params_;             // &storage_[i]: cuLaunchKernel's kernelParams
  uint64_t compulsoryBytes_ = 0;
};

struct TimingOptions {
  int warmup = 3;              // untimed launches first (clocks up, instruction cache warm)
  int runs = 100;              // timed launches at most
  double maxSeconds = 0.5;     // stop earlier once this much wall time was spent (0: no limit),
  int minRuns = 10;            //   but not before this many runs
  bool flushL2 = true;         // write 2 x L2 bytes before every timed run so inputs come from DRAM
};

struct GpuTiming {
  int runs = 0;
  double medianMs = 0, minMs = 0, maxMs = 0;
  bool l2Flushed = false;      // false when the flush buffer could not be allocated
};


class CudaRuntime {
 public:
  // Looks a Driver API symbol up by name; nullptr when missing.
  using SymbolLookup = std::function<void*(const char* name)>;

  // dlopen()s $TL_LIBCUDA or "libcuda.so.1", resolves the entry points, initializes the driver,
  // retains device 0's primary context and makes it current. Returns nullptr with *why set
  // ("libcuda.so.1 not found (no NVIDIA driver)", "cuInit: CUDA_ERROR_NO_DEVICE: ...") when
  // there is no usable GPU. Never throws.
  static std::unique_ptr<CudaRuntime> open(std::string* why);
  // The same with another symbol source (tests supply a fake driver this way).
  static std::unique_ptr<CudaRuntime> openWith(const SymbolLookup& lookup, std::string* why);
  ~CudaRuntime();
  CudaRuntime(const CudaRuntime&) = delete;
  CudaRuntime& operator=(const CudaRuntime&) = delete;

  const DeviceInfo& device() const { return device_; }

  // Loads the kernel `kernelName`: from `cubin` when it is not empty (falling back to the PTX
  // when the driver rejects it, e.g. a cubin for another architecture), else from `ptx` through
  // the driver's JIT with its error log in the exception. Fills the attributes and occupancy
  // for blocks of `threadsPerBlock` threads with `dynamicSharedBytes` of dynamic shared memory
  // (ptx/DynamicShared.h; 0 when the PTX declares its shared memory statically). When that is
  // not 0, first raises the kernel's dynamic limit to it (cuFuncSetAttribute
  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, required above 48 KB), after checking it
  // against the device's opt-in limit; every DeviceBuffers::launch of the module passes it.
  GpuModule loadModule(const std::string& ptx, const std::string& cubin, const std::string& kernelName,
                       int threadsPerBlock, int dynamicSharedBytes = 0) const;
  // cuCtxSynchronize: waits for the GPU and reports errors of earlier asynchronous work.
  void synchronize(const char* what) const;

  // The Driver API entry points (typed from cuda.h, so defined in CudaRuntime.cpp).
  struct Api;
  const Api& api() const { return *api_; }

  // Throws CudaError for a failed call (r != CUDA_SUCCESS): "<call> (<what>): CUDA_ERROR_X: text".
  void check(int r, const char* call, const std::string& what) const;
  // "CUDA_ERROR_X: text" for a CUresult.
  std::string errorText(int r) const;

 private:
  CudaRuntime();
  void* lib_ = nullptr;          // the dlopen handle (null with a custom lookup)
  std::unique_ptr<Api> api_;
  int dev_ = 0;                  // the CUdevice
  CUctx_st* ctx_ = nullptr;      // the primary CUcontext
  bool ctxRetained_ = false;
  DeviceInfo device_;
};

// Runs `opts.warmup` untimed launches, then timed ones (CUDA events around the kernel only;
// the L2 flush, when on, is enqueued before the start event) until opts.runs or opts.maxSeconds.
GpuTiming timeKernel(const CudaRuntime& rt, const GpuModule& mod, const DeviceBuffers& bufs,
                     const std::array<int64_t, 3>& grid, int threadsPerBlock, const TimingOptions& opts);
// The same policy around any sequence of launches (`launchAll` enqueues them on the default
// stream; the events bracket the whole sequence): tl-ptx --unfused times its kernels this way.
GpuTiming timeLaunches(const CudaRuntime& rt, const std::function<void()>& launchAll, const TimingOptions& opts);

// The message tools print when open() failed: "GPU step skipped: <why>; PTX written to <path>".
std::string gpuSkippedMessage(const std::string& why, const std::string& ptxPath);

}  // namespace tl

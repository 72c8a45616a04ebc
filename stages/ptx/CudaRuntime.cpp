// The CUDA Driver API runtime (see CudaRuntime.h for the contract).
//
// Every entry point is looked up by the exact symbol libcuda exports. cuda.h maps several plain
// names to versioned ones with macros (#define cuMemAlloc cuMemAlloc_v2); dlsym knows nothing of
// macros, so the table below spells out the versioned names. The original, unversioned symbols
// still exist in libcuda for old binaries but have old signatures (32-bit sizes for cuMemAlloc),
// so calling them through the new types would be wrong.
#include "ptx/CudaRuntime.h"

#include "runtime/Driver.h"  // medianOf

#include <cuda.h>  // declarations and enums only: nothing from libcuda is linked
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace tl {

// The entry points tilelab uses, typed from cuda.h's declarations. decltype of a
// macro-mapped name gives the versioned function's type (cuMemAlloc -> cuMemAlloc_v2).
struct CudaRuntime::Api {
  decltype(&::cuGetErrorName) getErrorName = nullptr;
  decltype(&::cuGetErrorString) getErrorString = nullptr;
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driverGetVersion = nullptr;
  decltype(&::cuDeviceGetCount) deviceGetCount = nullptr;
  decltype(&::cuDeviceGet) deviceGet = nullptr;
  decltype(&::cuDeviceGetName) deviceGetName = nullptr;
  decltype(&::cuDeviceGetAttribute) deviceGetAttribute = nullptr;
  decltype(&::cuDeviceTotalMem) deviceTotalMem = nullptr;              // cuDeviceTotalMem_v2
  decltype(&::cuDevicePrimaryCtxRetain) primaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) primaryCtxRelease = nullptr; // _v2
  decltype(&::cuCtxSetCurrent) ctxSetCurrent = nullptr;
  decltype(&::cuCtxSynchronize) ctxSynchronize = nullptr;
  decltype(&::cuModuleLoadData) moduleLoadData = nullptr;
  decltype(&::cuModuleLoadDataEx) moduleLoadDataEx = nullptr;
  decltype(&::cuModuleUnload) moduleUnload = nullptr;
  decltype(&::cuModuleGetFunction) moduleGetFunction = nullptr;
  decltype(&::cuFuncGetAttribute) funcGetAttribute = nullptr;
  decltype(&::cuFuncSetAttribute) funcSetAttribute = nullptr;          // optional (see openWith)
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor) occupancy = nullptr;
  decltype(&::cuMemAlloc) memAlloc = nullptr;                          // _v2
  decltype(&::cuMemFree) memFree = nullptr;                            // _v2
  decltype(&::cuMemcpyHtoD) memcpyHtoD = nullptr;                      // _v2
  decltype(&::cuMemcpyDtoH) memcpyDtoH = nullptr;                      // _v2
  decltype(&::cuMemsetD8Async) memsetD8Async = nullptr;
  decltype(&::cuLaunchKernel) launchKernel = nullptr;
  decltype(&::cuEventCreate) eventCreate = nullptr;
  decltype(&::cuEventDestroy) eventDestroy = nullptr;                  // _v2
  decltype(&::cuEventRecord) eventRecord = nullptr;
  decltype(&::cuEventSynchronize) eventSynchronize = nullptr;
  decltype(&::cuEventElapsedTime) eventElapsedTime = nullptr;          // _v2, else the original
};

CudaRuntime::CudaRuntime() : api_(std::make_unique<Api>()) {}

// ---------------------------------------------------------------------------------------------
// Small helpers.

static std::string bytesStr(uint64_t b) {
  std::ostringstream os;
  if (b >= (uint64_t(1) << 30)) os << double(b) / double(uint64_t(1) << 30) << " GiB";
  else if (b >= (uint64_t(1) << 20)) os << double(b) / double(uint64_t(1) << 20) << " MiB";
  else if (b >= 1024) os << double(b) / 1024.0 << " KiB";
  else os << b << " B";
  return os.str();
}

std::string DeviceInfo::str() const {
  std::ostringstream os;
  os << name << " (" << arch() << ", " << smCount << " SMs, L2 " << bytesStr(uint64_t(l2Bytes)) << ", driver "
     << driverVersion / 1000 << "." << (driverVersion % 1000) / 10 << ")";
  return os.str();
}

std::string gpuSkippedMessage(const std::string& why, const std::string& ptxPath) {
  return "GPU step skipped: " + why + "; PTX written to " + ptxPath;
}

std::string CudaRuntime::errorText(int code) const {
  CUresult r = CUresult(code);
  const char* name = nullptr;
  const char* text = nullptr;
  if (api_->getErrorName) api_->getErrorName(r, &name);
  if (api_->getErrorString) api_->getErrorString(r, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(int(r));
  if (text) s += std::string(": ") + text;
  return s;
}

void CudaRuntime::check(int r, const char* call, const std::string& what) const {
  if (r == CUDA_SUCCESS) return;
  std::string msg = call;
  if (!what.empty()) msg += " (" + what + ")";
  throw CudaError(msg + ": " + errorText(r), r);
}

// ---------------------------------------------------------------------------------------------
// Opening the driver.

namespace {

// One entry of the symbol table: the exact exported name(s), tried in order, and the slot.
struct Entry {
  const char* names[2];
  void** slot;
};

}  // namespace

std::unique_ptr<CudaRuntime> CudaRuntime::open(std::string* why) {
  const char* env = std::getenv("TL_LIBCUDA");
  std::string path = env && *env ? env : "libcuda.so.1";
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    if (why) {
      const char* err = dlerror();
      *why = env && *env ? "cannot load $TL_LIBCUDA=" + path + (err ? std::string(" (") + err + ")" : "")
                         : "libcuda.so.1 not found (no NVIDIA driver)";
    }
    return nullptr;
  }
  auto rt = openWith([lib](const char* name) { return dlsym(lib, name); }, why);
  if (!rt) {
    dlclose(lib);
    return nullptr;
  }
  rt->lib_ = lib;
  return rt;
}

std::unique_ptr<CudaRuntime> CudaRuntime::openWith(const SymbolLookup& lookup, std::string* why) {
  std::unique_ptr<CudaRuntime> rt(new CudaRuntime());
  Api& a = *rt->api_;
  // reinterpret_cast through void** is how a dlsym'd pointer is stored into a typed slot.
  auto slot = [](auto& fn) { return reinterpret_cast<void**>(&fn); };
  const Entry table[] = {
      {{"cuGetErrorName", nullptr}, slot(a.getErrorName)},
      {{"cuGetErrorString", nullptr}, slot(a.getErrorString)},
      {{"cuInit", nullptr}, slot(a.init)},
      {{"cuDriverGetVersion", nullptr}, slot(a.driverGetVersion)},
      {{"cuDeviceGetCount", nullptr}, slot(a.deviceGetCount)},
      {{"cuDeviceGet", nullptr}, slot(a.deviceGet)},
      {{"cuDeviceGetName", nullptr}, slot(a.deviceGetName)},
      {{"cuDeviceGetAttribute", nullptr}, slot(a.deviceGetAttribute)},
      {{"cuDeviceTotalMem_v2", nullptr}, slot(a.deviceTotalMem)},
      {{"cuDevicePrimaryCtxRetain", nullptr}, slot(a.primaryCtxRetain)},
      {{"cuDevicePrimaryCtxRelease_v2", nullptr}, slot(a.primaryCtxRelease)},
      {{"cuCtxSetCurrent", nullptr}, slot(a.ctxSetCurrent)},
      {{"cuCtxSynchronize", nullptr}, slot(a.ctxSynchronize)},
      {{"cuModuleLoadData", nullptr}, slot(a.moduleLoadData)},
      {{"cuModuleLoadDataEx", nullptr}, slot(a.moduleLoadDataEx)},
      {{"cuModuleUnload", nullptr}, slot(a.moduleUnload)},
      {{"cuModuleGetFunction", nullptr}, slot(a.moduleGetFunction)},
      {{"cuFuncGetAttribute", nullptr}, slot(a.funcGetAttribute)},
      {{"cuOccupancyMaxActiveBlocksPerMultiprocessor", nullptr}, slot(a.occupancy)},
      {{"cuMemAlloc_v2", nullptr}, slot(a.memAlloc)},
      {{"cuMemFree_v2", nullptr}, slot(a.memFree)},
      {{"cuMemcpyHtoD_v2", nullptr}, slot(a.memcpyHtoD)},
      {{"cuMemcpyDtoH_v2", nullptr}, slot(a.memcpyDtoH)},
      {{"cuMemsetD8Async", nullptr}, slot(a.memsetD8Async)},
      {{"cuLaunchKernel", nullptr}, slot(a.launchKernel)},
      {{"cuEventCreate", nullptr}, slot(a.eventCreate)},
      {{"cuEventDestroy_v2", nullptr}, slot(a.eventDestroy)},
      {{"cuEventRecord", nullptr}, slot(a.eventRecord)},
      {{"cuEventSynchronize", nullptr}, slot(a.eventSynchronize)},
      // cuEventElapsedTime_v2 appeared in CUDA 12.8 (same signature); older drivers have only v1.
      {{"cuEventElapsedTime_v2", "cuEventElapsedTime"}, slot(a.eventElapsedTime)},
  };
  for (const Entry& e : table) {
    for (const char* name : e.names)
      if (name && !*e.slot) *e.slot = lookup(name);
    if (!*e.slot) {
      if (why) *why = std::string("the driver library lacks ") + e.names[0] + " (driver too old?)";
      return nullptr;
    }
  }
  // Needed only to launch a kernel with more than 48 KB of shared memory (loadModule says so
  // when it is missing); every driver since CUDA 9.0 has it.
  *slot(a.funcSetAttribute) = lookup("cuFuncSetAttribute");

  // Initialize, pick device 0, make its primary context current.
  auto fail = [&](CUresult r, const char* call) {
    if (why) *why = std::string(call) + ": " + rt->errorText(r);
    return nullptr;
  };
  CUresult r = a.init(0);
  if (r != CUDA_SUCCESS) return fail(r, "cuInit");
  int count = 0;
  if ((r = a.deviceGetCount(&count)) != CUDA_SUCCESS) return fail(r, "cuDeviceGetCount");
  if (count == 0) {
    if (why) *why = "the driver reports no CUDA device";
    return nullptr;
  }
  if ((r = a.deviceGet(&rt->dev_, 0)) != CUDA_SUCCESS) return fail(r, "cuDeviceGet");
  if ((r = a.primaryCtxRetain(&rt->ctx_, rt->dev_)) != CUDA_SUCCESS) return fail(r, "cuDevicePrimaryCtxRetain");
  rt->ctxRetained_ = true;
  if ((r = a.ctxSetCurrent(rt->ctx_)) != CUDA_SUCCESS) return fail(r, "cuCtxSetCurrent");

  // Device properties.
  DeviceInfo& d = rt->device_;
  char name[256] = {};
  if ((r = a.deviceGetName(name, sizeof(name) - 1, rt->dev_)) != CUDA_SUCCESS) return fail(r, "cuDeviceGetName");
  d.name = name;
  struct AttrSlot {
    CUdevice_attribute attr;
    int* out;
  };
  int l2 = 0;
  const AttrSlot attrs[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &d.ccMajor},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &d.ccMinor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &d.smCount},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &l2},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &d.clockKHz},
      {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &d.memClockKHz},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &d.busWidthBits},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &d.maxThreadsPerSM},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &d.maxSharedPerBlockOptin},
  };
  for (const AttrSlot& s : attrs) {
    // Clock attributes are deprecated in recent CUDA versions and may fail: leave them 0.
    if (a.deviceGetAttribute(s.out, s.attr, rt->dev_) != CUDA_SUCCESS) *s.out = 0;
  }
  d.l2Bytes = l2;
  size_t total = 0;
  if (a.deviceTotalMem(&total, rt->dev_) == CUDA_SUCCESS) d.totalMemBytes = int64_t(total);
  a.driverGetVersion(&d.driverVersion);
  return rt;
}

CudaRuntime::~CudaRuntime() {
  if (ctxRetained_ && api_->primaryCtxRelease) api_->primaryCtxRelease(dev_);
  if (lib_) dlclose(lib_);
}

void CudaRuntime::synchronize(const char* what) const { check(api_->ctxSynchronize(), "cuCtxSynchronize", what); }

// ---------------------------------------------------------------------------------------------
// Modules.

GpuModule::GpuModule(GpuModule&& o) noexcept { *this = std::move(o); }

GpuModule& GpuModule::operator=(GpuModule&& o) noexcept {
  if (this == &o) return *this;
  if (rt_ && module_) rt_->api().moduleUnload(module_);
  function = o.function;
  attrs = o.attrs;
  fromCubin = o.fromCubin;
  dynamicSharedBytes = o.dynamicSharedBytes;
  loadNote = std::move(o.loadNote);
  jitLog = std::move(o.jitLog);
  loadMs = o.loadMs;
  rt_ = o.rt_;
  module_ = o.module_;
  o.module_ = nullptr;
  o.function = nullptr;
  return *this;
}

GpuModule::~GpuModule() {
  if (rt_ && module_) rt_->api().moduleUnload(module_);
}

GpuModule CudaRuntime::loadModule(const std::string& ptx, const std::string& cubin, const std::string& kernelName,
                                  int threadsPerBlock, int dynamicSharedBytes) const {
  auto start = std::chrono::steady_clock::now();
  GpuModule m;
  m.rt_ = this;
  if (!cubin.empty()) {
    CUresult r = api_->moduleLoadData(&m.module_, cubin.data());
    if (r == CUDA_SUCCESS) m.fromCubin = true;
    else m.loadNote = "the driver rejected the cubin (" + errorText(r) + "); loading the PTX instead";
  }
  if (!m.module_) {
    // The JIT's logs: caller-owned buffers; on return the size options hold the bytes written.
    std::vector<char> info(16384, 0), error(16384, 0);
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
    void* values[] = {info.data(), reinterpret_cast<void*>(uintptr_t(info.size() - 1)), error.data(),
                      reinterpret_cast<void*>(uintptr_t(error.size() - 1)), reinterpret_cast<void*>(uintptr_t(1))};
    CUresult r = api_->moduleLoadDataEx(&m.module_, ptx.c_str(), 5, opts, values);
    m.jitLog = info.data();
    if (r != CUDA_SUCCESS) {
      m.module_ = nullptr;
      std::string log = error.data();
      std::string msg = "cuModuleLoadDataEx (JIT-compiling the PTX of " + kernelName + "): " + errorText(r);
      if (!m.loadNote.empty()) msg = m.loadNote + "\n" + msg;
      if (!log.empty()) msg += "\nJIT error log:\n" + log;
      if (!m.jitLog.empty()) msg += "\nJIT info log:\n" + m.jitLog;
      throw CudaError(msg, r);
    }
  }
  check(api_->moduleGetFunction(&m.function, m.module_, kernelName.c_str()), "cuModuleGetFunction", kernelName);
  struct FnAttr {
    CUfunction_attribute attr;
    int* out;
    const char* what;
  };
  const FnAttr attrs[] = {
      {CU_FUNC_ATTRIBUTE_NUM_REGS, &m.attrs.registers, "NUM_REGS"},
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &m.attrs.sharedBytes, "SHARED_SIZE_BYTES"},
      {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &m.attrs.localBytes, "LOCAL_SIZE_BYTES"},
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &m.attrs.maxThreadsPerBlock, "MAX_THREADS_PER_BLOCK"},
  };
  for (const FnAttr& a : attrs) check(api_->funcGetAttribute(a.out, a.attr, m.function), "cuFuncGetAttribute", a.what);
  if (threadsPerBlock > m.attrs.maxThreadsPerBlock)
    throw CudaError(kernelName + " needs " + std::to_string(threadsPerBlock) + " threads per block but the driver "
                    "allows at most " + std::to_string(m.attrs.maxThreadsPerBlock) +
                    " for it (too many registers per thread?); try a smaller --num-warps",
                    CUDA_ERROR_INVALID_VALUE);
  if (dynamicSharedBytes < 0) throw std::invalid_argument("loadModule: negative dynamic shared memory");
  if (dynamicSharedBytes > 0) {
    // Dynamic shared memory (ptx/DynamicShared.h): above 48 KB a kernel must opt in to it.
    const std::string bytes = std::to_string(dynamicSharedBytes) + " bytes of dynamic shared memory";
    if (device_.maxSharedPerBlockOptin > 0 && dynamicSharedBytes > device_.maxSharedPerBlockOptin)
      throw CudaError(kernelName + " needs " + bytes + " per block but the " + device_.name + " allows at most " +
                          std::to_string(device_.maxSharedPerBlockOptin) +
                          " (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN); compile with --gpu set to "
                          "this GPU to have the limit checked at the op that asks for it",
                      CUDA_ERROR_INVALID_VALUE);
    if (!api_->funcSetAttribute)
      throw CudaError("the driver library lacks cuFuncSetAttribute, needed for the " + bytes + " of " + kernelName,
                      CUDA_ERROR_NOT_SUPPORTED);
    check(api_->funcSetAttribute(m.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamicSharedBytes),
          "cuFuncSetAttribute", "MAX_DYNAMIC_SHARED_SIZE_BYTES = " + std::to_string(dynamicSharedBytes));
  }
  m.dynamicSharedBytes = dynamicSharedBytes;
  m.attrs.dynamicSharedBytes = dynamicSharedBytes;
  // Blocks per SM with the dynamic memory every launch passes (0 for static shared memory).
  check(api_->occupancy(&m.attrs.blocksPerSM, m.function, threadsPerBlock, size_t(dynamicSharedBytes)),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        std::to_string(threadsPerBlock) + " threads per block, " + std::to_string(dynamicSharedBytes) +
            " bytes of dynamic shared memory");
  m.attrs.warpsPerSM = m.attrs.blocksPerSM * ((threadsPerBlock + 31) / 32);
  m.loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return m;
}

// ---------------------------------------------------------------------------------------------
// Arguments and device buffers.

std::vector<KernelArg> kernelArgsFor(const Function& fn, const LaunchConfig& launch) {
  std::vector<KernelArg> args;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    KernelArg a;
    a.name = fn.params[i].name;
    a.pointer = fn.params[i].kind == Param::Kind::Pointer;
    a.dtype = fn.param(i)->type.dtype;
    if (!a.pointer) {
      auto it = launch.scalars.find(a.name);
      if (it == launch.scalars.end())
        throw std::runtime_error("the launch has no value for scalar parameter '" + a.name + "'");
      a.value = it->second;
    }
    args.push_back(a);
  }
  return args;
}

std::array<uint8_t, 8> packScalar(DType dtype, const ScalarValue& v) {
  std::array<uint8_t, 8> out{};
  auto put = [&](const auto& x) {
    static_assert(sizeof(x) <= 8);
    std::memcpy(out.data(), &x, sizeof(x));  // little-endian host and device
  };
  double f = isFloat(v.dtype) ? v.f : double(v.i);
  int64_t i = isInt(v.dtype) ? v.i : floatToInt(v.f, isInt(dtype) ? dtype : DType::I64);
  switch (dtype) {
    case DType::I1: put(uint8_t(i != 0)); break;
    case DType::I32: put(int32_t(uint32_t(uint64_t(i)))); break;  // wraps like the interpreters
    case DType::I64: put(int64_t(i)); break;
    case DType::F32: put(float(f)); break;
    case DType::F16: put(floatToHalf(float(f))); break;
    case DType::BF16: put(floatToBf16(float(f))); break;
    case DType::F8E4M3:
    case DType::F8E5M2: put(floatToFp8(dtype, float(f))); break;
  }
  return out;
}

DeviceBuffers::DeviceBuffers(const CudaRuntime& rt, const std::vector<KernelArg>& args, const Memory& memory)
    : rt_(rt) {
  storage_.resize(args.size());
  auto slotOf = [&](const std::string& name) -> const Slot* {
    for (const Slot& s : slots_)
      if (s.name == name) return &s;
    return nullptr;
  };
  try {
    // Every buffer of the launch, bound to a parameter or only named by a pointer table.
    for (const Buffer& b : memory.buffers()) {
      Slot s;
      s.name = b.name;
      s.bytes = b.bytes.size();
      s.output = b.output;
      // cuMemAlloc rejects 0 bytes; an empty buffer still gets a valid (unused) address.
      uint64_t allocBytes = std::max<uint64_t>(s.bytes, 256);
      CUdeviceptr ptr = 0;
      rt.check(rt.api().memAlloc(&ptr, allocBytes), "cuMemAlloc_v2", b.name + ", " + bytesStr(allocBytes));
      s.ptr = ptr;
      slots_.push_back(s);
      compulsoryBytes_ += s.bytes;
    }
    // The contents; a pointer table gets the device addresses of the buffers it names (every
    // buffer has one now) in place of Memory's.
    for (size_t i = 0; i < memory.buffers().size(); ++i) {
      const Buffer& b = memory.buffers()[i];
      if (!slots_[i].bytes) continue;
      std::vector<uint8_t> table;
      if (!b.pointees.empty()) {
        if (b.dtype != DType::I64 || b.numel() != static_cast<int64_t>(b.pointees.size()))
          throw std::runtime_error("pointer table '" + b.name + "' is " + b.describe() + ", not " +
                                   std::to_string(b.pointees.size()) + " x i64");
        table.resize(b.bytes.size());
        for (size_t k = 0; k < b.pointees.size(); ++k) {
          const Slot* target = slotOf(b.pointees[k]);
          if (!target) throw std::runtime_error("pointer table '" + b.name + "' names no buffer '" + b.pointees[k] + "'");
          const uint64_t addr = target->ptr;
          std::memcpy(table.data() + 8 * k, &addr, 8);
        }
      }
      rt.check(rt.api().memcpyHtoD(slots_[i].ptr, table.empty() ? b.bytes.data() : table.data(), slots_[i].bytes),
               "cuMemcpyHtoD_v2", b.name);
    }
    for (size_t i = 0; i < args.size(); ++i) {
      const KernelArg& a = args[i];
      if (!a.pointer) {
        storage_[i] = packScalar(a.dtype, a.value);
        continue;
      }
      const Slot* s = slotOf(a.name);
      if (!s) throw std::runtime_error("no buffer for pointer parameter '" + a.name + "'");
      static_assert(sizeof(CUdeviceptr) == 8, "a kernel's pointer parameter is 64 bits");
      const CUdeviceptr ptr = s->ptr;
      std::memcpy(storage_[i].data(), &ptr, sizeof(CUdeviceptr));
    }
  } catch (...) {
    for (const Slot& s : slots_) rt_.api().memFree(s.ptr);
    throw;
  }
  for (auto& st : storage_) params_.push_back(st.data());
}

DeviceBuffers::~DeviceBuffers() {
  for (const Slot& s : slots_) rt_.api().memFree(s.ptr);
}

// Grid limits of every GPU since compute capability 3.0.
static void checkGrid(const std::array<int64_t, 3>& grid, int threadsPerBlock) {
  const int64_t limits[3] = {(int64_t(1) << 31) - 1, 65535, 65535};
  for (int d = 0; d < 3; ++d)
    if (grid[d] < 1 || grid[d] > limits[d])
      throw std::runtime_error("grid dimension " + std::to_string(d) + " is " + std::to_string(grid[d]) +
                               "; a GPU accepts 1.." + std::to_string(limits[d]));
  if (threadsPerBlock < 1 || threadsPerBlock > 1024)
    throw std::runtime_error(std::to_string(threadsPerBlock) + " threads per block; a GPU accepts 1..1024");
}

void DeviceBuffers::launch(const GpuModule& mod, const std::array<int64_t, 3>& grid, int threadsPerBlock) const {
  checkGrid(grid, threadsPerBlock);
  // sharedMemBytes: the module's dynamic shared memory (0 when the PTX declares it statically,
  // ptx/DynamicShared.h); stream 0 is the legacy default stream, which orders this launch after
  // earlier work on the context.
  rt_.check(rt_.api().launchKernel(mod.function, unsigned(grid[0]), unsigned(grid[1]), unsigned(grid[2]),
                                   unsigned(threadsPerBlock), 1, 1, unsigned(mod.dynamicSharedBytes), nullptr,
                                   params_.data(), nullptr),
            "cuLaunchKernel",
            "grid (" + std::to_string(grid[0]) + "," + std::to_string(grid[1]) + "," + std::to_string(grid[2]) +
                "), " + std::to_string(threadsPerBlock) + " threads per block, " +
                std::to_string(mod.dynamicSharedBytes) + " bytes of dynamic shared memory");
}

void DeviceBuffers::copyOutputsBack(Memory& memory) const {
  for (const Slot& s : slots_) {
    if (!s.output || !s.bytes) continue;
    Buffer* b = memory.find(s.name);
    if (!b || b->bytes.size() != s.bytes) throw std::runtime_error("output buffer '" + s.name + "' changed size");
    rt_.check(rt_.api().memcpyDtoH(b->bytes.data(), s.ptr, s.bytes), "cuMemcpyDtoH_v2", s.name);
  }
}

// ---------------------------------------------------------------------------------------------
// Timing.

namespace {

// A CUDA event, destroyed with its owner.
class Event {
 public:
  explicit Event(const CudaRuntime& rt) : rt_(rt) { rt.check(rt.api().eventCreate(&e_, CU_EVENT_DEFAULT), "cuEventCreate", ""); }
  ~Event() { rt_.api().eventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  CUevent get() const { return e_; }

 private:
  const CudaRuntime& rt_;
  CUevent e_ = nullptr;
};

// A device buffer used only to evict the L2 (freed with its owner; ptr 0 when allocation failed).
class FlushBuffer {
 public:
  FlushBuffer(const CudaRuntime& rt, uint64_t bytes) : rt_(rt), bytes_(bytes) {
    if (bytes && rt.api().memAlloc(&ptr_, bytes) != CUDA_SUCCESS) ptr_ = 0;
  }
  ~FlushBuffer() {
    if (ptr_) rt_.api().memFree(ptr_);
  }
  FlushBuffer(const FlushBuffer&) = delete;
  FlushBuffer& operator=(const FlushBuffer&) = delete;
  CUdeviceptr ptr() const { return ptr_; }
  uint64_t bytes() const { return bytes_; }

 private:
  const CudaRuntime& rt_;
  CUdeviceptr ptr_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace

GpuTiming timeKernel(const CudaRuntime& rt, const GpuModule& mod, const DeviceBuffers& bufs,
                     const std::array<int64_t, 3>& grid, int threadsPerBlock, const TimingOptions& opts) {
  return timeLaunches(rt, [&] { bufs.launch(mod, grid, threadsPerBlock); }, opts);
}

GpuTiming timeLaunches(const CudaRuntime& rt, const std::function<void()>& launchAll, const TimingOptions& opts) {
  GpuTiming t;
  for (int i = 0; i < opts.warmup; ++i) launchAll();
  rt.synchronize("after the warm-up launches");

  // Writing twice the L2's size evicts whatever the previous run left there.
  uint64_t flushBytes = opts.flushL2 ? uint64_t(std::max<int64_t>(rt.device().l2Bytes, 1 << 20)) * 2 : 0;
  FlushBuffer flush(rt, flushBytes);
  t.l2Flushed = flush.ptr() != 0;
  Event start(rt), stop(rt);
  std::vector<double> samples;
  auto wallStart = std::chrono::steady_clock::now();
  for (int run = 0; run < opts.runs; ++run) {
    if (opts.maxSeconds > 0 && run >= opts.minRuns) {
      double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
      if (spent >= opts.maxSeconds) break;
    }
    if (flush.ptr())
      rt.check(rt.api().memsetD8Async(flush.ptr(), (unsigned char)(run & 0xff), flush.bytes(), nullptr),
               "cuMemsetD8Async", "L2 flush");
    rt.check(rt.api().eventRecord(start.get(), nullptr), "cuEventRecord", "start");
    launchAll();
    rt.check(rt.api().eventRecord(stop.get(), nullptr), "cuEventRecord", "stop");
    rt.check(rt.api().eventSynchronize(stop.get()), "cuEventSynchronize", "timed run " + std::to_string(run));
    float ms = 0;
    rt.check(rt.api().eventElapsedTime(&ms, start.get(), stop.get()), "cuEventElapsedTime", "");
    samples.push_back(ms);
  }
  t.runs = int(samples.size());
  if (!samples.empty()) {
    t.minMs = *std::min_element(samples.begin(), samples.end());
    t.maxMs = *std::max_element(samples.begin(), samples.end());
    t.medianMs = medianOf(samples);
  }
  return t;
}

}  // namespace tl

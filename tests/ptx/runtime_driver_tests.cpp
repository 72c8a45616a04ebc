// The CUDA Driver API runtime (stages/ptx/CudaRuntime.h) without a GPU: opening fails cleanly
// when there is no libcuda, and the whole flow — symbol names, context, module load with the
// cubin -> PTX fallback and the JIT log, argument packing, device buffers, launch, copy back,
// event timing with L2 flushes, error messages, freeing everything — runs against a fake driver
// written below with cuda.h's exact signatures. The fake "device" runs vector_add on the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ptx/CudaRuntime.h"
#include "runtime/Driver.h"

using namespace tl;

TEST(CudaRuntimeOpen, MissingLibraryIsACleanSkip) {
  const char* old = std::getenv("TL_LIBCUDA");
  std::string saved = old ? old : "";
  setenv("TL_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  std::string why;
  auto rt = CudaRuntime::open(&why);
  EXPECT_EQ(rt, nullptr);
  EXPECT_NE(why.find("/nonexistent/libcuda.so.1"), std::string::npos) << why;
  if (old) setenv("TL_LIBCUDA", saved.c_str(), 1);
  else unsetenv("TL_LIBCUDA");
}

TEST(CudaRuntimeOpen, DefaultOpenNeverCrashes) {
  if (std::getenv("TL_LIBCUDA")) GTEST_SKIP() << "TL_LIBCUDA is set";
  std::string why;
  auto rt = CudaRuntime::open(&why);
  if (rt) {
    EXPECT_FALSE(rt->device().name.empty());  // a machine with a driver and a GPU
  } else {
    EXPECT_FALSE(why.empty());
  }
}

TEST(CudaRuntimeOpen, MissingSymbolsAreReported) {
  std::string why;
  auto rt = CudaRuntime::openWith([](const char*) { return nullptr; }, &why);
  EXPECT_EQ(rt, nullptr);
  EXPECT_NE(why.find("lacks cuGetErrorName"), std::string::npos) << why;
}

TEST(CudaRuntimeHelpers, SkippedMessage) {
  EXPECT_EQ(gpuSkippedMessage("libcuda.so.1 not found (no NVIDIA driver)", "out/ptx/softmax.ptx"),
            "GPU step skipped: libcuda.so.1 not found (no NVIDIA driver); PTX written to out/ptx/softmax.ptx");
}

TEST(CudaRuntimeHelpers, Median) {
  EXPECT_EQ(medianOf({}), 0);
  EXPECT_EQ(medianOf({3, 1, 2}), 2);
  EXPECT_EQ(medianOf({4, 1, 3, 2}), 2.5);
}

TEST(CudaRuntimeHelpers, PackScalar) {
  auto i32 = [](const std::array<uint8_t, 8>& b) {
    int32_t v;
    std::memcpy(&v, b.data(), 4);
    return v;
  };
  ScalarValue neg{DType::I32, -5, 0};
  auto b = packScalar(DType::I32, neg);
  EXPECT_EQ(i32(b), -5);
  EXPECT_EQ(b[4], 0);  // the rest of the slot stays zero
  ScalarValue big{DType::I64, (int64_t(1) << 40) + 3, 0};
  b = packScalar(DType::I64, big);
  int64_t v64;
  std::memcpy(&v64, b.data(), 8);
  EXPECT_EQ(v64, (int64_t(1) << 40) + 3);
  ScalarValue f{DType::F32, 0, 1.5};
  b = packScalar(DType::F32, f);
  uint32_t bits;
  std::memcpy(&bits, b.data(), 4);
  EXPECT_EQ(bits, 0x3fc00000u);
  ScalarValue one{DType::F32, 0, 1.0};
  b = packScalar(DType::F16, one);
  EXPECT_EQ(b[0] | b[1] << 8, 0x3c00);
  b = packScalar(DType::BF16, one);
  EXPECT_EQ(b[0] | b[1] << 8, 0x3f80);
  b = packScalar(DType::I1, ScalarValue{DType::I32, 7, 0});
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(i32(packScalar(DType::I32, ScalarValue{DType::F32, 0, 2.9})), 2);  // truncates like tl-scalar
}

#if __has_include(<cuda.h>)
#include <cuda.h>

namespace {

// ---------------------------------------------------------------------------------------------
// The fake driver: a host-memory "device" that runs vector_add(x, y, out, N).

struct FakeDriver {
  std::map<CUdeviceptr, std::vector<uint8_t>> mem;
  CUdeviceptr next = 0x7f0000000000;
  int allocs = 0, failAllocNumber = 0;  // the n-th cuMemAlloc fails with out of memory (0: never)
  int retained = 0, released = 0, modulesLoaded = 0, modulesUnloaded = 0, eventsCreated = 0, eventsDestroyed = 0;
  int launches = 0, memsets = 0;
  unsigned lastGrid[3] = {}, lastBlock[3] = {};
  bool rejectCubin = false, rejectPtx = false;
  bool loadedFromEx = false;
  int maxThreads = 1024;
  float clockMs = 0;
  std::map<CUevent, float> eventTime;
  std::vector<float> durations = {0.3f, 0.1f, 0.2f};  // launch i takes durations[i % 3] ms
  std::set<std::string> looked;                      // symbol names requested
};
FakeDriver* fake = nullptr;

std::vector<uint8_t>* findAlloc(CUdeviceptr p, size_t n) {
  auto it = fake->mem.find(p);
  if (it == fake->mem.end() || n > it->second.size()) return nullptr;
  return &it->second;
}

CUresult fakeGetErrorName(CUresult r, const char** s) {
  switch (r) {
    case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_NO_BINARY_FOR_GPU: *s = "CUDA_ERROR_NO_BINARY_FOR_GPU"; break;
    case CUDA_ERROR_INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; break;
    case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
    default: *s = "CUDA_ERROR_INVALID_VALUE"; return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult fakeGetErrorString(CUresult r, const char** s) {
  *s = r == CUDA_ERROR_OUT_OF_MEMORY ? "out of memory" : "fake error text";
  return CUDA_SUCCESS;
}
CUresult fakeInit(unsigned) { return CUDA_SUCCESS; }
CUresult fakeDriverGetVersion(int* v) { return *v = 13000, CUDA_SUCCESS; }
CUresult fakeDeviceGetCount(int* n) { return *n = 1, CUDA_SUCCESS; }
CUresult fakeDeviceGet(CUdevice* d, int ordinal) { return *d = ordinal, CUDA_SUCCESS; }
CUresult fakeDeviceGetName(char* name, int len, CUdevice) {
  std::snprintf(name, size_t(len), "Fake H200");
  return CUDA_SUCCESS;
}
CUresult fakeDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 1 << 20; break;  // small, so the flush buffer is too
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 6144; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return CUDA_ERROR_INVALID_VALUE;  // deprecated: may fail
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult fakeDeviceTotalMem(size_t* b, CUdevice) { return *b = size_t(141) << 30, CUDA_SUCCESS; }
CUresult fakeRetain(CUcontext* c, CUdevice) {
  ++fake->retained;
  *c = reinterpret_cast<CUcontext>(fake);
  return CUDA_SUCCESS;
}
CUresult fakeRelease(CUdevice) { return ++fake->released, CUDA_SUCCESS; }
CUresult fakeSetCurrent(CUcontext c) {
  return c == reinterpret_cast<CUcontext>(fake) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult fakeSynchronize() { return CUDA_SUCCESS; }
CUmodule theModule() { return reinterpret_cast<CUmodule>(&fake->modulesLoaded); }
CUfunction theFunction() { return reinterpret_cast<CUfunction>(&fake->launches); }
CUresult fakeLoadData(CUmodule* m, const void*) {
  if (fake->rejectCubin) return CUDA_ERROR_NO_BINARY_FOR_GPU;
  ++fake->modulesLoaded;
  *m = theModule();
  return CUDA_SUCCESS;
}
CUresult fakeLoadDataEx(CUmodule* m, const void* image, unsigned n, CUjit_option* opts, void** values) {
  char* info = nullptr;
  char* error = nullptr;
  size_t infoSize = 0, errorSize = 0;
  for (unsigned i = 0; i < n; ++i) {
    if (opts[i] == CU_JIT_INFO_LOG_BUFFER) info = static_cast<char*>(values[i]);
    if (opts[i] == CU_JIT_ERROR_LOG_BUFFER) error = static_cast<char*>(values[i]);
    if (opts[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES) infoSize = reinterpret_cast<uintptr_t>(values[i]);
    if (opts[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) errorSize = reinterpret_cast<uintptr_t>(values[i]);
  }
  if (!info || !error || infoSize < 64 || errorSize < 64) return CUDA_ERROR_INVALID_VALUE;
  if (std::strstr(static_cast<const char*>(image), ".entry") == nullptr) return CUDA_ERROR_INVALID_IMAGE;
  if (fake->rejectPtx) {
    std::snprintf(error, errorSize, "ptxas fatal   : syntax error at line 3");
    return CUDA_ERROR_INVALID_PTX;
  }
  std::snprintf(info, infoSize, "info    : 0 bytes gmem");
  ++fake->modulesLoaded;
  fake->loadedFromEx = true;
  *m = theModule();
  return CUDA_SUCCESS;
}
CUresult fakeUnload(CUmodule m) { return m == theModule() ? (++fake->modulesUnloaded, CUDA_SUCCESS) : CUDA_ERROR_INVALID_VALUE; }
CUresult fakeGetFunction(CUfunction* f, CUmodule, const char* name) {
  if (std::string(name) != "vector_add") return CUDA_ERROR_NOT_FOUND;
  *f = theFunction();
  return CUDA_SUCCESS;
}
CUresult fakeFuncGetAttribute(int* v, CUfunction_attribute a, CUfunction) {
  switch (a) {
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = 16; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = 0; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *v = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = fake->maxThreads; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult fakeOccupancy(int* n, CUfunction, int blockSize, size_t) {
  *n = std::min(32, 2048 / blockSize);
  return CUDA_SUCCESS;
}
CUresult fakeMemAlloc(CUdeviceptr* p, size_t bytes) {
  if (++fake->allocs == fake->failAllocNumber) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = fake->next;
  fake->mem[*p].assign(bytes, 0xcd);
  fake->next += (bytes + 255) / 256 * 256 + 256;
  return CUDA_SUCCESS;
}
CUresult fakeMemFree(CUdeviceptr p) { return fake->mem.erase(p) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
CUresult fakeHtoD(CUdeviceptr dst, const void* src, size_t n) {
  auto* a = findAlloc(dst, n);
  if (!a) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(a->data(), src, n);
  return CUDA_SUCCESS;
}
CUresult fakeDtoH(void* dst, CUdeviceptr src, size_t n) {
  auto* a = findAlloc(src, n);
  if (!a) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(dst, a->data(), n);
  return CUDA_SUCCESS;
}
CUresult fakeMemsetAsync(CUdeviceptr p, unsigned char v, size_t n, CUstream) {
  auto* a = findAlloc(p, n);
  if (!a) return CUDA_ERROR_INVALID_VALUE;
  std::memset(a->data(), v, n);
  ++fake->memsets;
  return CUDA_SUCCESS;
}
// vector_add(x_ptr, y_ptr, out_ptr, N): out[i] = x[i] + y[i] for i < min(N, threads launched * 8).
CUresult fakeLaunch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                    unsigned smem, CUstream, void** params, void** extra) {
  if (f != theFunction() || !params || extra || smem != 0) return CUDA_ERROR_INVALID_VALUE;
  CUdeviceptr x, y, out;
  int32_t n;
  std::memcpy(&x, params[0], 8);
  std::memcpy(&y, params[1], 8);
  std::memcpy(&out, params[2], 8);
  std::memcpy(&n, params[3], 4);
  auto *xa = findAlloc(x, size_t(n) * 4), *ya = findAlloc(y, size_t(n) * 4), *oa = findAlloc(out, size_t(n) * 4);
  if (!xa || !ya || !oa) return CUDA_ERROR_INVALID_VALUE;
  for (int32_t i = 0; i < n; ++i) {
    float a, b;
    std::memcpy(&a, xa->data() + 4 * i, 4);
    std::memcpy(&b, ya->data() + 4 * i, 4);
    float c = a + b;
    std::memcpy(oa->data() + 4 * i, &c, 4);
  }
  fake->clockMs += fake->durations[size_t(fake->launches) % fake->durations.size()];
  ++fake->launches;
  unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  std::memcpy(fake->lastGrid, g, sizeof(g));
  std::memcpy(fake->lastBlock, b, sizeof(b));
  return CUDA_SUCCESS;
}
CUresult fakeEventCreate(CUevent* e, unsigned) {
  ++fake->eventsCreated;
  *e = reinterpret_cast<CUevent>(new char);
  return CUDA_SUCCESS;
}
CUresult fakeEventDestroy(CUevent e) {
  ++fake->eventsDestroyed;
  delete reinterpret_cast<char*>(e);
  return CUDA_SUCCESS;
}
CUresult fakeEventRecord(CUevent e, CUstream) { return fake->eventTime[e] = fake->clockMs, CUDA_SUCCESS; }
CUresult fakeEventSynchronize(CUevent e) { return fake->eventTime.count(e) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
CUresult fakeElapsed(float* ms, CUevent a, CUevent b) {
  *ms = fake->eventTime.at(b) - fake->eventTime.at(a);
  return CUDA_SUCCESS;
}

// The symbol table of the fake libcuda, by exported name.
std::map<std::string, void*> fakeSymbols(bool withElapsedV2 = true) {
  std::map<std::string, void*> s = {
      {"cuGetErrorName", (void*)&fakeGetErrorName},
      {"cuGetErrorString", (void*)&fakeGetErrorString},
      {"cuInit", (void*)&fakeInit},
      {"cuDriverGetVersion", (void*)&fakeDriverGetVersion},
      {"cuDeviceGetCount", (void*)&fakeDeviceGetCount},
      {"cuDeviceGet", (void*)&fakeDeviceGet},
      {"cuDeviceGetName", (void*)&fakeDeviceGetName},
      {"cuDeviceGetAttribute", (void*)&fakeDeviceGetAttribute},
      {"cuDeviceTotalMem_v2", (void*)&fakeDeviceTotalMem},
      {"cuDevicePrimaryCtxRetain", (void*)&fakeRetain},
      {"cuDevicePrimaryCtxRelease_v2", (void*)&fakeRelease},
      {"cuCtxSetCurrent", (void*)&fakeSetCurrent},
      {"cuCtxSynchronize", (void*)&fakeSynchronize},
      {"cuModuleLoadData", (void*)&fakeLoadData},
      {"cuModuleLoadDataEx", (void*)&fakeLoadDataEx},
      {"cuModuleUnload", (void*)&fakeUnload},
      {"cuModuleGetFunction", (void*)&fakeGetFunction},
      {"cuFuncGetAttribute", (void*)&fakeFuncGetAttribute},
      {"cuOccupancyMaxActiveBlocksPerMultiprocessor", (void*)&fakeOccupancy},
      {"cuMemAlloc_v2", (void*)&fakeMemAlloc},
      {"cuMemFree_v2", (void*)&fakeMemFree},
      {"cuMemcpyHtoD_v2", (void*)&fakeHtoD},
      {"cuMemcpyDtoH_v2", (void*)&fakeDtoH},
      {"cuMemsetD8Async", (void*)&fakeMemsetAsync},
      {"cuLaunchKernel", (void*)&fakeLaunch},
      {"cuEventCreate", (void*)&fakeEventCreate},
      {"cuEventDestroy_v2", (void*)&fakeEventDestroy},
      {"cuEventRecord", (void*)&fakeEventRecord},
      {"cuEventSynchronize", (void*)&fakeEventSynchronize},
      {"cuEventElapsedTime", (void*)&fakeElapsed},
  };
  if (withElapsedV2) s["cuEventElapsedTime_v2"] = (void*)&fakeElapsed;
  return s;
}

class FakeCuda : public ::testing::Test {
 protected:
  void SetUp() override { fake = &driver; }
  void TearDown() override { fake = nullptr; }

  std::unique_ptr<CudaRuntime> open(bool withElapsedV2 = true) {
    auto symbols = fakeSymbols(withElapsedV2);
    std::string why;
    auto rt = CudaRuntime::openWith(
        [&](const char* name) -> void* {
          driver.looked.insert(name);
          auto it = symbols.find(name);
          return it == symbols.end() ? nullptr : it->second;
        },
        &why);
    EXPECT_TRUE(rt) << why;
    return rt;
  }

  std::unique_ptr<CompiledKernel> vectorAdd() {
    std::ostringstream err;
    auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/vector_add.tl", {}, err);
    EXPECT_TRUE(k) << err.str();
    return k;
  }

  FakeDriver driver;
  const std::string ptx = "//\n.version 8.5\n.target sm_90\n.visible .entry vector_add(\n)\n{\n ret;\n}\n";
};

}  // namespace

TEST_F(FakeCuda, OpensDeviceZeroWithVersionedSymbols) {
  auto rt = open();
  ASSERT_TRUE(rt);
  const DeviceInfo& d = rt->device();
  EXPECT_EQ(d.name, "Fake H200");
  EXPECT_EQ(d.arch(), "sm_90");
  EXPECT_EQ(d.smCount, 132);
  EXPECT_EQ(d.l2Bytes, 1 << 20);
  EXPECT_EQ(d.clockKHz, 0);  // the deprecated attribute failed: left 0, not an error
  EXPECT_EQ(d.maxWarpsPerSM(), 64);
  EXPECT_NEAR(d.peakGBps(), 4022.8, 0.1);
  EXPECT_NE(d.str().find("Fake H200 (sm_90, 132 SMs, L2 1 MiB, driver 13.0)"), std::string::npos) << d.str();
  EXPECT_EQ(driver.retained, 1);
  // The versioned names cuda.h maps the plain ones to; never the old 32-bit entry points.
  for (const char* name : {"cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2",
                           "cuDevicePrimaryCtxRelease_v2", "cuEventDestroy_v2", "cuDeviceTotalMem_v2",
                           "cuEventElapsedTime_v2"})
    EXPECT_TRUE(driver.looked.count(name)) << name;
  for (const char* name : {"cuMemAlloc", "cuMemFree", "cuMemcpyHtoD", "cuMemcpyDtoH", "cuDevicePrimaryCtxRelease"})
    EXPECT_FALSE(driver.looked.count(name)) << name;
  rt.reset();
  EXPECT_EQ(driver.released, 1);
}

TEST_F(FakeCuda, OlderDriverWithoutElapsedTimeV2) {
  auto rt = open(/*withElapsedV2=*/false);
  EXPECT_TRUE(rt);
  EXPECT_TRUE(driver.looked.count("cuEventElapsedTime"));
}

TEST_F(FakeCuda, RunsVectorAddAndCopiesTheOutputBack) {
  auto rt = open();
  auto k = vectorAdd();
  ASSERT_TRUE(rt && k);
  {
    GpuModule mod = rt->loadModule(ptx, "cubin bytes", "vector_add", 128);
    EXPECT_TRUE(mod.fromCubin);
    EXPECT_EQ(mod.attrs.registers, 16);
    EXPECT_EQ(mod.attrs.maxThreadsPerBlock, 1024);
    EXPECT_EQ(mod.attrs.blocksPerSM, 16);
    EXPECT_EQ(mod.attrs.warpsPerSM, 64);

    std::vector<KernelArg> args = kernelArgsFor(*k->ir, k->launch);
    ASSERT_EQ(args.size(), 4u);
    EXPECT_TRUE(args[0].pointer && args[1].pointer && args[2].pointer);
    EXPECT_EQ(args[2].name, "out_ptr");
    EXPECT_FALSE(args[3].pointer);
    EXPECT_EQ(args[3].dtype, DType::I32);
    EXPECT_EQ(args[3].value.i, 98432);

    Memory memory = Memory::fromLaunch(k->launch);
    DeviceBuffers bufs(*rt, args, memory);
    EXPECT_EQ(driver.mem.size(), 3u);
    EXPECT_EQ(bufs.compulsoryBytes(), 3u * 98432 * 4);
    bufs.launch(mod, k->launch.grid, 128);
    EXPECT_EQ(driver.lastGrid[0], 97u);  // cdiv(98432, 1024)
    EXPECT_EQ(driver.lastBlock[0], 128u);
    rt->synchronize("test");
    bufs.copyOutputsBack(memory);
    const Buffer* x = memory.find("x_ptr");
    const Buffer* y = memory.find("y_ptr");
    const Buffer* out = memory.find("out_ptr");
    for (int64_t i = 0; i < out->numel(); i += 997)
      ASSERT_EQ(out->getF(i), double(float(x->getF(i)) + float(y->getF(i)))) << i;
    EXPECT_NE(out->getF(5), 0.0);
  }
  EXPECT_TRUE(driver.mem.empty());  // every device buffer freed
  EXPECT_EQ(driver.modulesUnloaded, driver.modulesLoaded);
}

TEST_F(FakeCuda, TimesWithEventsAndL2Flushes) {
  auto rt = open();
  auto k = vectorAdd();
  ASSERT_TRUE(rt && k);
  GpuModule mod = rt->loadModule(ptx, "", "vector_add", 128);
  Memory memory = Memory::fromLaunch(k->launch);
  DeviceBuffers bufs(*rt, kernelArgsFor(*k->ir, k->launch), memory);
  TimingOptions opts;
  opts.warmup = 2;
  opts.runs = 5;
  opts.maxSeconds = 0;
  GpuTiming t = timeKernel(*rt, mod, bufs, k->launch.grid, 128, opts);
  // Launches 0-1 warm up; 2..6 are timed: 0.2, 0.3, 0.1, 0.2, 0.3 ms.
  EXPECT_EQ(driver.launches, 7);
  EXPECT_EQ(t.runs, 5);
  EXPECT_NEAR(t.medianMs, 0.2, 1e-6);
  EXPECT_NEAR(t.minMs, 0.1, 1e-6);
  EXPECT_NEAR(t.maxMs, 0.3, 1e-6);
  EXPECT_TRUE(t.l2Flushed);
  EXPECT_EQ(driver.memsets, 5);  // one flush before every timed run, none before warm-ups
  EXPECT_EQ(driver.eventsCreated, driver.eventsDestroyed);
  EXPECT_EQ(driver.mem.size(), 3u);  // the flush buffer is gone again

  // Without a flush, and with a time budget that ends after the minimum runs.
  opts.flushL2 = false;
  opts.runs = 1000;
  opts.maxSeconds = 1e-9;
  opts.minRuns = 4;
  t = timeKernel(*rt, mod, bufs, k->launch.grid, 128, opts);
  EXPECT_EQ(t.runs, 4);
  EXPECT_FALSE(t.l2Flushed);
  EXPECT_EQ(driver.memsets, 5);
}

TEST_F(FakeCuda, CubinRejectedFallsBackToPtx) {
  auto rt = open();
  driver.rejectCubin = true;
  GpuModule mod = rt->loadModule(ptx, "cubin for another GPU", "vector_add", 128);
  EXPECT_FALSE(mod.fromCubin);
  EXPECT_TRUE(driver.loadedFromEx);
  EXPECT_NE(mod.loadNote.find("CUDA_ERROR_NO_BINARY_FOR_GPU"), std::string::npos) << mod.loadNote;
  EXPECT_NE(mod.jitLog.find("0 bytes gmem"), std::string::npos) << mod.jitLog;
}

TEST_F(FakeCuda, PtxRejectedShowsTheJitLog) {
  auto rt = open();
  driver.rejectPtx = true;
  try {
    rt->loadModule(ptx, "", "vector_add", 128);
    FAIL() << "expected a CudaError";
  } catch (const CudaError& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.code, CUDA_ERROR_INVALID_PTX);
    EXPECT_NE(msg.find("cuModuleLoadDataEx"), std::string::npos) << msg;
    EXPECT_NE(msg.find("CUDA_ERROR_INVALID_PTX"), std::string::npos) << msg;
    EXPECT_NE(msg.find("JIT error log:\nptxas fatal   : syntax error at line 3"), std::string::npos) << msg;
  }
}

TEST_F(FakeCuda, ErrorsNameTheCallAndFreeWhatWasAllocated) {
  auto rt = open();
  auto k = vectorAdd();
  ASSERT_TRUE(rt && k);
  try {
    rt->loadModule(ptx, "cubin", "no_such_kernel", 128);
    FAIL() << "expected a CudaError";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("cuModuleGetFunction (no_such_kernel): CUDA_ERROR_NOT_FOUND"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(driver.modulesUnloaded, driver.modulesLoaded);  // the module of the failed load is unloaded

  driver.maxThreads = 256;
  try {
    rt->loadModule(ptx, "cubin", "vector_add", 512);
    FAIL() << "expected a CudaError";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("--num-warps"), std::string::npos) << e.what();
  }
  driver.maxThreads = 1024;

  Memory memory = Memory::fromLaunch(k->launch);
  driver.allocs = 0;
  driver.failAllocNumber = 2;  // y_ptr's allocation fails
  try {
    DeviceBuffers bufs(*rt, kernelArgsFor(*k->ir, k->launch), memory);
    FAIL() << "expected a CudaError";
  } catch (const CudaError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("cuMemAlloc_v2 (y_ptr, 384.5 KiB): CUDA_ERROR_OUT_OF_MEMORY: out of memory"), std::string::npos)
        << msg;
  }
  EXPECT_TRUE(driver.mem.empty());  // x_ptr's buffer was freed again
  driver.failAllocNumber = 0;

  GpuModule mod = rt->loadModule(ptx, "cubin", "vector_add", 128);
  DeviceBuffers bufs(*rt, kernelArgsFor(*k->ir, k->launch), memory);
  EXPECT_THROW(bufs.launch(mod, {1, 70000, 1}, 128), std::runtime_error);  // grid y over 65535
  EXPECT_THROW(bufs.launch(mod, {0, 1, 1}, 128), std::runtime_error);
  EXPECT_THROW(bufs.launch(mod, {1, 1, 1}, 2048), std::runtime_error);
  EXPECT_EQ(driver.launches, 0);
}

TEST_F(FakeCuda, ScalarWithoutValueIsAnError) {
  auto k = vectorAdd();
  ASSERT_TRUE(k);
  LaunchConfig launch = k->launch;
  launch.scalars.erase("N");
  EXPECT_THROW(kernelArgsFor(*k->ir, launch), std::runtime_error);
}

// pointers(...) tables: every launch buffer gets a device buffer (those only a table names
// too), a table holds the DEVICE addresses of the buffers it names (the host copy keeps
// Memory's), and outputs no parameter binds come back.
TEST_F(FakeCuda, PointerTablesHoldDeviceAddresses) {
  auto rt = open();
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/tests/thread/kernels/ptr_table.tl", {}, err);
  ASSERT_TRUE(rt && k) << err.str();
  Memory memory = Memory::fromLaunch(k->launch);
  const std::vector<uint8_t> hostTable = memory.find("srcs")->bytes;
  DeviceBuffers bufs(*rt, kernelArgsFor(*k->ir, k->launch), memory);
  ASSERT_EQ(driver.mem.size(), memory.buffers().size());  // X0..Y2 too, not only the parameters'
  // The fake device allocates upwards: its k-th buffer is Memory's k-th.
  std::map<std::string, CUdeviceptr> dev;
  size_t i = 0;
  for (const auto& [ptr, bytes] : driver.mem) dev[memory.buffers()[i++].name] = ptr;
  for (const char* table : {"srcs", "dsts"}) {
    const Buffer& host = *memory.find(table);
    const std::vector<uint8_t>& onDevice = driver.mem.at(dev.at(table));
    for (size_t g = 0; g < host.pointees.size(); ++g) {
      uint64_t addr = 0;
      std::memcpy(&addr, onDevice.data() + 8 * g, 8);
      EXPECT_EQ(addr, dev.at(host.pointees[g])) << table << "[" << g << "]";
      EXPECT_EQ(uint64_t(host.getI(int64_t(g))), memory.find(host.pointees[g])->base) << "the host copy keeps Memory's";
    }
  }
  EXPECT_EQ(memory.find("srcs")->bytes, hostTable);
  EXPECT_EQ(driver.mem.at(dev.at("X1")).size() >= memory.find("X1")->bytes.size(), true);
  EXPECT_TRUE(std::equal(memory.find("X1")->bytes.begin(), memory.find("X1")->bytes.end(), driver.mem.at(dev.at("X1")).begin()));
  // Y1 is an output only dsts names: what the device holds comes back.
  std::fill(driver.mem.at(dev.at("Y1")).begin(), driver.mem.at(dev.at("Y1")).end(), uint8_t(0x3f));
  bufs.copyOutputsBack(memory);
  EXPECT_EQ(memory.find("Y1")->bytes[5], 0x3f);
  EXPECT_EQ(bufs.compulsoryBytes(), [&] {
    uint64_t n = 0;
    for (const Buffer& b : memory.buffers()) n += b.bytes.size();
    return n;
  }());
}

#else
TEST(FakeCuda, NeedsCudaH) { GTEST_SKIP() << "cuda.h is not on the include path: the fake-driver tests need its types"; }
#endif

// Static or dynamic shared memory: the one rule the PTX stage follows for a block's shared
// memory (Function::sharedBytes of the thread IR).
//
//   up to 48 KB   a static array, `.shared .align 16 .b8 tl_shared[N];` in the PTX: ptxas and
//                 the driver know its size (ptxas -v "N bytes smem", CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
//                 and the launch passes sharedMemBytes 0;
//   above 48 KB   ptxas refuses a static array ("uses too much shared data (0x40000 bytes,
//                 0xc000 max)"), so the array is dynamic, `.extern .shared .align 16 .b8 tl_shared[];`
//                 with no size: the launch raises the kernel's limit to N
//                 (cuFuncSetAttribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) and passes N as
//                 cuLaunchKernel's sharedMemBytes. ptxas then reports 0 bytes smem.
//
// 48 KB (0xc000) is ptxas' static limit on every architecture tl-ptx targets; what a block may
// use at most with dynamic memory is the GPU's opt-in limit (GpuSpec::maxSharedPerBlock, 227 KB
// on the H200), which the thread stage checks (stages/thread/SharedMemory.cpp) before any of this.
// Used by CodegenShared.cpp (the declaration), JitCache.cpp (an entry's check), CudaRuntime.cpp
// and main.cpp (the launch) and Results.cpp (static and dynamic bytes in the results file).
#pragma once

#include <cstdint>

namespace tl::ptx {

inline constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;  // 0xc000: ptxas' static .shared limit

// True when a block of `sharedBytes` gets its shared memory as dynamic shared memory.
inline bool usesDynamicShared(int64_t sharedBytes) { return sharedBytes > kMaxStaticSharedBytes; }
// The bytes the PTX declares statically, and the bytes the launch passes as sharedMemBytes.
inline int64_t staticSharedBytes(int64_t sharedBytes) { return usesDynamicShared(sharedBytes) ? 0 : sharedBytes; }
inline int64_t dynamicSharedBytes(int64_t sharedBytes) { return usesDynamicShared(sharedBytes) ? sharedBytes : 0; }

}  // namespace tl::ptx

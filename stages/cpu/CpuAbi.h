// The contract between the code tl-cpu generates (CpuCodegen.cpp) and the runtime that calls it
// (CpuRuntime.cpp): the program function's signature, the context it reads, and the helpers it
// calls. Both sides include this one header, so the layout cannot drift apart.
//
// One call runs one program of the grid:
//
//   int32_t tl_cpu_program(const uint64_t* args, const CpuContext* ctx,
//                          int64_t pid0, int64_t pid1, int64_t pid2, uint8_t* scratch);
//
//   args     one 64-bit word per runtime parameter, in order: a pointer parameter's virtual
//            address (runtime/Memory.h: the address every stage sees), a scalar's bits in the
//            parameter's dtype (i1 as 0/1, i32 sign-extended, f32 in the low 32 bits; f16, bf16
//            and fp8 scalars as their f32 value's bits: the code keeps them in f32, rounded);
//   scratch  kScratchAlignment-aligned, CpuModule::scratchBytes long, private to the calling
//            thread: every tile of the program lives there at an offset fixed at compile time;
//   returns  0, or 1 when a helper recorded an error (the program stopped at that op).
//
// Pointers stay virtual addresses in the generated code (so address arithmetic, pointer tables
// and device_print see what tl-scalar sees); each access adds ctx->hostDelta. Every access is
// checked first (tl_cpu_check_access): nothing outside a buffer is ever read or written.
#pragma once

#include <cstdint>

namespace tl::cpu {

inline constexpr int64_t kScratchAlignment = 64;

struct CpuContext {
  int64_t hostDelta = 0;      // host address of a byte = its virtual address + hostDelta
  int64_t shadowDelta = 0;    // the store-tracking byte of an element = its virtual address + shadowDelta
  int64_t grid[3] = {1, 1, 1};
  int64_t maxIterations = 0;  // loop iterations (for and while, all loops) one program may run
  void* run = nullptr;        // the runtime's state (CpuRuntime.cpp); only helpers read it
};

// What tl_cpu_fail reports.
enum class CpuFault : int32_t {
  DivByZero = 0,      // integer div/rem by zero; `element` = the first zero divisor's index
  StepZero = 1,       // range() step is zero
  Budget = 2,         // the program ran past ctx->maxIterations loop iterations
  AssertFailed = 3,   // device_assert; `element` = the first false element
};

}  // namespace tl::cpu

extern "C" {
// Checks one load, store or atomic (op index `op` in CpuModule::ops): every active element's
// address (lo = the smallest, hiEnd = the largest + element bytes, misaligned = the OR of the
// addresses' low bits) must lie in one buffer of the pointee's dtype. When that quick test
// fails it looks at each element of ptrs[0..n) (mask may be null: all active) in order and
// records the first bad one with tl-block's message. Returns 0 (fine) or 1 (error recorded).
int32_t tl_cpu_check_access(const tl::cpu::CpuContext* ctx, int32_t op, uint64_t lo, uint64_t hiEnd, uint64_t misaligned,
                            const uint64_t* ptrs, const uint8_t* mask, int64_t n, int64_t pid0, int64_t pid1, int64_t pid2);
// The quick test of tl_cpu_check_access alone, recording nothing: 0 when nothing is active or
// [lo, hiEnd) lies in one buffer of the pointee's dtype with misaligned = 0; else 1.
int32_t tl_cpu_quick_check(const tl::cpu::CpuContext* ctx, int32_t op, uint64_t lo, uint64_t hiEnd, uint64_t misaligned);
// Records a fault (CpuFault) of op `op` at element `element` (-1: none). Returns 1.
int32_t tl_cpu_fail(const tl::cpu::CpuContext* ctx, int32_t op, int32_t fault, int64_t element, int64_t pid0, int64_t pid1,
                    int64_t pid2);
// Atomics, element by element in row-major order, indivisible against every thread: out[i] =
// old value (0 where mask is 0). vals / cmp hold the elements in their storage (f32 as float,
// i32, i64); the addresses were checked by tl_cpu_check_access.
void tl_cpu_atomic(const tl::cpu::CpuContext* ctx, int32_t op, const uint64_t* ptrs, const void* vals, const void* cmp,
                   const uint8_t* mask, void* out, int64_t n);
// device_print of op `op`: operand k's elements at values[k] (their storage), as tl-scalar
// prints them; the lines are kept per program and printed in program order after the run.
void tl_cpu_print(const tl::cpu::CpuContext* ctx, int32_t op, const void* const* values, int64_t pid0, int64_t pid1,
                  int64_t pid2);
// fp8 (dtype = tl::DType's value): decode a byte, encode a float (runtime/Fp8.h's rounding).
float tl_cpu_fp8_to_float(uint8_t bits, int32_t dtype);
uint8_t tl_cpu_float_to_fp8(float v, int32_t dtype);
}
